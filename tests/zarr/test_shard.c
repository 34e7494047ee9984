/* The shard byte layer (src/zarr/shard.h): index sizes and encoding (the
 * spec's 68-byte example), hand-made hostile shards (offsets past the end,
 * overflowing ranges, chunks inside the index, overlaps, half-empty entries,
 * bad checksums, short values, absurd chunk counts refused before any
 * allocation), and the streaming writer and ranged reader on the directory,
 * memory and object stores for every index layout, with faults and
 * allocation failures. */
#include <dirent.h>

#include "../store/objstore.h"
#include "codec/codec.h"
#include "oom.h"
#include "test.h"
#include "util/alloc.h"
#include "zarr/shard.h"

static char root[512];

static void put64le(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* A hand-made shard: `data` (dlen bytes), then (or before) an index of
 * n pairs, little-endian, with a CRC32C when crc. Returns its length. */
static size_t make_shard(unsigned char *out, const char *data, size_t dlen, const uint64_t *pairs,
			 size_t n, int at_start, int crc)
{
	size_t ilen = 16 * n + (crc ? 4 : 0);
	unsigned char *idx = out + (at_start ? 0 : dlen);
	for (size_t i = 0; i < 2 * n; i++)
		put64le(idx + 8 * i, pairs[i]);
	if (crc)
		nz__le32_put(idx + 16 * n, nz__crc32c(0, idx, 16 * n));
	memcpy(out + (at_start ? ilen : 0), data, dlen);
	return dlen + ilen;
}

#define E NZ__SHARD_EMPTY

static void expect_bad(const uint64_t *pairs, size_t n, int at_start, const char *phrase)
{
	unsigned char buf[512];
	nz__shard_entry *e = (void *)1;
	nz__shard_layout l = {n, at_start, 1, 0};
	size_t len = make_shard(buf, "AAAABBCCCC", 10, pairs, n, at_start, 1);
	ASSERT_ERR(NZ_EFORMAT, nz__shard_parse(&e, &l, buf, len, "shard 'x/c/0'"));
	ASSERT(e == NULL);
	ASSERT_CONTAINS(nz_error_last()->message, "shard 'x/c/0'");
	ASSERT_CONTAINS(nz_error_last()->message, phrase);
}

static void test_index(void)
{
	nz__shard_layout l = {4, 0, 1, 0};
	nz__shard_entry in[4] = {{0, 10}, {E, E}, {10, 5}, {15, 0}}, out[4];
	unsigned char idx[68];
	size_t n = 0;
	/* The spec's example: 4 chunks, bytes + crc32c = 68 bytes. */
	ASSERT_OK(nz__shard_index_size(&n, &l, "t"));
	ASSERT_EQ_U64(n, 68);
	l.index_crc32c = 0;
	ASSERT_OK(nz__shard_index_size(&n, &l, "t"));
	ASSERT_EQ_U64(n, 64);
	l.index_crc32c = 1;
	nz__shard_index_encode(idx, &l, in);
	ASSERT_MEM_EQ(idx + 32, "\x0a\0\0\0\0\0\0\0\x05\0\0\0\0\0\0\0", 16);
	ASSERT_MEM_EQ(idx + 16, "\xff\xff\xff\xff\xff\xff\xff\xff", 8);
	ASSERT_EQ_U64(nz__le32_get(idx + 64), nz__crc32c(0, idx, 64));
	ASSERT_OK(nz__shard_index_decode(out, &l, idx, 68, 100, "t"));
	ASSERT_MEM_EQ(out, in, sizeof in);
	/* Big-endian index (bytes codec endian "big"). */
	l.index_big_endian = 1;
	nz__shard_index_encode(idx, &l, in);
	ASSERT_MEM_EQ(idx + 32, "\0\0\0\0\0\0\0\x0a\0\0\0\0\0\0\0\x05", 16);
	ASSERT_OK(nz__shard_index_decode(out, &l, idx, 68, 100, "t"));
	ASSERT_MEM_EQ(out, in, sizeof in);
	l.index_big_endian = 0;
	/* The wrong index length. */
	ASSERT_ERR(NZ_EFORMAT, nz__shard_index_decode(out, &l, idx, 64, 100, "t"));
	ASSERT_CONTAINS(nz_error_last()->message, "expected 68");
	/* Counts: none, one over the bound, and one that would overflow. */
	l.nchunks = 0;
	ASSERT_ERR(NZ_EFORMAT, nz__shard_index_size(&n, &l, "arr"));
	ASSERT_CONTAINS(nz_error_last()->message, "inner chunks per shard");
	l.nchunks = NZ__SHARD_MAX_CHUNKS + 1;
	ASSERT_ERR(NZ_EFORMAT, nz__shard_index_size(&n, &l, "arr"));
	l.nchunks = (uint64_t)1 << 62;
	ASSERT_ERR(NZ_EFORMAT, nz__shard_index_size(&n, &l, "arr"));
}

static void test_hostile(void)
{
	unsigned char buf[512];
	nz__shard_entry *e = NULL;
	nz__shard_layout l = {3, 0, 1, 0};
	/* A good one first: data "AAAABBCCCC", chunks 0..3, 4..5, 6..9. */
	static const uint64_t good[] = {0, 4, 4, 2, 6, 4};
	/* Empty and 0-byte entries are fine anywhere, adjacent chunks too. */
	static const uint64_t sparse[] = {E, E, 3, 0, 0, 10};
	size_t len = make_shard(buf, "AAAABBCCCC", 10, good, 3, 0, 1);
	ASSERT_OK(nz__shard_parse(&e, &l, buf, len, "s"));
	ASSERT_EQ_U64(e[2].offset, 6);
	ASSERT_EQ_U64(e[2].nbytes, 4);
	nz__free(e);
	len = make_shard(buf, "AAAABBCCCC", 10, sparse, 3, 0, 1);
	ASSERT_OK(nz__shard_parse(&e, &l, buf, len, "s"));
	ASSERT_EQ_U64(e[0].offset, E);
	nz__free(e);
	/* Index at the start: offsets count from the value's first byte. */
	{
		static const uint64_t start[] = {52, 4, 56, 2, 58, 4};
		l.index_at_start = 1;
		len = make_shard(buf, "AAAABBCCCC", 10, start, 3, 1, 1);
		ASSERT_OK(nz__shard_parse(&e, &l, buf, len, "s"));
		ASSERT_MEM_EQ(buf + e[1].offset, "BB", 2);
		nz__free(e);
		l.index_at_start = 0;
	}

	{ /* past the end of the value */
		static const uint64_t p[] = {0, 4, 100, 2, 6, 4};
		expect_bad(p, 3, 0, "inner chunk 1 at bytes 100+2 lies outside");
	}
	{ /* offset + nbytes overflows */
		static const uint64_t p[] = {0, 4, 5, UINT64_MAX - 2, 6, 4};
		expect_bad(p, 3, 0, "lies outside");
	}
	{ /* runs into the index at the end */
		static const uint64_t p[] = {0, 4, 4, 2, 6, 5};
		expect_bad(p, 3, 0, "inner chunk 2");
	}
	{ /* inside the index at the start */
		static const uint64_t p[] = {0, 4, 56, 2, 58, 4};
		expect_bad(p, 3, 1, "the index takes 52 at the start");
	}
	{ /* overlapping ranges, listed out of order */
		static const uint64_t p[] = {6, 4, 0, 4, 3, 2};
		expect_bad(p, 3, 0, "overlap");
	}
	{ /* the same range twice */
		static const uint64_t p[] = {0, 4, 0, 4, 6, 4};
		expect_bad(p, 3, 0, "overlap");
	}
	{ /* half-empty entries */
		static const uint64_t p[] = {0, 4, E, 2, 6, 4};
		static const uint64_t q[] = {0, 4, 4, E, 6, 4};
		expect_bad(p, 3, 0, "2^64-1 in both");
		expect_bad(q, 3, 0, "2^64-1 in both");
	}
	/* A flipped bit in the index or in its checksum. */
	for (size_t pos = 0; pos < 52; pos += 5) {
		len = make_shard(buf, "AAAABBCCCC", 10, good, 3, 0, 1);
		buf[10 + pos] ^= 0x20;
		ASSERT_ERR(NZ_EFORMAT, nz__shard_parse(&e, &l, buf, len, "shard 'x/c/0'"));
		ASSERT_CONTAINS(nz_error_last()->message, "checksum mismatch");
	}
	/* Without a checksum the same flip in an offset is caught as a range. */
	l.index_crc32c = 0;
	len = make_shard(buf, "AAAABBCCCC", 10, good, 3, 0, 0);
	buf[10 + 16] ^= 0x40; /* chunk 1's offset 4 -> 68 */
	ASSERT_ERR(NZ_EFORMAT, nz__shard_parse(&e, &l, buf, len, "s"));
	ASSERT_CONTAINS(nz_error_last()->message, "outside");
	l.index_crc32c = 1;
	/* Values too short for their index; counts that metadata made absurd. */
	ASSERT_ERR(NZ_EFORMAT, nz__shard_parse(&e, &l, buf, 51, "s"));
	ASSERT_CONTAINS(nz_error_last()->message, "51 bytes cannot hold its index of 52");
	ASSERT_ERR(NZ_EFORMAT, nz__shard_parse(&e, &l, buf, 0, "s"));
	l.nchunks = (uint64_t)1 << 40;
	ASSERT_ERR(NZ_EFORMAT, nz__shard_parse(&e, &l, buf, len, "s"));
}

/* The reader refuses an index that metadata says is huge by the value's
 * real size, before allocating anything. */
static void test_absurd_count(void)
{
	nz_store *s = NULL;
	nz__shard_entry *e = (void *)1;
	uint64_t size = 7;
	nz__shard_layout l = {NZ__SHARD_MAX_CHUNKS, 0, 1, 0}; /* a 1 GiB index */
	ASSERT_OK(nz_store_new_memory(&s));
	ASSERT_OK(nz_store_put(s, "a/c/0/0", "0123456789abcdef0123456789", 26));
	nz__alloc_fail_after(1); /* the first allocation fails: there must be none */
	ASSERT_ERR(NZ_EFORMAT, nz__shard_read_index(&e, &size, s, "a/c/0/0", &l));
	nz__alloc_fail_after(0);
	ASSERT_CONTAINS(nz_error_last()->message, "a/c/0/0");
	ASSERT_CONTAINS(nz_error_last()->message, "26 bytes cannot hold its index");
	ASSERT(e == NULL);
	/* A missing shard is NZ_ENOTFOUND (the caller reads fill values). */
	l.nchunks = 4;
	ASSERT_ERR(NZ_ENOTFOUND, nz__shard_read_index(&e, &size, s, "a/c/9/9", &l));
	nz_store_free(s);
}

static int count_cb(const char *key, void *payload)
{
	(*(int *)payload)++;
	return 0;
}

static int count_keys(nz_store *s)
{
	int n = 0;
	ASSERT_OK(nz_store_list(s, "", count_cb, &n));
	return n;
}

/* Chunk i holds `sizes[i]` bytes of the letter 'a' + i (0 = a 0-byte entry,
 * -1 = never put). */
static void write_shard(nz_store *s, const char *key, const nz__shard_layout *l,
			const long *sizes, const int *order)
{
	nz__shard_writer *w = NULL;
	uint64_t put = 0;
	ASSERT_OK(nz__shard_writer_begin(&w, s, key, l));
	for (uint64_t k = 0; k < l->nchunks; k++) {
		int i = order[k];
		char *p;
		if (sizes[i] < 0)
			continue;
		p = malloc((size_t)sizes[i] + 1);
		ASSERT(p);
		memset(p, 'a' + i, (size_t)sizes[i]);
		ASSERT_OK(nz__shard_writer_put(w, (uint64_t)i, p, (size_t)sizes[i]));
		free(p);
		put++;
	}
	ASSERT_EQ_U64(nz__shard_writer_count(w), put);
	/* Nothing is visible before the end. */
	ASSERT_EQ_INT(nz_store_exists(s, key), 0);
	ASSERT_OK(nz__shard_writer_end(w));
}

static void check_shard(nz_store *s, const char *key, const nz__shard_layout *l, const long *sizes)
{
	nz__shard_entry *e = NULL;
	uint64_t size = 0, total = 0;
	size_t isz = 0;
	ASSERT_OK(nz__shard_index_size(&isz, l, "t"));
	ASSERT_OK(nz__shard_read_index(&e, &size, s, key, l));
	for (uint64_t i = 0; i < l->nchunks; i++) {
		unsigned char *p = NULL;
		size_t n = 99;
		ASSERT_OK(nz__shard_read_chunk((void **)&p, &n, s, key, &e[i]));
		if (sizes[i] < 0) {
			ASSERT(p == NULL && n == 0 && e[i].offset == E && e[i].nbytes == E);
			continue;
		}
		ASSERT_EQ_U64(n, (uint64_t)sizes[i]);
		ASSERT(p != NULL);
		for (size_t k = 0; k < n; k++)
			ASSERT(p[k] == 'a' + i);
		if (l->index_at_start)
			ASSERT(e[i].offset >= isz);
		total += n;
		nz_free(p);
	}
	ASSERT_EQ_U64(size, total + isz); /* no gaps, no junk */
	nz__free(e);
}

/* Every layout on one store; big chunks (several copy pieces) included. */
static void roundtrip(nz_store *s)
{
	static const long sizes[5] = {1000, -1, 3, 0, 9 << 20};
	static const int order[5] = {2, 0, 4, 3, 1};
	for (int start = 0; start < 2; start++)
		for (int crc = 0; crc < 2; crc++)
			for (int big = 0; big < 2; big++) {
				nz__shard_layout l = {5, start, crc, big};
				char key[64];
				snprintf(key, sizeof key, "arr/c/%d/%d/%d", start, crc, big);
				write_shard(s, key, &l, sizes, order);
				check_shard(s, key, &l, sizes);
			}
	/* Only the shards are keys: no spill key survives its shard. */
	ASSERT_EQ_INT(count_keys(s), 8);
}

static void test_writer_errors(nz_store *s)
{
	nz__shard_writer *w = NULL;
	nz__shard_layout l = {2, 1, 1, 0};
	static const long old_sizes[2] = {5, 6};
	static const int order[2] = {0, 1};
	void *v = NULL;
	size_t n = 0;
	nz_store_remove(s, "e/c/0");
	write_shard(s, "e/c/0", &l, old_sizes, order);
	ASSERT_OK(nz__shard_writer_begin(&w, s, "e/c/0", &l));
	ASSERT_OK(nz__shard_writer_put(w, 1, "xy", 2));
	ASSERT_ERR(NZ_EINVAL, nz__shard_writer_put(w, 1, "xy", 2));
	ASSERT_CONTAINS(nz_error_last()->message, "written twice");
	ASSERT_ERR(NZ_EINVAL, nz__shard_writer_put(w, 2, "xy", 2));
	ASSERT_CONTAINS(nz_error_last()->message, "e/c/0");
	nz__shard_writer_abort(w);
	nz__shard_writer_abort(NULL);
	check_shard(s, "e/c/0", &l, old_sizes); /* the old shard, untouched */
	/* A layout that metadata got wrong. */
	l.nchunks = 0;
	ASSERT_ERR(NZ_EFORMAT, nz__shard_writer_begin(&w, s, "e/c/1", &l));
	ASSERT(w == NULL);
	ASSERT_EQ_INT(nz_store_exists(s, "e/c/1"), 0);
	/* A value replaced by a shorter one after its index was read. */
	{
		nz__shard_entry *e = NULL;
		uint64_t size;
		l.nchunks = 2;
		ASSERT_OK(nz__shard_read_index(&e, &size, s, "e/c/0", &l));
		ASSERT_OK(nz_store_put(s, "e/c/0", "short", 5));
		ASSERT_ERR(NZ_EFORMAT, nz__shard_read_chunk(&v, &n, s, "e/c/0", &e[1]));
		ASSERT_CONTAINS(nz_error_last()->message, "replaced or truncated");
		ASSERT(v == NULL);
		nz__free(e);
	}
	nz_store_remove(s, "e/c/0");
}

static void rm_rf(const char *path)
{
	nz_test_rm_rf(path);
}

/* A full disk while writing (index at the start: while spilling, and while
 * copying after the index): the old shard survives, nothing temporary. */
static void test_full_disk(void)
{
	nz_store *s = NULL;
	nz__shard_writer *w = NULL;
	nz__shard_layout l = {2, 1, 1, 0};
	static const long sizes[2] = {5, 6};
	static const int order[2] = {0, 1};
	static char block[3000];
	char dir[600];
	snprintf(dir, sizeof dir, "%s/full", root);
	ASSERT_OK(nz_store_open_dir(&s, dir, NZ_STORE_CREATE));
	write_shard(s, "c/0", &l, sizes, order);
	nz_store_free(s);
	for (int limit = 1000; limit <= 5000; limit += 4000) {
		char env[32];
		int rc;
		snprintf(env, sizeof env, "%d", limit);
		setenv("NZ_TEST_STORE_MAX_BYTES", env, 1);
		ASSERT_OK(nz_store_open_dir(&s, dir, NZ_STORE_WRITE));
		unsetenv("NZ_TEST_STORE_MAX_BYTES");
		ASSERT_OK(nz__shard_writer_begin(&w, s, "c/0", &l));
		rc = nz__shard_writer_put(w, 0, block, sizeof block);
		if (rc == 0) /* 3000 bytes fit under 5000: the copy runs out instead */
			rc = nz__shard_writer_end(w);
		else
			nz__shard_writer_abort(w);
		ASSERT_EQ_INT(rc, NZ_ENOSPC);
		check_shard(s, "c/0", &l, sizes);
		ASSERT_EQ_INT(nz_test_temp_files(dir), 0);
		nz_store_free(s);
	}
}

/* The allocation-failure sweep (tests/oom.h) over writing a shard and
 * reading its index back, for both index locations: NZ_ENOMEM with a
 * message, and the shard absent or whole, with no spill key left. */
typedef struct oom_ctx {
	nz_store *s;
	nz__shard_layout l;
} oom_ctx;

static const long oom_sizes[3] = {7, -1, 4};

static int oom_run(void *ctx)
{
	oom_ctx *c = ctx;
	nz__shard_writer *w = NULL;
	nz__shard_entry *e = NULL;
	uint64_t size;
	int rc;
	ASSERT_OK(nz_store_remove(c->s, "c/0")); /* the memory store frees only */
	if ((rc = nz__shard_writer_begin(&w, c->s, "c/0", &c->l)) < 0)
		return rc;
	if ((rc = nz__shard_writer_put(w, 0, "aaaaaaa", 7)) == 0 &&
	    (rc = nz__shard_writer_put(w, 2, "cccc", 4)) == 0)
		rc = nz__shard_writer_end(w);
	else
		nz__shard_writer_abort(w);
	if (rc == 0)
		rc = nz__shard_read_index(&e, &size, c->s, "c/0", &c->l);
	nz__free(e);
	return rc;
}

static void oom_failed(void *ctx, long n)
{
	oom_ctx *c = ctx;
	if (nz_store_exists(c->s, "c/0") == 1)
		check_shard(c->s, "c/0", &c->l, oom_sizes);
	ASSERT(count_keys(c->s) <= 1); /* no spill key left */
}

static void test_alloc_failures(void)
{
	for (int start = 0; start < 2; start++) {
		oom_ctx c = {NULL, {3, start, 1, 0}};
		nz_oom_sweep sw = {start ? "shard writer, index at start" : "shard writer, index at end",
				   oom_run, NULL, oom_failed, &c, 0, 0, 0, 0};
		ASSERT_OK(nz_store_new_memory(&c.s));
		nz_oom_run_sweep(&sw);
		nz_store_free(c.s);
	}
}

int main(void)
{
	const char *tmp = getenv("NZ_TMP");
	nz_store *s = NULL;
	char dir[600];
	snprintf(root, sizeof root, "%s/shard", tmp ? tmp : "/tmp");
	rm_rf(root);
	nz__alloc_init();
	test_index();
	test_hostile();
	test_absurd_count();

	snprintf(dir, sizeof dir, "%s/dir", root);
	ASSERT_OK(nz_store_open_dir(&s, dir, NZ_STORE_CREATE | NZ_STORE_FSYNC));
	roundtrip(s);
	test_writer_errors(s);
	nz_store_free(s);
	ASSERT_EQ_INT(nz_test_temp_files(dir), 0);
	ASSERT_OK(nz_store_new_memory(&s));
	roundtrip(s);
	test_writer_errors(s);
	nz_store_free(s);
	ASSERT_OK(nz_test_objstore_new(&s));
	roundtrip(s);
	test_writer_errors(s);
	nz_store_free(s);
	ASSERT_EQ_INT(nz_test_objstore_open_uploads(), 0);

	test_full_disk();
	test_alloc_failures();
	rm_rf(root);
	return 0;
}
