/* Fuzz target: reading an NWB Zarr store's hdmf-zarr conventions
 * (nz__z_walk: zarr_dtype, zarr_link, references, scalars; nz__z_read:
 * values in normalised form), as `nwbzarr verify` does, on a memory store.
 *
 * Input: up to five parts separated by NUL bytes, stored as
 *   ".zattrs" \0 "g/.zattrs" \0 "g/d/.zarray" \0 "g/d/.zattrs" \0 <chunk 0 of g/d>
 * (an empty part is not stored; ".zgroup" and "g/.zgroup" always are).
 *
 * Properties: never crashes or leaks; failure leaves a message; on success
 * every dataset with at most MAX_ELEMS elements reads whole through
 * nz__z_read and its strings are released with nz__xvalues_free. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "export/zread.h"
#include "nwbzarr.h"
#include "fuzz_common.h"

#define MAX_ELEMS 4096
#define NPARTS 5

static void read_dataset(nz_store *s, const nz__xnode *n)
{
	uint64_t start[NZ_MAX_DIMS] = {0}, total;
	nz_array *a = NULL;
	void *out = NULL;
	size_t bytes;
	int rc;
	if (nz__xnode_count(&total, n, n->shape) < 0 || total > MAX_ELEMS || n->type.size == 0)
		return;
	bytes = (size_t)total * n->type.size;
	if (nz_array_open(&a, s, n->path + 1) < 0 || !(out = calloc(1, bytes ? bytes : 1)))
		goto done;
	rc = nz__z_read(a, n, start, n->shape, out, bytes);
	if (rc < 0)
		check_failure(rc);
	else
		nz__xvalues_free(&n->type, out, (size_t)total);
done:
	free(out);
	nz_array_free(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keys[NPARTS - 1] = {".zattrs", "g/.zattrs", "g/d/.zarray",
						     "g/d/.zattrs"};
	static const char group[] = "{\"zarr_format\": 2}";
	const uint8_t *part[NPARTS] = {0}, *p = data, *end = data + size;
	size_t len[NPARTS] = {0};
	nz_store *s = NULL;
	nz_hierarchy *h = NULL;
	nz_array *a = NULL;
	nz__xmodel m;
	char *key = NULL;
	int rc;

	for (int i = 0; i < NPARTS && p <= end; i++) {
		const uint8_t *nul = i < NPARTS - 1 ? memchr(p, 0, (size_t)(end - p)) : NULL;
		part[i] = p;
		len[i] = (size_t)((nul ? nul : end) - p);
		p += len[i] + 1;
	}
	if (nz_store_new_memory(&s) < 0 || nz_store_put(s, ".zgroup", group, strlen(group)) < 0 ||
	    nz_store_put(s, "g/.zgroup", group, strlen(group)) < 0)
		goto done;
	for (int i = 0; i < NPARTS - 1; i++)
		if (len[i] && nz_store_put(s, keys[i], part[i], len[i]) < 0)
			goto done;
	/* Object chunks decode without an expected size: see fuzz_common.h. */
	if (len[4] && !blosc_claims_too_much(part[4], len[4]) && nz_array_open(&a, s, "g/d") == 0 &&
	    nz_array_nchunks(a) > 0) {
		uint64_t zero[NZ_MAX_DIMS] = {0};
		if (nz_array_chunk_key(&key, a, zero) < 0 || nz_store_put(s, key, part[4], len[4]) < 0)
			goto done;
	}
	if ((rc = nz_hierarchy_open(&h, s)) == 0)
		rc = nz__z_walk(&m, h, s);
	if (rc < 0) {
		check_failure(rc);
		goto done;
	}
	CHECK(m.count >= 1 && strcmp(m.nodes[0].path, "/") == 0);
	for (size_t i = 0; i < m.count; i++) {
		CHECK(m.nodes[i].path[0] == '/' && m.nodes[i].attrs != NULL);
		/* Sorted; not strictly: a zarr_link named like a child of its group
		 * gives two nodes of one path (reported, not yet refused). */
		if (i)
			CHECK(strcmp(m.nodes[i - 1].path, m.nodes[i].path) <= 0);
		if (m.nodes[i].kind == NZ__X_DATASET)
			read_dataset(s, &m.nodes[i]);
	}
	nz__xmodel_clear(&m);
done:
	nz_free(key);
	nz_array_free(a);
	nz_hierarchy_free(h);
	nz_store_free(s);
	return 0;
}
