/* The hdmf layer on a Zarr v3 store: every writer gives hdmf-zarr 0.14's
 * layout although the callers pass attributes in the v2 form. The expected
 * documents are what hdmf-zarr 0.14.0 (with pynwb 4.2) wrote for the same
 * objects, object ids aside; the readers tests open whole files with it. */
#include <stdio.h>
#include <stdlib.h>

#include "hdmf/hdmf.h"
#include "test.h"
#include "util/json.h"

static nz_store *fresh_store(const char *name)
{
	char tmp[1024];
	nz_store *st = NULL;
	snprintf(tmp, sizeof tmp, "%s/hdmf3_%s.zarr", getenv("NZ_TMP") ? getenv("NZ_TMP") : "/tmp", name);
	nz_test_rm_rf(tmp);
	ASSERT_OK(nz_store_open_dir(&st, tmp, NZ_STORE_CREATE));
	return st;
}

/* The zarr.json of `path` parsed, its object_id (if any) replaced by "X". */
static json_t *doc_of(nz_store *st, const char *path)
{
	char key[1100];
	void *buf = NULL;
	size_t len = 0;
	json_t *j = NULL, *attrs;
	snprintf(key, sizeof key, "%s%szarr.json", path, *path ? "/" : "");
	ASSERT_OK(nz_store_get(st, key, &buf, &len));
	ASSERT_OK(nz__json_parse(&j, buf, len, key, 0));
	nz_free(buf);
	attrs = json_object_get(j, "attributes");
	if (json_object_get(attrs, "object_id"))
		json_object_set_new(attrs, "object_id", json_string("X"));
	return j;
}

static json_t *attrs(json_t *doc)
{
	return json_object_get(doc, "attributes");
}

/* doc_of(path) equals the JSON text `want` (key order included). */
static void check_doc(nz_store *st, const char *path, const char *want)
{
	json_t *got = doc_of(st, path), *w = NULL;
	char *a = NULL, *b = NULL;
	ASSERT_OK(nz__json_parse(&w, want, strlen(want), "expected", 0));
	ASSERT_OK(nz__json_dumps(&a, got, NZ_JSON_COMPACT));
	ASSERT_OK(nz__json_dumps(&b, w, NZ_JSON_COMPACT));
	if (strcmp(a, b) != 0)
		fprintf(stderr, "%s:\n got  %s\n want %s\n", path, a, b);
	ASSERT_EQ_STR(a, b);
	nz_free(a);
	nz_free(b);
	json_decref(got);
	json_decref(w);
}

#define ARR(shape, chunks, dtype, fill, codec0, attrs)                                                   \
	"{\"shape\":" shape ",\"data_type\":\"" dtype "\",\"chunk_grid\":{\"name\":\"regular\","            \
	"\"configuration\":{\"chunk_shape\":" chunks "}},\"chunk_key_encoding\":{\"name\":\"default\","     \
	"\"configuration\":{\"separator\":\"/\"}},\"fill_value\":" fill ",\"codecs\":[" codec0 ","          \
	"{\"name\":\"zstd\",\"configuration\":{\"level\":0,\"checksum\":false}}],\"attributes\":" attrs    \
	",\"zarr_format\":3,\"node_type\":\"array\",\"storage_transformers\":[]}"
#define BYTES "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}"
#define UTF8 "{\"name\":\"vlen-utf8\",\"configuration\":{}}"

/* Groups, links, reference attributes, scalars, text and reference lists. */
static void test_objects(void)
{
	nz_store *st = fresh_store("objects");
	nz__hdmf h;
	json_t *g = json_pack("{s:s,s:s}", "location", "CA1", "description", "gd");
	json_t *refs[2];
	nz_array *a = NULL;
	nz_vlen *vl = NULL;
	uint64_t zero[1] = {0};
	double v = 0;
	const char *items[2] = {"A B", "C"};
	int64_t rows[4] = {0, 1, 2, 3}, back[4];
	uint64_t start[1] = {0}, count[1] = {4};

	ASSERT_OK(nz__hdmf_init_format(&h, st, 3, NULL, 3));
	ASSERT_EQ_INT(h.zarr_format, 3);
	ASSERT_EQ_INT(nz_store_zarr_format(st), 3);

	/* An ElectrodeGroup: _LINKS first, in {source, path, name} order. */
	ASSERT_OK(nz__hdmf_add_link(g, "device", "/general/devices/probe"));
	ASSERT_OK(nz__hdmf_set_type(g, &h, "core", "ElectrodeGroup", NULL, NULL));
	ASSERT_OK(nz__hdmf_group(&h, "general/extracellular_ephys/g0", g));
	json_decref(g);
	check_doc(st, "general/extracellular_ephys/g0",
		  "{\"attributes\":{\"_LINKS\":[{\"source\":\".\",\"path\":\"/general/devices/probe\","
		  "\"name\":\"device\"}],\"location\":\"CA1\",\"description\":\"gd\",\"namespace\":\"core\","
		  "\"neurodata_type\":\"ElectrodeGroup\",\"object_id\":\"X\"},\"zarr_format\":3,"
		  "\"node_type\":\"group\"}");

	/* A DynamicTableRegion: the v2 reference attribute becomes _REFERENCE. */
	ASSERT_OK(nz__hdmf_region(&h, "acquisition/es/electrodes", "all", rows, 4,
				  "/general/extracellular_ephys/electrodes", "0f0f0f0f-0000-4000-8000-000000000000"));
	check_doc(st, "acquisition/es/electrodes",
		  ARR("[4]", "[4]", "int64", "0", BYTES,
		      "{\"_DTYPE\":\"int64\",\"description\":\"all\",\"table\":{\"_REFERENCE\":{\"source\":\".\","
		      "\"path\":\"/general/extracellular_ephys/electrodes\"}},\"namespace\":\"hdmf-common\","
		      "\"neurodata_type\":\"DynamicTableRegion\",\"object_id\":\"X\","
		      "\"_ARRAY_DIMENSIONS\":[\"num_rows\"]}"));
	ASSERT_OK(nz_array_open(&a, st, "acquisition/es/electrodes"));
	ASSERT_OK(nz_array_read_region(a, start, count, back, sizeof back));
	ASSERT_MEM_EQ(back, rows, sizeof rows);
	nz_array_free(a);

	/* Scalars are 0-d arrays with the element's _DTYPE. */
	g = json_pack("{s:f,s:s}", "rate", 30000.0, "unit", "seconds");
	ASSERT_OK(nz__hdmf_scalar_f64(&h, "acquisition/es/starting_time", 0.25, g));
	json_decref(g);
	check_doc(st, "acquisition/es/starting_time",
		  ARR("[]", "[]", "float64", "0.0", BYTES,
		      "{\"_DTYPE\":\"float64\",\"rate\":30000.0,\"unit\":\"seconds\"}"));
	ASSERT_OK(nz_array_open(&a, st, "acquisition/es/starting_time"));
	ASSERT_EQ_INT(nz_array_ndim(a), 0);
	ASSERT_OK(nz_array_read_chunk(a, NULL, NULL, &v, sizeof v));
	ASSERT(v == 0.25);
	nz_array_free(a);
	/* datetimes (vlen-bytes in v2) are text like any other */
	ASSERT_OK(nz__hdmf_scalar_text(&h, "session_start_time", "2024-01-02T03:04:05+00:00",
				       NZ_OBJECT_VLEN_BYTES, NULL));
	check_doc(st, "session_start_time", ARR("[]", "[]", "string", "\"\"", UTF8, "{\"_DTYPE\":\"str\"}"));
	ASSERT_OK(nz_array_open(&a, st, "session_start_time"));
	ASSERT_OK(nz_array_read_chunk_vlen(&vl, a, NULL));
	ASSERT_EQ_STR(vl->items[0], "2024-01-02T03:04:05+00:00");
	nz_vlen_free(vl);
	nz_array_free(a);

	/* A text list with its dimension label. */
	{
		static const char *const dims[1] = {"num_experimenters"};
		nz__hdmf_dset d = {0};
		d.dims = dims;
		ASSERT_OK(nz__hdmf_text_list(&h, "general/experimenter", items, 2, NZ_OBJECT_VLEN_UTF8, &d));
	}
	check_doc(st, "general/experimenter",
		  ARR("[2]", "[2]", "string", "\"\"", UTF8,
		      "{\"_DTYPE\":\"str\",\"_ARRAY_DIMENSIONS\":[\"num_experimenters\"]}"));

	/* References in a dataset: the targets' paths as text. */
	refs[0] = nz__hdmf_ref(&h, "/general/extracellular_ephys/g0", "1f0f0f0f-0000-4000-8000-000000000000");
	refs[1] = nz__hdmf_ref(&h, "/general/devices/probe", NULL);
	ASSERT(refs[0] && refs[1]);
	ASSERT_OK(nz__hdmf_ref_list(&h, "refs", refs, 2, NULL));
	json_decref(refs[0]);
	json_decref(refs[1]);
	check_doc(st, "refs", ARR("[2]", "[2]", "string", "\"\"", UTF8, "{\"_DTYPE\":\"object_reference\"}"));
	ASSERT_OK(nz_array_open(&a, st, "refs"));
	ASSERT_OK(nz_array_read_chunk_vlen(&vl, a, zero));
	ASSERT_EQ_STR(vl->items[0], "/general/extracellular_ephys/g0");
	ASSERT_EQ_STR(vl->items[1], "/general/devices/probe");
	nz_vlen_free(vl);
	nz_array_free(a);

	/* A reference attribute without a path is refused, naming the object. */
	g = json_pack("{s:{s:{s:s},s:s}}", "table", "value", "source", ".", "zarr_dtype", "object");
	ASSERT_ERR(NZ_EINVAL, nz__hdmf_group(&h, "bad", g));
	ASSERT_CONTAINS(nz_error_last()->message, "/bad");
	json_decref(g);
	nz_store_free(st);
}

/* A DynamicTable: hdmf's dimension labels, the reference column as paths,
 * a ragged column's VectorIndex target as _REFERENCE. */
static void test_table(void)
{
	nz_store *st = fresh_store("table");
	nz__hdmf h;
	nz__hdmf_table *t = NULL;
	const char *loc[2] = {"CA1", "CA3"};
	double x[2] = {1, 2}, sp[3] = {0.5, 0.6, 0.7};
	uint64_t ends[2] = {1, 3};
	int64_t rows[2] = {1, 0};
	json_t *refs[2], *j;

	ASSERT_OK(nz__hdmf_init_format(&h, st, 9, NULL, 3));
	ASSERT_OK(nz__hdmf_table_begin(&t, &h, "units", "core", "Units", "units", NULL, 2));
	ASSERT_OK(nz__hdmf_table_col(t, "x", "x coordinate", "<f8", "float", x, sizeof x));
	ASSERT_OK(nz__hdmf_table_col_text(t, "location", "where", loc));
	refs[0] = nz__hdmf_ref(&h, "/general/g0", NULL);
	refs[1] = nz__hdmf_ref(&h, "/general/g1", NULL);
	ASSERT_OK(nz__hdmf_table_col_refs(t, "group", "the group", refs));
	json_decref(refs[0]);
	json_decref(refs[1]);
	ASSERT_OK(nz__hdmf_table_col_ragged_f64(t, "spike_times", "spikes", sp, 3, ends));
	ASSERT_OK(nz__hdmf_table_col_region(t, "electrodes", "rows", rows, "/general/electrodes",
					    "2f0f0f0f-0000-4000-8000-000000000000"));
	ASSERT_OK(nz__hdmf_table_end(t, NULL));

	check_doc(st, "units",
		  "{\"attributes\":{\"description\":\"units\",\"colnames\":[\"x\",\"location\",\"group\","
		  "\"spike_times\",\"electrodes\"],\"namespace\":\"core\",\"neurodata_type\":\"Units\","
		  "\"object_id\":\"X\"},\"zarr_format\":3,\"node_type\":\"group\"}");
	check_doc(st, "units/x",
		  ARR("[2]", "[2]", "float64", "0.0", BYTES,
		      "{\"_DTYPE\":\"float64\",\"description\":\"x coordinate\",\"namespace\":\"hdmf-common\","
		      "\"neurodata_type\":\"VectorData\",\"object_id\":\"X\",\"_ARRAY_DIMENSIONS\":[\"dim0\"]}"));
	check_doc(st, "units/group",
		  ARR("[2]", "[2]", "string", "\"\"", UTF8,
		      "{\"_DTYPE\":\"object_reference\",\"description\":\"the group\",\"namespace\":\"hdmf-common\","
		      "\"neurodata_type\":\"VectorData\",\"object_id\":\"X\",\"_ARRAY_DIMENSIONS\":[\"dim0\"]}"));
	check_doc(st, "units/id",
		  ARR("[2]", "[2]", "int64", "0", BYTES,
		      "{\"_DTYPE\":\"int64\",\"namespace\":\"hdmf-common\",\"neurodata_type\":\"ElementIdentifiers\","
		      "\"object_id\":\"X\",\"_ARRAY_DIMENSIONS\":[\"num_rows\"]}"));
	j = doc_of(st, "units/spike_times_index");
	ASSERT_EQ_STR(json_string_value(json_object_get(
			      json_object_get(json_object_get(attrs(j), "target"), "_REFERENCE"), "path")),
		      "/units/spike_times");
	ASSERT_EQ_STR(json_string_value(json_object_get(attrs(j), "_DTYPE")), "uint64");
	ASSERT_EQ_STR(json_string_value(json_array_get(json_object_get(attrs(j), "_ARRAY_DIMENSIONS"), 0)),
		      "num_rows");
	json_decref(j);
	j = doc_of(st, "units/electrodes");
	ASSERT_EQ_STR(json_string_value(json_array_get(json_object_get(attrs(j), "_ARRAY_DIMENSIONS"), 0)),
		      "dim0");
	json_decref(j);
	nz_store_free(st);
}

/* The store's root decides when no format is asked; v3 on a v2 root is
 * refused. */
static void test_format_choice(void)
{
	nz_store *st = fresh_store("choice");
	nz__hdmf h;
	ASSERT_OK(nz__hdmf_init(&h, st, 1, NULL));
	ASSERT_EQ_INT(h.zarr_format, 2);
	ASSERT_EQ_STR(h.compressor.id, "blosc");
	ASSERT_OK(nz_root_create(st, 2));
	ASSERT_ERR(NZ_EINVAL, nz__hdmf_init_format(&h, st, 1, NULL, 3));
	nz_store_free(st);
	st = fresh_store("choice3");
	ASSERT_OK(nz_root_create(st, 3));
	ASSERT_OK(nz__hdmf_init(&h, st, 1, NULL));
	ASSERT_EQ_INT(h.zarr_format, 3);
	ASSERT_EQ_STR(h.compressor.id, "zstd");
	ASSERT_ERR(NZ_EINVAL, nz__hdmf_init_format(&h, st, 1, NULL, 4));
	nz_store_free(st);
}

/* The cached schema copied into a v3 store: 0-d strings without
 * attributes, holding each document's text itself. */
static void test_specs(void)
{
	nz_store *st = fresh_store("specs");
	nz__hdmf h;
	json_t *root = json_object(), *doc = NULL;
	char path[1024];
	nz_array *a = NULL;
	nz_vlen *vl = NULL;

	ASSERT_OK(nz__hdmf_init_format(&h, st, 5, NULL, 3));
	snprintf(path, sizeof path, "%s/nwb/reference.nwb", getenv("NZ_REF"));
	ASSERT_OK(nz__hdmf_copy_specs(&h, path, root));
	ASSERT_EQ_STR(json_string_value(json_object_get(root, ".specloc")), "specifications");
	check_doc(st, "specifications/core/2.6.0-alpha/namespace", ARR("[]", "[]", "string", "\"\"", UTF8, "{}"));
	ASSERT_OK(nz_array_open(&a, st, "specifications/core/2.6.0-alpha/namespace"));
	ASSERT_OK(nz_array_read_chunk_vlen(&vl, a, NULL));
	ASSERT_OK(nz__json_parse(&doc, vl->items[0], vl->lens[0], "namespace", 0));
	ASSERT(json_is_array(json_object_get(doc, "namespaces")));
	json_decref(doc);
	nz_vlen_free(vl);
	nz_array_free(a);
	json_decref(root);
	nz_store_free(st);
}

/* DANDI: no chunk key deeper than 7 components below the root; where "/"
 * would go deeper, "." separates the indices. */
static void test_key_depth(void)
{
	nz_store *st = fresh_store("depth");
	nz__hdmf h;
	nz__hdmf_dset d = {0};
	uint64_t shape[2] = {2, 2}, zero[2] = {0, 0};
	int16_t v[4] = {1, 2, 3, 4};
	const char *paths[2] = {"processing/m/s/data", "processing/m/LFP/s/data"};
	const char *keys[2] = {"processing/m/s/data/c/0/0",      /* 4 + c + 2 = 7: "/" */
			       "processing/m/LFP/s/data/c.0.0"}; /* 5 + c + 2 = 8: "." */
	json_t *j;

	ASSERT_OK(nz__hdmf_init_format(&h, st, 2, NULL, 3));
	d.dtype = "<i2";
	d.ndim = 2;
	d.shape = shape;
	for (int i = 0; i < 2; i++) {
		nz_array *a = NULL;
		char *key = NULL;
		ASSERT_OK(nz__hdmf_dset_write(&h, paths[i], &d, v, sizeof v));
		ASSERT_OK(nz_array_open(&a, st, paths[i]));
		ASSERT_OK(nz_array_chunk_key(&key, a, zero));
		ASSERT_EQ_STR(key, keys[i]);
		nz_free(key);
		nz_array_free(a);
	}
	j = doc_of(st, "processing/m/LFP/s/data");
	ASSERT_EQ_STR(json_string_value(json_object_get(json_object_get(json_object_get(j, "chunk_key_encoding"),
									"configuration"), "separator")), ".");
	json_decref(j);
	nz_store_free(st);
}

/* The default schema (pynwb 4.2's, core 2.11.0) plus only the extension
 * namespaces of a --spec-from file: its own core/hdmf ones are left out,
 * from HDF5 and from a v3 store alike. */
static void test_default_specs(void)
{
	nz_store *st = fresh_store("defspecs"), *st2 = fresh_store("defspecs2");
	nz__hdmf h, h2;
	json_t *root = json_object();
	char path[1024], *dir = NULL;
	nz_array *a = NULL;

	ASSERT_OK(nz__hdmf_init_format(&h, st, 5, NULL, 3));
	ASSERT_OK(nz__hdmf_write_default_specs(&h, root));
	snprintf(path, sizeof path, "%s/nwb/2.1.0_nwbfile_with_extension.nwb", getenv("NZ_REF"));
	ASSERT_OK(nz__hdmf_copy_specs_ext(&h, path, root, 1));
	ASSERT_EQ_STR(json_string_value(json_object_get(root, ".specloc")), "specifications");
	ASSERT_OK(nz_array_open(&a, st, "specifications/core/" NZ_NWB_SCHEMA_VERSION "/nwb.ecephys"));
	nz_array_free(a);
	ASSERT_OK(nz_array_open(&a, st, "specifications/hdmf-common/1.10.0/table"));
	nz_array_free(a);
	ASSERT_OK(nz_array_open(&a, st, "specifications/ndx-testextension/0.1.0/namespace"));
	nz_array_free(a);
	ASSERT_ERR(NZ_ENOTFOUND, nz_array_open(&a, st, "specifications/core/2.5.0/namespace"));
	ASSERT(nz__hdmf_is_default_namespace("hdmf-experimental") && !nz__hdmf_is_default_namespace("ndx-x"));
	/* again from the v3 store just written: the extension only */
	snprintf(path, sizeof path, "%s/hdmf3_defspecs.zarr", getenv("NZ_TMP") ? getenv("NZ_TMP") : "/tmp");
	dir = path;
	ASSERT_OK(nz__hdmf_init_format(&h2, st2, 5, NULL, 3));
	ASSERT_OK(nz__hdmf_copy_specs_ext(&h2, dir, root, 1));
	ASSERT_OK(nz_array_open(&a, st2, "specifications/ndx-testextension/0.1.0/namespace"));
	nz_array_free(a);
	ASSERT_ERR(NZ_ENOTFOUND, nz_array_open(&a, st2, "specifications/core/" NZ_NWB_SCHEMA_VERSION "/namespace"));
	json_decref(root);
	nz_store_free(st);
	nz_store_free(st2);
}

int main(void)
{
	test_default_specs();
	test_key_depth();
	test_specs();
	test_objects();
	test_table();
	test_format_choice();
	return 0;
}
