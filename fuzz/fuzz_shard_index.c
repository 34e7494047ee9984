/* Fuzz target: hostile shards for the sharding_indexed byte layer
 * (src/zarr/shard.h).
 *
 * Input: byte 0 = layout flags (bit 0 index at start, bit 1 crc32c, bit 2
 * big-endian index), bytes 1..4 = inner chunks per shard (uint32 LE, as
 * metadata would claim it: absurd values included), the rest = the shard.
 *
 * Properties checked (abort on violation):
 * - nz__shard_parse never crashes; failure is NZ_EFORMAT (or NZ_ENOMEM)
 *   with a message, and allocates nothing of the claimed size first (a
 *   claim beyond the input must fail before allocating: ASan reports any
 *   oversized allocation).
 * - On success, checked here independently: every non-empty chunk lies in
 *   the chunk data and outside the index, none overlap, and re-encoding
 *   the entries gives back the index bytes exactly.
 * - The same value put in a memory store reads back through
 *   nz__shard_read_index with the same entries, and through
 *   nz__shard_read_chunk with the same bytes; rewriting those chunks with
 *   nz__shard_writer gives a shard the reader accepts with equal chunks. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "zarr/shard.h"
#include "fuzz_common.h"

/* Independent checks stay quadratic, so only for small counts. */
#define MAX_CHECKED 512

static void check_entries(const nz__shard_entry *e, const nz__shard_layout *l, size_t len,
			  size_t isz)
{
	uint64_t lo = l->index_at_start ? isz : 0, hi = l->index_at_start ? len : len - isz;
	if (l->nchunks > MAX_CHECKED)
		return;
	for (uint64_t i = 0; i < l->nchunks; i++) {
		if (e[i].offset == NZ__SHARD_EMPTY) {
			CHECK(e[i].nbytes == NZ__SHARD_EMPTY);
			continue;
		}
		CHECK(e[i].offset >= lo && e[i].offset <= hi && e[i].nbytes <= hi - e[i].offset);
		for (uint64_t j = 0; j < i; j++)
			if (e[j].offset != NZ__SHARD_EMPTY && e[i].nbytes && e[j].nbytes)
				CHECK(e[i].offset + e[i].nbytes <= e[j].offset ||
				      e[j].offset + e[j].nbytes <= e[i].offset);
	}
}

/* Rewrite the chunks of `e` (from `shard`) with the writer and read back. */
static void rewrite(nz_store *s, const nz__shard_layout *l, const nz__shard_entry *e,
		    const uint8_t *shard)
{
	nz__shard_writer *w = NULL;
	nz__shard_entry *back = NULL;
	uint64_t size = 0;
	int rc = nz__shard_writer_begin(&w, s, "new/c/0", l);
	if (rc < 0) {
		check_failure(rc);
		return;
	}
	/* Reverse order: the writer's offsets need not follow chunk order. */
	for (uint64_t k = l->nchunks; k-- > 0 && rc == 0;)
		if (e[k].offset != NZ__SHARD_EMPTY)
			rc = nz__shard_writer_put(w, k, shard + e[k].offset, (size_t)e[k].nbytes);
	if (rc < 0) {
		CHECK(rc == NZ_ENOMEM);
		nz__shard_writer_abort(w);
		return;
	}
	CHECK(nz__shard_writer_end(w) == 0);
	CHECK(nz__shard_read_index(&back, &size, s, "new/c/0", l) == 0);
	for (uint64_t i = 0; i < l->nchunks; i++) {
		void *p = NULL;
		size_t n = 0;
		CHECK((back[i].offset == NZ__SHARD_EMPTY) == (e[i].offset == NZ__SHARD_EMPTY));
		CHECK(nz__shard_read_chunk(&p, &n, s, "new/c/0", &back[i]) == 0);
		if (e[i].offset != NZ__SHARD_EMPTY)
			CHECK(n == e[i].nbytes && (n == 0 || memcmp(p, shard + e[i].offset, n) == 0));
		nz_free(p);
	}
	nz__free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	nz__shard_layout l = {0};
	nz__shard_entry *e = NULL, *again = NULL;
	nz_store *s = NULL;
	const uint8_t *shard;
	size_t len, isz = 0;
	uint64_t vsize = 0;
	unsigned char *enc;
	int rc;
	if (size < 5)
		return 0;
	nz__alloc_init();
	l.index_at_start = data[0] & 1;
	l.index_crc32c = (data[0] >> 1) & 1;
	l.index_big_endian = (data[0] >> 2) & 1;
	l.nchunks = (uint64_t)data[1] | (uint64_t)data[2] << 8 | (uint64_t)data[3] << 16 |
		    (uint64_t)data[4] << 24;
	shard = data + 5;
	len = size - 5;
	rc = nz__shard_parse(&e, &l, shard, len, "shard 'fuzz'");
	if (rc < 0) {
		check_failure(rc);
		CHECK(rc == NZ_EFORMAT || rc == NZ_ENOMEM);
		CHECK(e == NULL);
		return 0;
	}
	CHECK(nz__shard_index_size(&isz, &l, "fuzz") == 0 && isz <= len);
	check_entries(e, &l, len, isz);
	enc = malloc(isz);
	CHECK(enc);
	nz__shard_index_encode(enc, &l, e);
	CHECK(memcmp(enc, shard + (l.index_at_start ? 0 : len - isz), isz) == 0);
	free(enc);

	CHECK(nz_store_new_memory(&s) == 0);
	CHECK(nz_store_put(s, "old/c/0", shard, len) == 0);
	CHECK(nz__shard_read_index(&again, &vsize, s, "old/c/0", &l) == 0);
	CHECK(vsize == len && memcmp(again, e, (size_t)l.nchunks * sizeof *e) == 0);
	for (uint64_t i = 0; i < l.nchunks && i < MAX_CHECKED; i++) {
		void *p = NULL;
		size_t n = 0;
		CHECK(nz__shard_read_chunk(&p, &n, s, "old/c/0", &e[i]) == 0);
		if (e[i].offset != NZ__SHARD_EMPTY)
			CHECK(n == e[i].nbytes && (n == 0 || memcmp(p, shard + e[i].offset, n) == 0));
		nz_free(p);
	}
	if (l.nchunks <= MAX_CHECKED)
		rewrite(s, &l, e, shard);
	nz__free(again);
	nz__free(e);
	nz_store_free(s);
	return 0;
}
