/* verify's walk of a Zarr store (nz__z_walk), v2 and v3: with a hierarchy
 * it takes the nodes, attributes and arrays from the consolidated metadata
 * alone (the nodes' own documents are removed, so anything read must come
 * from the copy); without one it reads the documents themselves, which is
 * what verify does when the copy disagrees with them (a tampered attribute
 * is seen there, not in the copy). */
#include "export/zread.h"
#include "test.h"

/* g (attribute "unit"), g/a (int16, attribute "kind"), consolidated. */
static void make(nz_store *m, int format)
{
	nz_array_opts o = NZ_ARRAY_OPTS_INIT;
	uint64_t shape[1] = { 4 }, chunks[1] = { 2 };
	int16_t data[4] = { 1, -2, 3, -4 };
	nz_array *a = NULL;
	o.zarr_format = format, o.ndim = 1, o.shape = shape, o.chunks = chunks, o.dtype = "<i2";
	/* the array first: it makes its parents, in its format */
	ASSERT_OK(nz_array_create(&a, m, "g/a", &o));
	ASSERT_OK(nz_array_write_all(a, data, sizeof data));
	nz_array_free(a);
	ASSERT_OK(nz_attrs_write(m, "g", "{\"unit\": \"uV\"}"));
	ASSERT_OK(nz_attrs_write(m, "g/a", "{\"kind\": \"raw\"}"));
	ASSERT_OK(nz_consolidate(m));
}

static const char *attr(const nz__xmodel *x, const char *path, const char *name)
{
	const nz__xnode *n = nz__xmodel_find(x, path);
	ASSERT(n != NULL);
	return json_string_value(json_object_get(n->attrs, name));
}

static void check_model(const nz__xmodel *x, const char *unit)
{
	const nz__xnode *n = nz__xmodel_find(x, "/g/a");
	ASSERT_EQ_INT(x->count, 3);
	ASSERT(n != NULL && n->kind == NZ__X_DATASET && n->ndim == 1 && n->shape[0] == 4 &&
	       n->chunks[0] == 2 && n->type.cls == NZ__XT_INT && n->type.size == 2);
	ASSERT_EQ_STR(attr(x, "/g/a", "kind"), "raw");
	ASSERT_EQ_STR(attr(x, "/g", "unit"), unit);
	ASSERT(nz__xmodel_find(x, "/g")->kind == NZ__X_GROUP);
}

static void consolidated_only(int format)
{
	static const char *const v2[] = { "g/.zgroup", "g/.zattrs", "g/a/.zarray", "g/a/.zattrs" };
	static const char *const v3[] = { "g/zarr.json", "g/a/zarr.json" };
	const char *const *docs = format == 2 ? v2 : v3;
	size_t i, n = format == 2 ? 4 : 2;
	nz_store *m = NULL;
	nz_hierarchy *h = NULL;
	nz_array *a = NULL;
	int16_t back[4];
	nz__xmodel x;

	ASSERT_OK(nz_store_new_memory(&m));
	make(m, format);
	for (i = 0; i < n; i++)
		ASSERT_OK(nz_store_remove(m, docs[i]));
	ASSERT_OK(nz_hierarchy_open(&h, m));
	ASSERT_EQ_INT(nz_hierarchy_consolidated(h), 1);
	ASSERT_OK(nz__z_walk(&x, h, m));
	check_model(&x, "uV");
	/* verify's readers open the arrays the same way */
	ASSERT_OK(nz__z_array_open(&a, h, m, "g/a"));
	ASSERT_OK(nz_array_read_region(a, (const uint64_t[]){ 0 }, (const uint64_t[]){ 4 }, back, sizeof back));
	ASSERT(back[1] == -2 && back[3] == -4);
	nz_array_free(a);
	nz__xmodel_clear(&x);
	/* the documents themselves are gone: a walk of them finds no g/a */
	ASSERT_OK(nz__z_walk(&x, NULL, m));
	ASSERT(nz__xmodel_find(&x, "/g/a") == NULL);
	nz__xmodel_clear(&x);
	nz_hierarchy_free(h);
	nz_store_free(m);
}

static void documents_when_stale(int format)
{
	nz_store *m = NULL;
	nz_hierarchy *h = NULL;
	nz__xmodel x;

	ASSERT_OK(nz_store_new_memory(&m));
	make(m, format);
	ASSERT_OK(nz_attrs_write(m, "g", "{\"unit\": \"mV\"}")); /* not consolidated again */
	ASSERT_ERR(NZ_EMISMATCH, nz_metadata_check(m));
	ASSERT_OK(nz_hierarchy_open(&h, m));
	ASSERT_OK(nz__z_walk(&x, h, m));
	check_model(&x, "uV"); /* what readers of the copy see */
	nz__xmodel_clear(&x);
	ASSERT_OK(nz__z_walk(&x, NULL, m));
	check_model(&x, "mV"); /* what the documents say */
	nz__xmodel_clear(&x);
	nz_hierarchy_free(h);
	nz_store_free(m);
}

int main(void)
{
	int f;
	for (f = 2; f <= 3; f++) {
		consolidated_only(f);
		documents_when_stale(f);
	}
	return 0;
}
