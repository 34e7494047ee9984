/* Fuzz target: Zarr v2 metadata (.zarray, .zattrs) and the chunk pipeline it
 * configures, all in a memory store. Built with FUZZ_ZARR3 (fuzz_zarr3_meta.c)
 * the same properties hold for Zarr v3's zarr.json in a v3 hierarchy.
 *
 * Input: "<document>\0<chunk bytes>" (without a NUL the whole input is the
 * document and there are no chunk bytes). The document is stored as
 * "a/.zarray" and as "a/.zattrs" (v3: "a/zarr.json", attributes inline).
 *
 * Properties checked (abort on violation):
 * - nz_array_open fails with a message or succeeds; on success the accessors
 *   agree with each other (grid x chunks covers shape, chunk_nbytes =
 *   prod(chunks) x itemsize, chunk keys start with "a/").
 * - The canonical .zarray the array writes for itself (nz__array_to_meta)
 *   opens again and gives the same canonical document (a fixed point).
 * - The chunk bytes, stored as chunk 0, read back through the filters and
 *   compressor without crashing (fixed-size and object dtypes).
 * - A chunk written from the chunk bytes reads back identically, and so does
 *   a small array written whole (nz_array_write_all / nz_array_read_region).
 * - nz_attrs_read of the document returns compact JSON that parses; writing
 *   it back and reading again gives the same text. nz_consolidate collects
 *   the documents.
 *
 * Work per input is bounded (chunks of at most MAX_CHUNK bytes or elements)
 * so that a legitimately huge array is not reported as out-of-memory. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nwbzarr.h"
#include "util/alloc.h"
#include "util/json.h"
#include "zarr/zarr_impl.h"
#include "fuzz_common.h"

#define MAX_CHUNK ((size_t)1 << 16)

#ifdef FUZZ_ZARR3
#define META_KEY "zarr.json"
#define META_STYLE NZ_JSON_ZARR3
#define TO_META(out, a) nz__array_to_meta3(out, a, NULL)
#else
#define META_KEY ".zarray"
#define META_STYLE NZ_JSON_ZARR
#define TO_META(out, a) nz__array_to_meta(out, a)
#endif

static void check_accessors(const nz_array *a)
{
	uint64_t grid[NZ_MAX_DIMS], zero[NZ_MAX_DIMS] = {0};
	const uint64_t *shape = nz_array_shape(a), *chunks = nz_array_chunks(a);
	int nd = nz_array_ndim(a);
	uint64_t elems = 1;
	char *key = NULL;
	int empty = 0;
	CHECK(nd >= 0 && nd <= NZ_MAX_DIMS);
	CHECK(nz_array_chunk_grid(a, grid) == nd);
	for (int i = 0; i < nd; i++) {
		CHECK(chunks[i] >= 1);
		CHECK(grid[i] * chunks[i] >= shape[i] && (grid[i] == 0 || (grid[i] - 1) * chunks[i] < shape[i]));
		empty |= grid[i] == 0;
		CHECK(!__builtin_mul_overflow(elems, chunks[i], &elems)); /* open bounds it */
	}
	CHECK(empty ? nz_array_nchunks(a) == 0 : nz_array_nchunks(a) >= 1);
	CHECK(elems == a->chunk_nelems);
	CHECK(nz_array_chunk_nbytes(a) == a->chunk_nelems * nz_array_itemsize(a));
	CHECK(nz_array_dtype(a) != NULL && strcmp(nz_array_path(a), "a") == 0);
	CHECK((nz_array_object_codec(a) == NZ_OBJECT_NONE) == (nz_array_fill_value(a) != NULL));
	if (empty) {
		check_failure(nz_array_chunk_key(&key, a, zero));
		return;
	}
	CHECK(nz_array_chunk_key(&key, a, zero) == 0 && strncmp(key, "a/", 2) == 0);
	nz_free(key);
	for (int i = 0; i < nd; i++)
		grid[i]--; /* the last chunk */
	CHECK(nz_array_chunk_key(&key, a, grid) == 0);
	nz_free(key);
	grid[0] = nd ? grid[0] + 1 : 0; /* one past the end */
	if (nd)
		check_failure(nz_array_chunk_key(&key, a, grid));
}

/* The canonical document re-opens to itself. */
static void check_canonical(nz_store *s, const nz_array *a)
{
	json_t *m1 = NULL, *m2 = NULL;
	char *text = NULL;
	nz_array *b = NULL;
	if (TO_META(&m1, a) < 0 || nz__json_dumps(&text, m1, META_STYLE) < 0 ||
	    nz_store_put(s, "b/" META_KEY, text, strlen(text)) < 0)
		goto done; /* out of memory only */
	CHECK(nz_array_open(&b, s, "b") == 0);
	CHECK(TO_META(&m2, b) == 0);
	CHECK(json_equal(m1, m2));
done:
	json_decref(m1);
	json_decref(m2);
	nz__free(text);
	nz_array_free(b);
}

static void check_chunks(nz_store *s, nz_array *a, const uint8_t *chunk, size_t clen)
{
	uint64_t zero[NZ_MAX_DIMS] = {0};
	size_t nbytes = nz_array_chunk_nbytes(a);
	unsigned char *out = NULL, *in = NULL;
	nz_vlen *v = NULL;
	char *key = NULL;
	int rc;
	if (nz_array_nchunks(a) == 0 || nz_array_chunk_key(&key, a, zero) < 0)
		return;
	if (nz_array_object_codec(a) != NZ_OBJECT_NONE) {
		if (a->chunk_nelems > MAX_CHUNK)
			goto done;
		CHECK(nz_array_read_chunk_vlen(&v, a, zero) == 0 && v->count == a->chunk_nelems);
		nz_vlen_free(v);
		v = NULL;
		/* Decoded without an expected size: see fuzz_common.h. */
		if (blosc_claims_too_much(chunk, clen) || nz_store_put(s, key, chunk, clen) < 0)
			goto done;
		rc = nz_array_read_chunk_vlen(&v, a, zero);
		if (rc < 0)
			check_failure(rc);
		else
			CHECK(v->count == a->chunk_nelems);
		goto done;
	}
	if (nbytes > MAX_CHUNK || !(out = malloc(nbytes ? nbytes : 1)) || !(in = malloc(nbytes ? nbytes : 1)))
		goto done;
	CHECK(nz_array_read_chunk(a, NULL, zero, out, nbytes) == 0); /* missing: fill */
	if (nz_store_put(s, key, chunk, clen) < 0)
		goto done;
	rc = nz_array_read_chunk(a, NULL, zero, out, nbytes);
	if (rc < 0)
		check_failure(rc);
	/* Write a chunk made of the chunk bytes, read it back. */
	for (size_t i = 0; i < nbytes; i++)
		in[i] = clen ? chunk[i % clen] : (unsigned char)i;
	rc = nz_array_write_chunk(a, NULL, zero, in, nbytes);
	if (rc < 0) {
		check_failure(rc);
		goto done;
	}
	CHECK(nz_array_read_chunk(a, NULL, zero, out, nbytes) == 0);
	CHECK(nbytes == 0 || memcmp(in, out, nbytes) == 0);
done:
	nz_vlen_free(v);
	nz__free(key);
	free(in);
	free(out);
}

/* A small fixed-size array written whole reads back whole, identically
 * (edge chunks padded with the fill value on write, cut on read). */
static void check_whole(nz_array *a, const uint8_t *chunk, size_t clen)
{
	uint64_t zero[NZ_MAX_DIMS] = {0};
	const uint64_t *shape = nz_array_shape(a);
	size_t n = nz_array_itemsize(a);
	unsigned char *in = NULL, *out = NULL;
	int rc;
	if (nz_array_object_codec(a) != NZ_OBJECT_NONE || nz_array_nchunks(a) > 64)
		return;
	for (int i = 0; i < nz_array_ndim(a); i++)
		if (shape[i] > MAX_CHUNK || __builtin_mul_overflow(n, (size_t)shape[i], &n))
			return;
	if (n > MAX_CHUNK || a->chunk_nbytes > MAX_CHUNK || !(in = malloc(n ? n : 1)) ||
	    !(out = malloc(n ? n : 1)))
		goto done;
	for (size_t i = 0; i < n; i++)
		in[i] = clen ? chunk[(i * 7) % clen] : (unsigned char)(i * 7);
	rc = nz_array_write_all(a, in, n);
	if (rc < 0) {
		check_failure(rc); /* a codec that refuses (shuffle's element size) */
		goto done;
	}
	CHECK(nz_array_read_region(a, zero, shape, out, n) == 0);
	CHECK(n == 0 || memcmp(in, out, n) == 0);
done:
	free(in);
	free(out);
}

static void check_attrs(nz_store *s)
{
	char *t1 = NULL, *t2 = NULL;
	json_t *doc = NULL;
	int rc = nz_attrs_read(&t1, s, "a");
	if (rc < 0) {
		check_failure(rc);
		return;
	}
	CHECK(nz__json_parse(&doc, t1, strlen(t1), "attrs", 0) == 0 && json_is_object(doc));
	if (nz_attrs_write(s, "c", t1) == 0) {
		CHECK(nz_attrs_read(&t2, s, "c") == 0);
		CHECK(strcmp(t1, t2) == 0);
	}
	json_decref(doc);
	nz__free(t1);
	nz__free(t2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *chunk;
	size_t dlen, clen;
	nz_store *s = NULL;
	nz_array *a = NULL;
	int rc;

	split_at_nul(&dlen, &chunk, &clen, data, size);
	if (nz_store_new_memory(&s) < 0)
		goto done;
#ifdef FUZZ_ZARR3
	if (nz_root_create(s, 3) < 0 || nz_group_create(s, "c") < 0 || nz_store_put(s, "a/zarr.json", data, dlen) < 0)
		goto done;
#else
	if (nz_store_put(s, "a/.zarray", data, dlen) < 0 || nz_store_put(s, "a/.zattrs", data, dlen) < 0)
		goto done;
#endif
	rc = nz_array_open(&a, s, "a");
	if (rc < 0) {
		check_failure(rc);
		CHECK(a == NULL);
	} else {
		check_accessors(a);
		check_canonical(s, a);
		check_chunks(s, a, chunk, clen);
		check_whole(a, chunk, clen);
	}
	check_attrs(s);
	rc = nz_consolidate(s);
	if (rc < 0)
		check_failure(rc); /* a document that is not JSON */
	else
		CHECK(nz_store_exists(s, META_KEY[0] == 'z' ? "zarr.json" : ".zmetadata") == 1);
done:
	nz_array_free(a);
	nz_store_free(s);
	return 0;
}
