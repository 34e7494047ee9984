/* The hdmf layer: object ids, typed groups, scalars, references, links,
 * DynamicTable (plain, ragged, region columns) and the schema copy. */
#include <stdio.h>
#include <stdlib.h>

#include "hdmf/hdmf.h"
#include "test.h"
#include "util/json.h"

static char tmp[1024];

static nz_store *fresh_store(const char *name)
{
	nz_store *st = NULL;
	snprintf(tmp, sizeof tmp, "%s/hdmf_%s.zarr", getenv("NZ_TMP") ? getenv("NZ_TMP") : "/tmp",
		 name);
	nz_test_rm_rf(tmp);
	ASSERT_OK(nz_store_open_dir(&st, tmp, NZ_STORE_CREATE));
	ASSERT_OK(nz_group_create(st, ""));
	return st;
}

/* The .zattrs of `path` parsed (caller decrefs). */
static json_t *attrs_of(nz_store *st, const char *path)
{
	char *text = NULL;
	json_t *j = NULL;
	ASSERT_OK(nz_attrs_read(&text, st, path));
	ASSERT_OK(nz__json_parse(&j, text, strlen(text), path, 0));
	nz_free(text);
	return j;
}

static const char *str_at(json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

static int is_uuid4(const char *s)
{
	if (!s || strlen(s) != 36 || s[14] != '4' || !strchr("89ab", s[19]))
		return 0;
	for (int i = 0; i < 36; i++)
		if ((i == 8 || i == 13 || i == 18 || i == 23) ? s[i] != '-'
							      : !strchr("0123456789abcdef", s[i]))
			return 0;
	return 1;
}

static void test_uuids(void)
{
	nz__hdmf a, b, r;
	char x[NZ_HDMF_OID_LEN], y[NZ_HDMF_OID_LEN];
	ASSERT_OK(nz__hdmf_init(&a, NULL, 7, NULL));
	ASSERT_OK(nz__hdmf_init(&b, NULL, 7, NULL));
	ASSERT_OK(nz__hdmf_init(&r, NULL, 0, NULL));
	ASSERT(is_uuid4(a.root_oid));
	ASSERT_EQ_STR(a.root_oid, b.root_oid); /* seeded: reproducible */
	ASSERT_OK(nz__hdmf_uuid4(&a, x));
	ASSERT_OK(nz__hdmf_uuid4(&b, y));
	ASSERT_EQ_STR(x, y);
	ASSERT(strcmp(x, a.root_oid) != 0);
	ASSERT(is_uuid4(r.root_oid));
	ASSERT_OK(nz__hdmf_uuid4(&r, x));
	ASSERT_OK(nz__hdmf_uuid4(&r, y));
	ASSERT(is_uuid4(x) && strcmp(x, y) != 0); /* random ids differ */
}

static void test_groups_scalars_links(void)
{
	nz_store *st = fresh_store("groups");
	nz__hdmf h;
	char oid[NZ_HDMF_OID_LEN];
	json_t *g = json_object(), *j, *links;
	nz_array *a = NULL;
	uint64_t idx[1] = {0};
	double v = 0;
	nz_vlen *vl = NULL;

	ASSERT_OK(nz__hdmf_init(&h, st, 1, NULL));
	ASSERT_OK(nz__hdmf_set_type(g, &h, "core", "Device", NULL, oid));
	ASSERT_OK(nz__hdmf_add_link(g, "device", "/general/devices/probe0"));
	ASSERT_OK(nz__hdmf_add_link(g, "other", "/x"));
	ASSERT_OK(nz__hdmf_group(&h, "general/devices/probe0", g));
	json_decref(g);
	j = attrs_of(st, "general/devices/probe0");
	ASSERT_EQ_STR(str_at(j, "neurodata_type"), "Device");
	ASSERT_EQ_STR(str_at(j, "namespace"), "core");
	ASSERT_EQ_STR(str_at(j, "object_id"), oid);
	links = json_object_get(j, "zarr_link");
	ASSERT_EQ_INT(json_array_size(links), 2);
	ASSERT_EQ_STR(str_at(json_array_get(links, 0), "path"), "/general/devices/probe0");
	ASSERT_EQ_STR(str_at(json_array_get(links, 0), "source"), ".");
	ASSERT_EQ_STR(str_at(json_array_get(links, 1), "name"), "other");
	json_decref(j);
	ASSERT_EQ_INT(nz_group_exists(st, "general/devices"), 1);

	/* scalar float: shape [1], "<f8", zarr_dtype scalar, extra attrs kept */
	g = json_pack("{s:f, s:s}", "rate", 30000.0, "unit", "seconds");
	ASSERT_OK(nz__hdmf_scalar_f64(&h, "ts/starting_time", 0.25, g));
	json_decref(g);
	ASSERT_OK(nz_array_open(&a, st, "ts/starting_time"));
	ASSERT_EQ_INT(nz_array_ndim(a), 1);
	ASSERT_EQ_U64(nz_array_shape(a)[0], 1);
	ASSERT_EQ_STR(nz_array_dtype(a), "<f8");
	ASSERT_OK(nz_array_read_chunk(a, NULL, idx, &v, sizeof v));
	ASSERT(v == 0.25);
	nz_array_free(a);
	j = attrs_of(st, "ts/starting_time");
	ASSERT_EQ_STR(str_at(j, "zarr_dtype"), "scalar");
	ASSERT(json_real_value(json_object_get(j, "rate")) == 30000.0);
	json_decref(j);

	/* scalar text (vlen-utf8) and datetime (vlen-bytes) */
	ASSERT_OK(nz__hdmf_scalar_text(&h, "identifier", "id-\xc3\xa9", NZ_OBJECT_VLEN_UTF8, NULL));
	ASSERT_OK(nz__hdmf_scalar_text(&h, "t0", "2024-01-02T03:04:05Z", NZ_OBJECT_VLEN_BYTES, NULL));
	ASSERT_OK(nz_array_open(&a, st, "identifier"));
	ASSERT_EQ_INT(nz_array_object_codec(a), NZ_OBJECT_VLEN_UTF8);
	ASSERT_OK(nz_array_read_chunk_vlen(&vl, a, idx));
	ASSERT_EQ_STR(vl->items[0], "id-\xc3\xa9");
	nz_vlen_free(vl);
	nz_array_free(a);
	ASSERT_OK(nz_array_open(&a, st, "t0"));
	ASSERT_EQ_INT(nz_array_object_codec(a), NZ_OBJECT_VLEN_BYTES);
	nz_array_free(a);
	j = attrs_of(st, "t0");
	ASSERT_EQ_STR(str_at(j, "zarr_dtype"), "scalar");
	json_decref(j);

	/* dtype names hdmf writes into zarr_dtype */
	ASSERT_EQ_STR(nz__hdmf_dtype_name("<f4"), "float32");
	ASSERT_EQ_STR(nz__hdmf_dtype_name("|b1"), "bool_");
	ASSERT(nz__hdmf_dtype_name(">i2") == NULL);
	nz_store_free(st);
}

static void test_table(void)
{
	nz_store *st = fresh_store("table");
	nz__hdmf h;
	nz__hdmf_table *t = NULL;
	const char *loc[] = {"CA1", "CA3", "DG"};
	double x[] = {1, 2, 3}, spikes[] = {0.1, 0.2, 0.3, 0.4};
	uint64_t ends[] = {1, 1, 4}, bad_ends[] = {2, 1, 4};
	int64_t rows[] = {2, 0, 1};
	json_t *refs[3], *j, *col;
	char target_oid[NZ_HDMF_OID_LEN], table_oid[NZ_HDMF_OID_LEN];
	nz_array *a = NULL;
	nz_vlen *vl = NULL;
	uint64_t idx[1] = {0};
	uint64_t got[3];

	ASSERT_OK(nz__hdmf_init(&h, st, 3, NULL));
	ASSERT_OK(nz__hdmf_uuid4(&h, target_oid));
	for (int i = 0; i < 3; i++)
		ASSERT((refs[i] = nz__hdmf_ref(&h, "/general/extracellular_ephys/shank0", target_oid)));
	ASSERT_OK(nz__hdmf_table_begin(&t, &h, "units", "core", "Units", "test units", NULL, 3));
	snprintf(table_oid, sizeof table_oid, "%s", nz__hdmf_table_oid(t));
	ASSERT_OK(nz__hdmf_table_col_text(t, "location", "where", loc));
	ASSERT_OK(nz__hdmf_table_col(t, "x", "x pos", "<f8", "float", x, sizeof x));
	ASSERT_OK(nz__hdmf_table_col_refs(t, "group", "the group", refs));
	ASSERT_ERR(NZ_EINVAL, nz__hdmf_table_col_ragged_f64(t, "bad", "d", spikes, 4, bad_ends));
	ASSERT_CONTAINS(nz_error_last()->message, "bad");
	ASSERT_OK(nz__hdmf_table_col_ragged_f64(t, "spike_times", "spikes", spikes, 4, ends));
	ASSERT_OK(nz__hdmf_table_col_region(t, "electrodes", "rows", rows, "/units", table_oid));
	ASSERT_OK(nz__hdmf_table_end(t, NULL));
	for (int i = 0; i < 3; i++)
		json_decref(refs[i]);

	j = attrs_of(st, "units");
	col = json_object_get(j, "colnames");
	ASSERT_EQ_INT(json_array_size(col), 5); /* the index column is not listed */
	ASSERT_EQ_STR(json_string_value(json_array_get(col, 3)), "spike_times");
	ASSERT_EQ_STR(json_string_value(json_array_get(col, 4)), "electrodes");
	ASSERT_EQ_STR(str_at(j, "object_id"), table_oid);
	ASSERT_EQ_STR(str_at(j, "description"), "test units");
	json_decref(j);

	j = attrs_of(st, "units/spike_times_index");
	ASSERT_EQ_STR(str_at(j, "neurodata_type"), "VectorIndex");
	ASSERT_EQ_STR(str_at(j, "zarr_dtype"), "uint64");
	col = json_object_get(j, "target");
	ASSERT_EQ_STR(str_at(col, "zarr_dtype"), "object");
	ASSERT_EQ_STR(str_at(json_object_get(col, "value"), "path"), "/units/spike_times");
	ASSERT_EQ_STR(str_at(json_object_get(col, "value"), "source_object_id"), h.root_oid);
	json_decref(j);
	ASSERT_OK(nz_array_open(&a, st, "units/spike_times_index"));
	ASSERT_OK(nz_array_read_chunk(a, NULL, idx, got, sizeof got));
	ASSERT_MEM_EQ(got, ends, sizeof ends);
	nz_array_free(a);

	j = attrs_of(st, "units/electrodes");
	ASSERT_EQ_STR(str_at(j, "neurodata_type"), "DynamicTableRegion");
	ASSERT_EQ_STR(str_at(json_object_get(json_object_get(j, "table"), "value"), "object_id"),
		      table_oid);
	json_decref(j);

	/* references as json2 elements a non-Python reader can decode */
	ASSERT_OK(nz_array_open(&a, st, "units/group"));
	ASSERT_EQ_INT(nz_array_object_codec(a), NZ_OBJECT_JSON2);
	ASSERT_OK(nz_array_read_chunk_vlen(&vl, a, idx));
	ASSERT_EQ_INT(vl->count, 3);
	ASSERT_CONTAINS(vl->items[2], target_oid);
	ASSERT_CONTAINS(vl->items[2], "\"path\":\"/general/extracellular_ephys/shank0\"");
	nz_vlen_free(vl);
	nz_array_free(a);

	j = attrs_of(st, "units/id");
	ASSERT_EQ_STR(str_at(j, "neurodata_type"), "ElementIdentifiers");
	ASSERT_EQ_STR(str_at(j, "zarr_dtype"), "int64");
	json_decref(j);
	nz_store_free(st);
}

static void test_specs(void)
{
	nz_store *st = fresh_store("specs");
	nz__hdmf h;
	json_t *root = json_object();
	char path[1024];
	const char *data = getenv("NZ_REF");
	nz_array *a = NULL;

	ASSERT_OK(nz__hdmf_init(&h, st, 5, NULL));
	ASSERT_ERR(NZ_ENOTFOUND, nz__hdmf_copy_specs(&h, "/nonexistent/file.nwb", root));
	ASSERT_CONTAINS(nz_error_last()->message, "/nonexistent/file.nwb");
	/* an HDF5 file without /specifications, and a non-HDF5 file */
	snprintf(path, sizeof path, "%s/raw/reference_ephys.int16", data);
	ASSERT_ERR(NZ_EFORMAT, nz__hdmf_copy_specs(&h, path, root));
	ASSERT_CONTAINS(nz_error_last()->message, "reference_ephys.int16");
	ASSERT(!json_object_get(root, ".specloc"));

	snprintf(path, sizeof path, "%s/nwb/reference.nwb", data);
	ASSERT_OK(nz__hdmf_copy_specs(&h, path, root));
	ASSERT_EQ_STR(str_at(root, ".specloc"), "specifications");
	ASSERT_OK(nz_array_open(&a, st, "specifications/core/2.6.0-alpha/namespace"));
	ASSERT_EQ_INT(nz_array_object_codec(a), NZ_OBJECT_JSON2);
	nz_array_free(a);
	ASSERT_OK(nz_array_open(&a, st, "specifications/hdmf-common/1.8.0/table"));
	nz_array_free(a);
	json_decref(root);
	nz_store_free(st);
}

int main(void)
{
	test_uuids();
	test_groups_scalars_links();
	test_table();
	test_specs();
	return 0;
}
