/* NWBFile: creation (root datasets written at once), metadata objects
 * (subject, devices, electrode groups, processing modules) and close. */
/* nftw is an XSI interface. */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "codec/codec.h"
#include "nwb/nwb_impl.h"
#include "store/replace.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/utf8.h"

int nz__nwb_check_name(const char *name, const char *what)
{
	if (!name || !*name || strchr(name, '/') || name[0] == '.' || strlen(name) > 255)
		return nz__error_set(NZ_EINVAL, "%s name '%s' is not usable (empty, '/', leading '.', "
				     "or longer than 255)", what, name ? name : "(null)");
	return 0;
}

/* YYYY-MM-DDTHH:MM[:SS[.f+]] then Z or +HH:MM / -HH:MM (or +HHMM). */
int nz__nwb_check_time(const char *t, const char *what)
{
	static const char pat[] = "dddd-dd-ddTdd:dd";
	const char *p = t;
	if (!t)
		return nz__error_set(NZ_EINVAL, "%s is missing", what);
	for (size_t i = 0; pat[i]; i++, p++) {
		int ok = pat[i] == 'd' ? (*p >= '0' && *p <= '9') : *p == pat[i];
		if (!ok)
			goto bad;
	}
	if (p[0] == ':' && p[1] >= '0' && p[1] <= '9' && p[2] >= '0' && p[2] <= '9') {
		p += 3;
		if (*p == '.' && p[1] >= '0' && p[1] <= '9')
			for (p++; *p >= '0' && *p <= '9'; p++)
				;
	}
	if (p[0] == 'Z' && p[1] == '\0')
		return 0;
	if ((p[0] == '+' || p[0] == '-') && isdigit((unsigned char)p[1]) &&
	    isdigit((unsigned char)p[2])) {
		const char *m = p + 3 + (p[3] == ':');
		if (isdigit((unsigned char)m[0]) && isdigit((unsigned char)m[1]) && m[2] == '\0')
			return 0;
	}
bad:
	return nz__error_set(NZ_EINVAL,
			     "%s '%s' is not an ISO-8601 date-time with a time zone "
			     "(e.g. 2024-01-02T03:04:05-08:00 or 2024-01-02T11:04:05Z)",
			     what, t);
}

int nz_nwb_check_time(const char *t, const char *what)
{
	return nz__nwb_check_time(t, what ? what : "time");
}

int nz__nwb_check_open(const nz_nwb *f, const char *what)
{
	if (!f)
		return nz__error_set(NZ_EINVAL, "%s: no file handle", what);
	if (f->closed)
		return nz__error_set(NZ_EINVAL, "%s: file '%s' is already closed", what, f->path);
	return 0;
}

int nz__nwb_table_oid(nz_nwb *f)
{
	if (f->table_oid_drawn)
		return 0;
	f->table_oid_drawn = 1;
	return nz__hdmf_uuid4(&f->h, f->table_oid);
}

long nz__nwb_find(char *const *list, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(list[i], name) == 0)
			return (long)i;
	return -1;
}

int nz__nwb_set_str(json_t *attrs, const char *key, const char *value)
{
	unsigned long failures = nz__alloc_failures();
	if (!value)
		return 0;
	/* json_string refuses text that is not UTF-8, and fails when out of
	 * memory: only the allocator can tell which. */
	if (json_object_set_new(attrs, key, json_string(value)) != 0)
		return nz__alloc_failures() != failures
			       ? nz__error_set(NZ_ENOMEM, "out of memory setting attribute '%s'", key)
			       : nz__error_set(NZ_EINVAL, "attribute '%s': not valid UTF-8 text", key);
	return 0;
}

int nz__nwb_set_real(json_t *attrs, const char *key, double v)
{
	if (json_object_set_new(attrs, key, json_real(v)) != 0)
		return nz__error_set(NZ_ENOMEM, "out of memory setting attribute '%s'", key);
	return 0;
}

static int push(char ***list, size_t *n, const char *name)
{
	char **l = nz__realloc(*list, (*n + 1) * sizeof **list);
	if (!l)
		return nz__error_set(NZ_ENOMEM, "out of memory adding '%s'", name);
	*list = l;
	if (!(l[*n] = nz__strdup(name)))
		return nz__error_set(NZ_ENOMEM, "out of memory adding '%s'", name);
	(*n)++;
	return 0;
}

/* The NWBFile text of nz_nwb_opts and where it goes: written by write_root,
 * checked up front by check_text. */
typedef struct text_field {
	const char *path, *value;
} text_field;
typedef struct text_list {
	const char *path;
	const char *dim; /* the NWB schema's dimension name (v3 _ARRAY_DIMENSIONS) */
	const char *const *items;
	size_t n;
} text_list;
#define N_TEXT 7
#define N_LISTS 3

static void text_of(text_field *scalars, text_list *lists, const nz_nwb_opts *o)
{
	const text_field s[N_TEXT] = {
		{"identifier", o->identifier},
		{"session_description", o->session_description},
		{"general/lab", o->lab},
		{"general/institution", o->institution},
		{"general/experiment_description", o->experiment_description},
		{"general/session_id", o->session_id},
		{"general/notes", o->notes},
	};
	const text_list l[N_LISTS] = {
		{"general/experimenter", "num_experimenters", o->experimenter, o->n_experimenter},
		{"general/keywords", "num_keywords", o->keywords, o->n_keywords},
		{"general/related_publications", "num_publications", o->related_publications,
		 o->n_related_publications},
	};
	memcpy(scalars, s, sizeof s);
	memcpy(lists, l, sizeof l);
}

static int write_root(nz_nwb *f, const nz_nwb_opts *o)
{
	text_field scalars[N_TEXT];
	text_list lists[N_LISTS];
	const char *groups[] = {"acquisition", "analysis", "general", "processing",
				"stimulus/presentation", "stimulus/templates"};
	const char *created = o->file_create_date; /* set by nz_nwb_create */
	const char *mods = "num_modifications";
	nz__hdmf_dset d = {0};
	int err;

	text_of(scalars, lists, o);
	for (size_t i = 0; i < sizeof groups / sizeof *groups; i++)
		if ((err = nz__hdmf_group(&f->h, groups[i], NULL)) < 0)
			return err;
	for (size_t i = 0; i < sizeof scalars / sizeof *scalars; i++)
		if (scalars[i].value && (err = nz__hdmf_scalar_text(&f->h, scalars[i].path,
								    scalars[i].value,
								    NZ_OBJECT_VLEN_UTF8, NULL)) < 0)
			return err;
	for (size_t i = 0; i < sizeof lists / sizeof *lists; i++) {
		d.dims = &lists[i].dim;
		if (lists[i].n && (err = nz__hdmf_text_list(&f->h, lists[i].path, lists[i].items,
							    lists[i].n, NZ_OBJECT_VLEN_UTF8,
							    &d)) < 0)
			return err;
	}
	d.dims = &mods;
	if ((err = nz__hdmf_scalar_text(&f->h, "session_start_time", o->session_start_time,
					NZ_OBJECT_VLEN_BYTES, NULL)) < 0 ||
	    (err = nz__hdmf_scalar_text(&f->h, "timestamps_reference_time",
					o->timestamps_reference_time ? o->timestamps_reference_time
								     : o->session_start_time,
					NZ_OBJECT_VLEN_BYTES, NULL)) < 0 ||
	    (err = nz__hdmf_text_list(&f->h, "file_create_date", &created, 1,
				      NZ_OBJECT_VLEN_BYTES, &d)) < 0)
		return err;
	return 0;
}

static int check_text(const nz_nwb_opts *o);

static int check_opts(const nz_nwb_opts *o)
{
	int err;
	if (!o || o->version != NZ_NWB_OPTS_VERSION)
		return nz__error_set(NZ_EINVAL, "nz_nwb_create: options missing or of another version");
	if (!o->identifier || !*o->identifier)
		return nz__error_set(NZ_EINVAL, "NWBFile identifier is required");
	if (!o->session_description || !*o->session_description)
		return nz__error_set(NZ_EINVAL, "NWBFile session_description is required");
	if ((err = nz__nwb_check_time(o->session_start_time, "session_start_time")) < 0)
		return err;
	if (o->timestamps_reference_time &&
	    (err = nz__nwb_check_time(o->timestamps_reference_time, "timestamps_reference_time")) < 0)
		return err;
	if (o->file_create_date &&
	    (err = nz__nwb_check_time(o->file_create_date, "file_create_date")) < 0)
		return err;
	if (o->zarr_format != 0 && o->zarr_format != 2 && o->zarr_format != 3)
		return nz__error_set(NZ_EINVAL, "zarr_format must be 2 or 3 (0 = 3), not %d", o->zarr_format);
	if (o->zarr_format != 2 && o->compressor && o->compressor->id &&
	    (strcmp(o->compressor->id, "lz4") == 0 || strcmp(o->compressor->id, "zlib") == 0))
		return nz__error_set(NZ_EUNSUPPORTED, "compressor '%s' has no Zarr v3 codec (use blosc, "
				     "zstd, gzip or none, or Zarr v2)", o->compressor->id);
	if (o->jobs < 0 || o->jobs > NZ_WRITE_MAX_JOBS)
		return nz__error_set(NZ_EINVAL, "jobs must be 0 (all cores) to %d, not %d",
				     NZ_WRITE_MAX_JOBS, o->jobs);
	return check_text(o);
}

/* Every string written as text must be UTF-8 (readers fail otherwise),
 * checked before the output is touched. */
static int check_text(const nz_nwb_opts *o)
{
	text_field one[N_TEXT];
	text_list lists[N_LISTS];
	char what[80];
	int err;
	text_of(one, lists, o);
	for (size_t i = 0; i < N_TEXT; i++) {
		snprintf(what, sizeof what, "NWBFile '/%s'", one[i].path);
		if ((err = nz__utf8_check(one[i].value, what)) < 0)
			return err;
	}
	for (size_t i = 0; i < N_LISTS; i++)
		for (size_t k = 0; k < lists[i].n; k++) {
			snprintf(what, sizeof what, "NWBFile '/%s' entry %zu", lists[i].path, k);
			if (!lists[i].items[k])
				return nz__error_set(NZ_EINVAL, "%s is NULL", what);
			if ((err = nz__utf8_check(lists[i].items[k], what)) < 0)
				return err;
		}
	return 0;
}

/* What would fail at close or in the first write is tried now, before the
 * output is touched: the compressor and --spec-from (read into memory and
 * dropped; nz_nwb_close reads it again). */
static int check_inputs(const nz_nwb_opts *o)
{
	nz_codec *c = NULL;
	nz_store *mem = NULL;
	nz__hdmf h;
	json_t *root = NULL;
	struct stat st;
	int err;
	if (o->compressor && (err = nz__codec_from_compressor(&c, o->compressor)) < 0)
		return nz__error_wrap("compressor");
	nz__codec_free(c);
	if (!o->spec_from)
		return 0;
	/* A FIFO or device would block libhdf5's open, or feed it anything. */
	if (stat(o->spec_from, &st) != 0)
		return nz__error_errno(errno, "spec_from: cannot open", o->spec_from);
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return nz__error_set(NZ_EINVAL, "spec_from '%s' is neither a file nor a directory",
				     o->spec_from);
	if (!(root = json_object())) {
		err = nz__error_set(NZ_ENOMEM, "out of memory checking '%s'", o->spec_from);
		goto done;
	}
	if ((err = nz_store_new_memory(&mem)) < 0 || (err = nz__hdmf_init(&h, mem, 1, NULL)) < 0 ||
	    (err = nz__hdmf_copy_specs(&h, o->spec_from, root)) < 0)
		goto done;
done:
	json_decref(root);
	nz_store_free(mem);
	if (err < 0)
		nz__error_wrap("spec_from '%s' cannot give the cached schema", o->spec_from);
	return err;
}

int nz_nwb_create(nz_nwb **out, const char *path, const nz_nwb_opts *o)
{
	nz_nwb *f = NULL;
	static const nz_compressor blosc = NZ_COMPRESSOR_INIT;
	nz_nwb_opts oc, old;
	uint64_t seed = 0;
	int err;
	*out = NULL;
	if (!path || !*path)
		return nz__error_set(NZ_EINVAL, "nz_nwb_create: no output path");
	/* A version-1 struct ends before write_stats, a version-2 one before
	 * zarr_format: both were written for Zarr v2. */
	if (o && (o->version == 1 || o->version == 2)) {
		memset(&old, 0, sizeof old);
		memcpy(&old, o, o->version == 1 ? offsetof(nz_nwb_opts, write_stats)
						: offsetof(nz_nwb_opts, zarr_format));
		old.version = NZ_NWB_OPTS_VERSION;
		old.zarr_format = 2;
		o = &old;
	}
	if ((err = check_opts(o)) < 0 || (err = check_inputs(o)) < 0)
		return err;
	if (!(f = nz__calloc(1, sizeof *f)) || !(f->path = nz__strdup(path)) ||
	    (o->spec_from && !(f->spec_from = nz__strdup(o->spec_from)))) {
		err = nz__error_set(NZ_ENOMEM, "out of memory creating '%s'", path);
		goto done;
	}
	if (!o->resume) {
		const char *keep[] = {o->spec_from, NULL};
		if ((err = nz__replace_begin(&f->replace, path, o->overwrite, NZ_INCOMPLETE_MARKER,
					     keep)) < 0)
			goto done;
	}
	f->zarr_format = o->zarr_format ? o->zarr_format : 3;
	f->data_compressor = o->compressor ? *o->compressor : blosc;
	f->wopts = (nz_write_opts)NZ_WRITE_OPTS_INIT;
	f->wopts.jobs = o->jobs;
	f->wopts.progress = o->progress;
	f->wopts.progress_ctx = o->progress_ctx;
	f->wopts.cancel_flag = o->cancel_flag;
	f->wopts.stats = o->write_stats;
	f->skip_series_data = o->skip_series_data;
	f->skip_finalise = o->skip_finalise;
	f->resume_info = o->resume_info;
	if (o->resume_info)
		memset(o->resume_info, 0, sizeof *o->resume_info);
	if ((err = nz__nwb_open_output(f, o, &seed)) < 0)
		goto done;
	oc = *o;
	oc.file_create_date = f->create_date; /* fixed now: a resume writes the same */
	if ((err = nz__hdmf_init_format(&f->h, f->store, seed, o->compressor, f->zarr_format)) < 0 ||
	    (err = nz_group_create(f->store, "")) < 0 || (err = write_root(f, &oc)) < 0)
		goto done;
	*out = f;
	f = NULL;
done:
	nz_nwb_free(f);
	return err;
}

void nz_nwb_free(nz_nwb *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n_devices; i++)
		nz__free(f->devices[i]);
	for (size_t i = 0; i < f->n_modules; i++)
		nz__free(f->modules[i]);
	for (size_t i = 0; i < f->n_groups; i++) {
		nz__free(f->groups[i].name);
		nz__free(f->groups[i].location);
	}
	for (size_t i = 0; i < f->n_rows; i++) {
		nz__free(f->rows[i].location);
		nz__free(f->rows[i].filtering);
	}
	nz__free(f->devices);
	nz__free(f->modules);
	nz__free(f->groups);
	nz__free(f->rows);
	nz__nwb_cols_free(f);
	nz__free(f->spec_from);
	nz__nwb_batch_end(f);
	nz_store_free(f->store);
	/* Not closed successfully: an old store set aside comes back. */
	nz__replace_abort(&f->replace);
	nz__free(f->path);
	nz__free(f);
}

/* ---- metadata objects ---------------------------------------------------- */

/* A typed group with string attributes: kv is key, value, ..., NULL (a
 * NULL value leaves its key out). */
static int typed_group(nz_nwb *f, const char *path, const char *type, const char *const *kv,
		       const char *link_name, const char *link_target, char *oid_out)
{
	json_t *attrs = json_object();
	int err = 0;
	if (!attrs)
		return nz__error_set(NZ_ENOMEM, "out of memory writing '/%s'", path);
	for (size_t i = 0; kv && kv[i]; i += 2)
		if ((err = nz__nwb_set_str(attrs, kv[i], kv[i + 1])) < 0)
			goto done;
	if (link_name && (err = nz__hdmf_add_link(attrs, link_name, link_target)) < 0)
		goto done;
	if ((err = nz__hdmf_set_type(attrs, &f->h, "core", type, NULL, oid_out)) < 0 ||
	    (err = nz__hdmf_group(&f->h, path, attrs)) < 0)
		goto done;
done:
	json_decref(attrs);
	if (err < 0)
		nz__error_wrap("writing %s '/%s'", type, path);
	return err;
}

int nz_nwb_add_device(nz_nwb *f, const char *name, const char *description,
		      const char *manufacturer)
{
	const char *kv[] = {"description", description, "manufacturer", manufacturer, NULL, NULL};
	char path[300];
	int err;
	if ((err = nz__nwb_check_open(f, "add_device")) < 0 ||
	    (err = nz__nwb_check_name(name, "device")) < 0)
		return err;
	if (nz__nwb_find(f->devices, f->n_devices, name) >= 0)
		return nz__error_set(NZ_EEXISTS, "device '%s' was already added", name);
	snprintf(path, sizeof path, "general/devices/%s", name);
	if ((err = typed_group(f, path, "Device", kv, NULL, NULL, NULL)) < 0)
		return err;
	return push(&f->devices, &f->n_devices, name);
}

int nz_nwb_add_electrode_group(nz_nwb *f, const char *name, const char *description,
			       const char *location, const char *device)
{
	const char *kv[] = {"description", description, "location", location, NULL};
	char path[300], target[300];
	nz__nwb_group *g;
	int err;
	if ((err = nz__nwb_check_open(f, "add_electrode_group")) < 0 ||
	    (err = nz__nwb_check_name(name, "electrode group")) < 0)
		return err;
	if (!description || !location)
		return nz__error_set(NZ_EINVAL, "electrode group '%s' needs a description and a "
				     "location", name);
	if (strcmp(name, "electrodes") == 0)
		return nz__error_set(NZ_EINVAL, "electrode group name 'electrodes' is reserved");
	if (!device || nz__nwb_find(f->devices, f->n_devices, device) < 0)
		return nz__error_set(NZ_ENOTFOUND, "electrode group '%s': device '%s' was not added",
				     name, device ? device : "(null)");
	for (size_t i = 0; i < f->n_groups; i++)
		if (strcmp(f->groups[i].name, name) == 0)
			return nz__error_set(NZ_EEXISTS, "electrode group '%s' was already added",
					     name);
	g = nz__realloc(f->groups, (f->n_groups + 1) * sizeof *g);
	if (!g)
		return nz__error_set(NZ_ENOMEM, "out of memory adding electrode group '%s'", name);
	f->groups = g;
	g = &f->groups[f->n_groups];
	memset(g, 0, sizeof *g);
	snprintf(path, sizeof path, "general/extracellular_ephys/%s", name);
	snprintf(target, sizeof target, "/general/devices/%s", device);
	if ((err = typed_group(f, path, "ElectrodeGroup", kv, "device", target, g->oid)) < 0)
		return err;
	if (!(g->name = nz__strdup(name)) || !(g->location = nz__strdup(location))) {
		nz__free(g->name);
		return nz__error_set(NZ_ENOMEM, "out of memory adding electrode group '%s'", name);
	}
	f->n_groups++;
	return 0;
}

int nz_nwb_add_processing_module(nz_nwb *f, const char *name, const char *description)
{
	const char *kv[] = {"description", description, NULL};
	char path[300];
	int err;
	if ((err = nz__nwb_check_open(f, "add_processing_module")) < 0 ||
	    (err = nz__nwb_check_name(name, "processing module")) < 0)
		return err;
	if (!description)
		return nz__error_set(NZ_EINVAL, "processing module '%s' needs a description", name);
	if (nz__nwb_find(f->modules, f->n_modules, name) >= 0)
		return nz__error_set(NZ_EEXISTS, "processing module '%s' was already added", name);
	snprintf(path, sizeof path, "processing/%s", name);
	if ((err = typed_group(f, path, "ProcessingModule", kv, NULL, NULL, NULL)) < 0)
		return err;
	return push(&f->modules, &f->n_modules, name);
}

int nz_nwb_set_subject(nz_nwb *f, const nz_nwb_subject *s)
{
	const struct {
		const char *name, *value;
	} fields[] = {
		{"age", s ? s->age : NULL},
		{"description", s ? s->description : NULL},
		{"genotype", s ? s->genotype : NULL},
		{"sex", s ? s->sex : NULL},
		{"species", s ? s->species : NULL},
		{"strain", s ? s->strain : NULL},
		{"subject_id", s ? s->subject_id : NULL},
		{"weight", s ? s->weight : NULL},
	};
	json_t *age = NULL;
	char path[64];
	int err;
	if ((err = nz__nwb_check_open(f, "set_subject")) < 0)
		return err;
	if (!s || s->version != NZ_NWB_SUBJECT_VERSION)
		return nz__error_set(NZ_EINVAL, "set_subject: subject missing or of another version");
	if (f->subject)
		return nz__error_set(NZ_EEXISTS, "the subject was already set");
	if (s->date_of_birth && (err = nz__nwb_check_time(s->date_of_birth, "subject date_of_birth")) < 0)
		return err;
	if ((err = typed_group(f, "general/subject", "Subject", NULL, NULL, NULL, NULL)) < 0)
		return err;
	for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
		if (!fields[i].value)
			continue;
		snprintf(path, sizeof path, "general/subject/%s", fields[i].name);
		json_decref(age);
		age = NULL;
		if (strcmp(fields[i].name, "age") == 0 &&
		    !(age = json_pack("{s:s}", "reference",
				      s->age_reference ? s->age_reference : "birth"))) {
			err = nz__error_set(NZ_EINVAL, "subject age_reference is not valid text");
			goto done;
		}
		if ((err = nz__hdmf_scalar_text(&f->h, path, fields[i].value, NZ_OBJECT_VLEN_UTF8,
						age)) < 0)
			goto done;
	}
	if (s->date_of_birth &&
	    (err = nz__hdmf_scalar_text(&f->h, "general/subject/date_of_birth", s->date_of_birth,
					NZ_OBJECT_VLEN_BYTES, NULL)) < 0)
		goto done;
	f->subject = 1;
done:
	json_decref(age);
	return err;
}

/* ---- close --------------------------------------------------------------- */

/* Everything of the file but its series data and the finish: the
 * electrodes table, the root's attributes, the cached schema. */
int nz__nwb_write_static(nz_nwb *f)
{
	json_t *root = NULL;
	int err;
	if (f->n_rows && (err = nz__nwb_write_electrodes(f)) < 0)
		goto done;
	/* v3 carries the schema of NZ_NWB_SCHEMA_VERSION by default (what pynwb
	 * 4.2 writes, and what hdmf-zarr 0.14 rewrites nwb_version to). */
	root = json_pack("{s:s, s:s}", "nwb_version",
			 f->zarr_format == 3 ? NZ_NWB_SCHEMA_VERSION : NZ_NWB_VERSION, "namespace", "core");
	if (!root) {
		err = nz__error_set(NZ_ENOMEM, "out of memory closing '%s'", f->path);
		goto done;
	}
	if ((err = nz__hdmf_set_type(root, &f->h, "core", "NWBFile", f->h.root_oid, NULL)) < 0)
		goto done;
	if (f->zarr_format == 3 && (err = nz__hdmf_write_default_specs(&f->h, root)) < 0)
		goto done;
	if (f->spec_from && (err = nz__hdmf_copy_specs_ext(&f->h, f->spec_from, root, f->zarr_format == 3)) < 0)
		goto done;
	err = nz__hdmf_attrs_write(&f->h, "", root);
done:
	json_decref(root);
	return err;
}

/* .zmetadata last, and only once everything else is in place: its
 * presence is what marks the file complete. */
int nz__nwb_finish(nz_nwb *f)
{
	int err;
	if ((!f->skip_finalise && (err = nz_consolidate(f->store)) < 0) ||
	    (err = f->skip_finalise ? nz_store_sync(f->store) : nz__hdmf_marker_finish(f->store)) < 0)
		return err;
	/* The new file is in place: only now does the old one go. */
	return nz__replace_commit(&f->replace);
}

int nz_nwb_close(nz_nwb *f)
{
	int err;
	if ((err = nz__nwb_check_open(f, "close")) < 0)
		return err;
	f->closed = 1;
	if ((err = nz__nwb_write_static(f)) < 0 || (err = nz__nwb_finish(f)) < 0)
		nz__error_wrap("finishing '%s'", f->path);
	return err;
}

/* The last step of a multi-process write (skip_finalise): the same as the
 * end of nz_nwb_close, on a store every process has finished with. */
int nz_nwb_finalise(const char *path)
{
	nz_store *store = NULL;
	int err;
	if (!path || !*path)
		return nz__error_set(NZ_EINVAL, "nz_nwb_finalise: no path");
	if ((err = nz_store_open_dir(&store, path, NZ_STORE_WRITE)) < 0 ||
	    (err = nz_consolidate(store)) < 0 || (err = nz__hdmf_marker_finish(store)) < 0)
		goto done;
done:
	nz_store_free(store);
	if (err < 0)
		nz__error_wrap("finishing '%s'", path);
	return err;
}
