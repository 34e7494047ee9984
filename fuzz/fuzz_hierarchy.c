/* Fuzz target: opening a hierarchy through its consolidated metadata
 * (nz_hierarchy_*), the block zarr-python and hdmf-zarr readers trust.
 *
 * Input: one byte choosing the format ('2': the rest is .zmetadata beside a
 * root .zgroup; anything else: the rest is the root zarr.json), then the
 * document. Properties (abort on violation):
 * - nz_hierarchy_open fails with a message or succeeds;
 * - on success every member the walk lists opens as an array (or fails with
 *   a message), its attributes read as compact JSON that parses (or fail with
 *   a message), and group_exists answers 0/1 or fails with a message;
 * - nothing leaks (ASan) and no allocation is sized by the input's claims
 *   beyond what the documents hold. */
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include "nwbzarr.h"
#include "util/alloc.h"
#include "util/json.h"
#include "fuzz_common.h"

static int visit(const char *path, int is_array, void *payload)
{
	(void)is_array;
	nz_hierarchy *h = payload;
	nz_array *a = NULL;
	char *attrs = NULL;
	int rc;
	if ((rc = nz_hierarchy_array_open(&a, h, path)) < 0)
		check_failure(rc);
	else /* (a v2 node may be listed as a group and as an array) */
		CHECK(strcmp(nz_array_path(a), path) == 0);
	nz_array_free(a);
	if ((rc = nz_hierarchy_attrs_read(&attrs, h, path)) < 0) {
		check_failure(rc);
	} else {
		json_t *j = NULL; /* (our parser: attributes may hold bare NaN, as Python writes) */
		CHECK(nz__json_parse(&j, attrs, strlen(attrs), "attributes", 0) == 0 && json_is_object(j));
		json_decref(j);
	}
	nz_free(attrs);
	rc = nz_hierarchy_group_exists(h, path);
	if (rc < 0)
		check_failure(rc);
	else
		CHECK(rc == 0 || rc == 1);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	nz_store *st = NULL;
	nz_hierarchy *h = NULL;
	int rc, v2;
	if (size < 1)
		return 0;
	nz__alloc_init();
	v2 = data[0] == '2';
	CHECK(nz_store_new_memory(&st) == 0);
	if (v2)
		CHECK(nz_store_put(st, ".zgroup", "{\"zarr_format\": 2}", 18) == 0);
	CHECK(nz_store_put(st, v2 ? ".zmetadata" : "zarr.json", data + 1, size - 1) == 0);
	if ((rc = nz_hierarchy_open(&h, st)) < 0) {
		check_failure(rc);
	} else if (nz_hierarchy_consolidated(h)) {
		if ((rc = nz_hierarchy_members(h, visit, h)) < 0)
			check_failure(rc);
		visit("", 0, h); /* the root */
	}
	nz_hierarchy_free(h);
	nz_store_free(st);
	return 0;
}
