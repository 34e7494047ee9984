/* export with copy_links (docs/format.md, "External links") on HDF5 files
 * written here: what the external links lead to is copied in at the links'
 * paths (values, attributes, object ids), a second link to a group and a
 * link to a typed dataset of the source become soft links, untyped data is
 * copied at each external link, a soft link inside a copy to
 * an object outside it is copied too, references inside a copy name the
 * copies, nothing is written beside the output, verify accepts the result
 * against the source (following its external links), in v3 and v2. Loud
 * failures before anything is written: a missing linked file, a reference
 * to an object no copy holds, a circle of external links. Version-3 options
 * (without copy_links) still export the linked file beside. */
#include <hdf5.h>
#include <sys/stat.h>
#include <unistd.h>

#include "h5test.h"
#include "oom.h"

static void ints(hid_t loc, const char *name, int32_t first)
{
	int32_t v[5];
	hsize_t five = 5;
	hid_t s = H5Screate_simple(1, &five, NULL), d;
	for (int i = 0; i < 5; i++)
		v[i] = first + i;
	d = H5Dcreate2(loc, name, H5T_STD_I32LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	ASSERT(d >= 0 && H5Dwrite(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
	H5Dclose(d);
	H5Sclose(s);
}

/* An object reference to `target` as attribute `name` of `obj` (one_ds = 0)
 * or as a one-element dataset `name` in `obj` (one_ds = 1). */
static void ref(hid_t fid, hid_t obj, const char *name, const char *target, int one_ds)
{
	hobj_ref_t r;
	hsize_t one = 1;
	hid_t s = H5Screate_simple(1, &one, NULL), o;
	ASSERT(H5Rcreate(&r, fid, target, H5R_OBJECT, -1) >= 0);
	o = one_ds ? H5Dcreate2(obj, name, H5T_STD_REF_OBJ, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)
		   : H5Acreate2(obj, name, H5T_STD_REF_OBJ, s, H5P_DEFAULT, H5P_DEFAULT);
	ASSERT(o >= 0);
	ASSERT((one_ds ? H5Dwrite(o, H5T_STD_REF_OBJ, H5S_ALL, H5S_ALL, H5P_DEFAULT, &r)
		       : H5Awrite(o, H5T_STD_REF_OBJ, &r)) >= 0);
	if (one_ds)
		H5Dclose(o);
	else
		H5Aclose(o);
	H5Sclose(s);
}

/* linked.h5: /g (the copied group: a dataset, a reference dataset and a
 * reference attribute naming it, a typed group /g/sub, a soft link out of /g, external links back
 * into the source's untyped and typed datasets), /other (reached only through /g/out), /bad (a
 * reference to /other: not copied when /bad alone is linked). */
static void make_linked(const char *path)
{
	hid_t fid = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), g;
	ASSERT(fid >= 0);
	str_attr(fid, "object_id", "00000000-0000-4000-8000-0000000000a0");
	g = H5Gcreate2(fid, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	str_attr(g, "object_id", "00000000-0000-4000-8000-0000000000a1");
	ints(g, "d", 10);
	ref(fid, g, "r", "/g/d", 1);
	ref(fid, g, "points_at", "/g/d", 0);
	ASSERT(H5Lcreate_soft("/other", g, "out", H5P_DEFAULT, H5P_DEFAULT) >= 0);
	{
		hid_t sub = H5Gcreate2(g, "sub", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
		str_attr(sub, "object_id", "00000000-0000-4000-8000-0000000000a2");
		ints(sub, "v", 20);
		H5Gclose(sub);
	}
	ASSERT(H5Lcreate_external("src.h5", "/data", g, "back", H5P_DEFAULT, H5P_DEFAULT) >= 0);
	ASSERT(H5Lcreate_external("src.h5", "/typed", g, "typed_back", H5P_DEFAULT, H5P_DEFAULT) >= 0);
	H5Gclose(g);
	ints(fid, "other", 100);
	g = H5Gcreate2(fid, "bad", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	ref(fid, g, "to_other", "/other", 0);
	H5Gclose(g);
	/* two files linking to each other's links: a circle */
	ASSERT(H5Lcreate_external("loop.h5", "/l", fid, "l", H5P_DEFAULT, H5P_DEFAULT) >= 0);
	H5Fclose(fid);
}

/* An NWB file (nwb_version) with an untyped and a typed (object_id)
 * dataset and external links named by `links` ("name=file:path" entries). */
static void make_src(const char *path, const char *const *links)
{
	hid_t fid = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	ASSERT(fid >= 0);
	str_attr(fid, "object_id", "00000000-0000-4000-8000-000000000000");
	str_attr(fid, "nwb_version", "2.6.0");
	ints(fid, "data", 0);
	ints(fid, "typed", 50);
	{
		hid_t d = H5Dopen2(fid, "typed", H5P_DEFAULT);
		str_attr(d, "object_id", "00000000-0000-4000-8000-000000000050");
		H5Dclose(d);
	}
	for (; *links; links++) {
		char name[64], file[64], obj[64];
		ASSERT(sscanf(*links, "%63[^=]=%63[^:]:%63s", name, file, obj) == 3);
		ASSERT(H5Lcreate_external(file, obj, fid, name, H5P_DEFAULT, H5P_DEFAULT) >= 0);
	}
	H5Fclose(fid);
}

static void read_ints(const char *store_path, const char *path, int32_t first)
{
	nz_store *st = NULL;
	nz_array *a = NULL;
	uint64_t start = 0, count = 5;
	int32_t v[5];
	ASSERT_OK(nz_store_open_dir(&st, store_path, NZ_STORE_READ));
	ASSERT_OK(nz_array_open(&a, st, path));
	ASSERT_OK(nz_array_read_region(a, &start, &count, v, sizeof v));
	for (int i = 0; i < 5; i++)
		ASSERT_EQ_INT(v[i], first + i);
	nz_array_free(a);
	nz_store_free(st);
}

static char *attrs(const char *store_path, const char *path)
{
	nz_store *st = NULL;
	char *json = NULL;
	ASSERT_OK(nz_store_open_dir(&st, store_path, NZ_STORE_READ));
	ASSERT_OK(nz_attrs_read(&json, st, path));
	nz_store_free(st);
	/* without blanks, whatever the writer's JSON style */
	for (char *r = json, *w = json;; r++)
		if (*r != ' ' && *r != '\n' && !(*w++ = *r))
			break;
	return json;
}

static void check_copy(const char *out, int fmt)
{
	char *root = attrs(out, ""), *g = attrs(out, "e");
	nz_store *st = NULL;
	nz_array *a = NULL;
	nz_vlen *v = NULL;
	uint64_t zero = 0;

	/* The copies: values and object ids of the linked file, at the link's path. */
	read_ints(out, "e/d", 10);
	read_ints(out, "e/out", 100); /* a soft link out of the copied group: copied too */
	ASSERT_CONTAINS(g, "00000000-0000-4000-8000-0000000000a1");
	/* Untyped data is copied at every external link to it (as hdmf
	 * does), even into the source; a second link to the group /g and a
	 * link to a typed dataset of the source become soft links. */
	read_ints(out, "e/back", 0);
	ASSERT_CONTAINS(root, fmt == 3 ? "\"_LINKS\"" : "\"zarr_link\"");
	ASSERT_CONTAINS(root, "\"name\":\"f\"");
	ASSERT_CONTAINS(root, "\"path\":\"/e\"");
	ASSERT_CONTAINS(g, "\"name\":\"typed_back\"");
	ASSERT_CONTAINS(g, "\"path\":\"/typed\"");
	ASSERT(!strstr(g, "\"name\":\"back\""));
	/* A whole file linked to: its root's members below the link. */
	read_ints(out, "w/x", 30);
	/* A part of /g copied before (at /a) is linked to, not copied twice. */
	read_ints(out, "a/v", 20);
	ASSERT_CONTAINS(g, "\"name\":\"sub\"");
	ASSERT_CONTAINS(g, "\"path\":\"/a\"");
	/* References inside the copy name the copy. */
	ASSERT_CONTAINS(g, "\"path\":\"/e/d\"");
	ASSERT(!strstr(g, "\"/g/d\""));
	ASSERT_OK(nz_store_open_dir(&st, out, NZ_STORE_READ));
	ASSERT_OK(nz_array_open(&a, st, "e/r"));
	ASSERT_OK(nz_array_read_chunk_vlen(&v, a, &zero));
	ASSERT_EQ_INT(v->count, 1);
	ASSERT_CONTAINS(v->items[0], "/e/d");
	nz_vlen_free(v);
	nz_array_free(a);
	nz_store_free(st);
	free(root);
	free(g);
}

/* The allocation-failure sweep (tests/oom.h) over an export with
 * copy_links and its verify: every refused allocation ends in NZ_ENOMEM,
 * nothing left looks complete. */
static char oom_src[1200], oom_dst[1200];
static int oom_export_err;
static int oom_run(void *ctx)
{
	nz_export_opts o = NZ_EXPORT_OPTS_INIT;
	(void)ctx;
	o.copy_links = 1;
	o.jobs = 1;
	if ((oom_export_err = nz_export_hdf5(oom_src, oom_dst, &o)) < 0)
		return oom_export_err;
	return nz_verify(NULL, oom_src, oom_dst, NULL);
}
/* (a verify's failure leaves the store it compared as it was: complete) */
static void oom_failed(void *ctx, long n)
{
	if (oom_export_err < 0)
		nz_oom_nwb_not_complete(ctx, n);
}
static void oom_reset(void *ctx)
{
	nz_test_rm_rf(ctx);
}

int main(void)
{
	/* a (first in name order) copies /g/sub; e copies /g with sub a link to /a */
	static const char *const good[] = { "a=linked.h5:/g/sub", "e=linked.h5:/g", "f=linked.h5:/g",
					    "w=whole.h5:/", NULL };
	static const char *const missing[] = { "m=nothere.h5:/x", NULL };
	static const char *const bad[] = { "b=linked.h5:/bad", NULL };
	static const char *const loop[] = { "c=linked.h5:/l", NULL };
	nz_export_opts o = NZ_EXPORT_OPTS_INIT;
	nz_export_stats st;
	char src[1200], out[1200];
	hid_t fid;

	h5test_folder("test_export_links");
	snprintf(src, sizeof src, "%s", tpath("src.h5"));
	make_linked(tpath("linked.h5"));
	make_src(src, good);
	/* whole.h5: a file linked to as a whole (its root) */
	fid = H5Fcreate(tpath("whole.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	ASSERT(fid >= 0);
	ints(fid, "x", 30);
	H5Fclose(fid);
	/* loop.h5:/l leads back to linked.h5:/l */
	fid = H5Fcreate(tpath("loop.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	ASSERT(fid >= 0 && H5Lcreate_external("linked.h5", "/l", fid, "l", H5P_DEFAULT, H5P_DEFAULT) >= 0);
	H5Fclose(fid);

	o.copy_links = 1;
	o.jobs = 2;
	o.stats = &st;
	for (int fmt = 3; fmt >= 2; fmt--) {
		o.zarr_format = fmt;
		snprintf(out, sizeof out, "%s", tpath(fmt == 3 ? "v3/src.nwb.zarr" : "v2/src.nwb.zarr"));
		ASSERT(mkdir(tpath(fmt == 3 ? "v3" : "v2"), 0755) == 0);
		ASSERT_OK(nz_export_hdf5(src, out, &o));
		ASSERT_EQ_U64(st.links, 3); /* f, e/sub and e/typed_back */
		check_copy(out, fmt);
		ASSERT(access(tpath(fmt == 3 ? "v3/linked.h5.zarr" : "v2/linked.h5.zarr"), F_OK) != 0);
		ASSERT_OK(nz_verify(NULL, src, out, NULL));
		ASSERT_OK(nz_verify(NULL, out, src, NULL));
	}

	/* A missing linked file: both files named, nothing written. */
	make_src(tpath("src_missing.h5"), missing);
	ASSERT_ERR(NZ_EFORMAT, nz_export_hdf5(tpath("src_missing.h5"), tpath("missing.zarr"), &o));
	ASSERT_CONTAINS(nz_error_last()->message, "src_missing.h5");
	ASSERT_CONTAINS(nz_error_last()->message, "nothere.h5");
	ASSERT(access(tpath("missing.zarr"), F_OK) != 0);

	/* A reference out of the copy: no copy holds its target. */
	make_src(tpath("src_bad.h5"), bad);
	ASSERT_ERR(NZ_EFORMAT, nz_export_hdf5(tpath("src_bad.h5"), tpath("bad.zarr"), &o));
	ASSERT_CONTAINS(nz_error_last()->message, "'/other'");
	ASSERT_CONTAINS(nz_error_last()->message, "linked.h5");
	ASSERT(access(tpath("bad.zarr"), F_OK) != 0);

	/* A circle of external links. */
	make_src(tpath("src_loop.h5"), loop);
	ASSERT_ERR(NZ_EFORMAT, nz_export_hdf5(tpath("src_loop.h5"), tpath("loop.zarr"), &o));
	ASSERT_CONTAINS(nz_error_last()->message, "circle");
	ASSERT(access(tpath("loop.zarr"), F_OK) != 0);

	/* Version-3 options end before copy_links: the linked file is
	 * exported beside, as before. */
	o.version = 3;
	ASSERT(mkdir(tpath("old"), 0755) == 0);
	ASSERT_OK(nz_export_hdf5(src, tpath("old/src.nwb.zarr"), &o));
	ASSERT(access(tpath("old/linked.h5.zarr"), F_OK) == 0);

	snprintf(oom_src, sizeof oom_src, "%s", src);
	snprintf(oom_dst, sizeof oom_dst, "%s", tpath("oom.zarr"));
	{
		nz_oom_sweep sw = {"export --copy-links + verify", oom_run, oom_reset, oom_failed,
				   oom_dst, 40, 120, 1, 0};
		ASSERT(nz_oom_run_sweep(&sw) > 100);
	}
	printf("ok\n");
	return 0;
}
