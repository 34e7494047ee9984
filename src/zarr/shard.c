/* The sharding_indexed byte layer (see shard.h): index encoding and
 * validation, reading an index and a chunk with ranged gets, and the
 * streaming shard writer. */
#include "zarr/shard.h"

#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "store/store_impl.h"
#include "util/alloc.h"
#include "util/error.h"

/* Copy pieces of this size when moving spilled chunks behind a start index. */
#define COPY_PIECE ((uint64_t)4 << 20)

int nz__shard_index_size(size_t *size, const nz__shard_layout *l, const char *what)
{
	if (l->nchunks == 0 || l->nchunks > NZ__SHARD_MAX_CHUNKS)
		return nz__error_set(NZ_EFORMAT,
				     "%s: %llu inner chunks per shard (expected 1..%llu)", what,
				     (unsigned long long)l->nchunks,
				     (unsigned long long)NZ__SHARD_MAX_CHUNKS);
	/* The bound keeps this below 2^31: no overflow, even in a 32-bit size_t. */
	*size = (size_t)l->nchunks * 16 + (l->index_crc32c ? 4 : 0);
	return 0;
}

static void put64(unsigned char *p, uint64_t v, int big)
{
	for (int i = 0; i < 8; i++)
		p[big ? 7 - i : i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get64(const unsigned char *p, int big)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[big ? 7 - i : i] << (8 * i);
	return v;
}

void nz__shard_index_encode(unsigned char *dst, const nz__shard_layout *l,
			    const nz__shard_entry *entries)
{
	size_t n = (size_t)l->nchunks * 16;
	for (uint64_t i = 0; i < l->nchunks; i++) {
		put64(dst + 16 * i, entries[i].offset, l->index_big_endian);
		put64(dst + 16 * i + 8, entries[i].nbytes, l->index_big_endian);
	}
	if (l->index_crc32c)
		nz__le32_put(dst + n, nz__crc32c(0, dst, n));
}

typedef struct span {
	uint64_t offset, nbytes, index;
} span;

static int cmp_span(const void *a, const void *b)
{
	const span *x = a, *y = b;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* No two non-empty chunks share a byte: sort by offset, compare neighbours. */
static int check_overlaps(const nz__shard_entry *e, uint64_t nchunks, const char *what)
{
	int err = 0;
	uint64_t n = 0;
	span *s = NULL;
	for (uint64_t i = 0; i < nchunks; i++)
		n += e[i].offset != NZ__SHARD_EMPTY && e[i].nbytes > 0;
	if (n < 2)
		return 0;
	if (!(s = nz__malloc((size_t)n * sizeof *s)))
		return nz__error_set(NZ_ENOMEM, "%s: out of memory checking %llu index entries", what,
				     (unsigned long long)n);
	n = 0;
	for (uint64_t i = 0; i < nchunks; i++)
		if (e[i].offset != NZ__SHARD_EMPTY && e[i].nbytes > 0)
			s[n++] = (span){e[i].offset, e[i].nbytes, i};
	qsort(s, (size_t)n, sizeof *s, cmp_span);
	for (uint64_t i = 1; i < n; i++)
		if (s[i - 1].offset + s[i - 1].nbytes > s[i].offset) {
			err = nz__error_set(
				NZ_EFORMAT,
				"%s: inner chunks %llu (bytes %llu..%llu) and %llu (from byte %llu) "
				"overlap",
				what, (unsigned long long)s[i - 1].index,
				(unsigned long long)s[i - 1].offset,
				(unsigned long long)(s[i - 1].offset + s[i - 1].nbytes),
				(unsigned long long)s[i].index, (unsigned long long)s[i].offset);
			break;
		}
	nz__free(s);
	return err;
}

int nz__shard_index_decode(nz__shard_entry *entries, const nz__shard_layout *l, const void *src,
			   size_t n, uint64_t value_size, const char *what)
{
	const unsigned char *p = src;
	size_t want = 0, body;
	uint64_t lo, hi; /* where chunks may lie: [lo, hi) */
	int err;
	if ((err = nz__shard_index_size(&want, l, what)) < 0)
		return err;
	if (n != want)
		return nz__error_set(NZ_EFORMAT, "%s: index is %zu bytes, expected %zu (%llu chunks)",
				     what, n, want, (unsigned long long)l->nchunks);
	if (value_size < want)
		return nz__error_set(NZ_EFORMAT,
				     "%s: %llu bytes cannot hold its index of %zu bytes (%llu inner "
				     "chunks)",
				     what, (unsigned long long)value_size, want,
				     (unsigned long long)l->nchunks);
	body = (size_t)l->nchunks * 16;
	if (l->index_crc32c) {
		uint32_t stored = nz__le32_get(p + body), computed = nz__crc32c(0, p, body);
		if (stored != computed)
			return nz__error_set(NZ_EFORMAT,
					     "%s: index checksum mismatch (stored 0x%08x, computed "
					     "0x%08x): the index is corrupt",
					     what, (unsigned)stored, (unsigned)computed);
	}
	lo = l->index_at_start ? want : 0;
	hi = l->index_at_start ? value_size : value_size - want;
	for (uint64_t i = 0; i < l->nchunks; i++) {
		uint64_t off = get64(p + 16 * i, l->index_big_endian);
		uint64_t nb = get64(p + 16 * i + 8, l->index_big_endian);
		entries[i].offset = off;
		entries[i].nbytes = nb;
		if (off == NZ__SHARD_EMPTY && nb == NZ__SHARD_EMPTY)
			continue;
		if (off == NZ__SHARD_EMPTY || nb == NZ__SHARD_EMPTY)
			return nz__error_set(NZ_EFORMAT,
					     "%s: inner chunk %llu has offset %llu and nbytes %llu "
					     "(an empty chunk has 2^64-1 in both)",
					     what, (unsigned long long)i, (unsigned long long)off,
					     (unsigned long long)nb);
		if (off < lo || off > hi || nb > hi - off)
			return nz__error_set(NZ_EFORMAT,
					     "%s: inner chunk %llu at bytes %llu+%llu lies outside the "
					     "chunk data (bytes %llu..%llu of %llu; the index takes %zu "
					     "at the %s)",
					     what, (unsigned long long)i, (unsigned long long)off,
					     (unsigned long long)nb, (unsigned long long)lo,
					     (unsigned long long)hi, (unsigned long long)value_size,
					     want, l->index_at_start ? "start" : "end");
	}
	return check_overlaps(entries, l->nchunks, what);
}

/* A new array of l->nchunks entries. */
static nz__shard_entry *alloc_entries(const nz__shard_layout *l, const char *what)
{
	nz__shard_entry *e = nz__malloc((size_t)l->nchunks * sizeof *e);
	if (!e)
		nz__error_set(NZ_ENOMEM, "%s: out of memory for %llu index entries", what,
			      (unsigned long long)l->nchunks);
	return e;
}

int nz__shard_parse(nz__shard_entry **entries, const nz__shard_layout *l, const void *shard,
		    size_t len, const char *what)
{
	size_t n = 0;
	nz__shard_entry *e;
	int err = nz__shard_index_size(&n, l, what);
	*entries = NULL;
	if (err < 0)
		return err;
	if (len < n)
		return nz__error_set(NZ_EFORMAT,
				     "%s: %zu bytes cannot hold its index of %zu bytes (%llu inner "
				     "chunks)",
				     what, len, n, (unsigned long long)l->nchunks);
	if (!(e = alloc_entries(l, what)))
		return NZ_ENOMEM;
	err = nz__shard_index_decode(e, l,
				     (const unsigned char *)shard + (l->index_at_start ? 0 : len - n), n,
				     len, what);
	if (err < 0)
		nz__free(e);
	else
		*entries = e;
	return err;
}

/* "shard '<store>/<key>'" for messages, in a caller's buffer. */
static const char *describe(char *buf, size_t cap, nz_store *store, const char *key)
{
	snprintf(buf, cap, "shard '%s/%s'", nz_store_describe(store), key);
	return buf;
}

int nz__shard_read_index(nz__shard_entry **entries, uint64_t *value_size, nz_store *store,
			 const char *key, const nz__shard_layout *l)
{
	char what[512];
	int err;
	size_t n = 0, got = 0;
	uint64_t size = 0;
	void *raw = NULL;
	nz__shard_entry *e = NULL;
	*entries = NULL;
	describe(what, sizeof what, store, key);
	if ((err = nz__shard_index_size(&n, l, what)) < 0 ||
	    (err = nz_store_size(store, key, &size)) < 0)
		return err;
	/* The value's real size bounds what metadata can make us allocate. */
	if (size < n)
		return nz__error_set(NZ_EFORMAT,
				     "%s: %llu bytes cannot hold its index of %zu bytes (%llu inner "
				     "chunks)",
				     what, (unsigned long long)size, n, (unsigned long long)l->nchunks);
	err = nz_store_get_range(store, key, l->index_at_start ? 0 : size - n, n, &raw, &got);
	if (err < 0)
		goto done;
	if (got != n) {
		err = nz__error_set(NZ_EFORMAT, "%s: changed while its index was read (%zu of %zu "
				    "bytes)", what, got, n);
		goto done;
	}
	if (!(e = alloc_entries(l, what))) {
		err = NZ_ENOMEM;
		goto done;
	}
	if ((err = nz__shard_index_decode(e, l, raw, n, size, what)) < 0)
		goto done;
	*entries = e;
	*value_size = size;
	e = NULL;
done:
	nz_free(raw);
	nz__free(e);
	return err;
}

int nz__shard_read_chunk(void **out, size_t *len, nz_store *store, const char *key,
			 const nz__shard_entry *e)
{
	char what[512];
	int err;
	*out = NULL;
	*len = 0;
	if (e->offset == NZ__SHARD_EMPTY)
		return 0;
	if (e->nbytes > SIZE_MAX - 1)
		return nz__error_set(NZ_EFORMAT, "%s: inner chunk of %llu bytes does not fit in memory",
				     describe(what, sizeof what, store, key),
				     (unsigned long long)e->nbytes);
	err = nz_store_get_range(store, key, e->offset, e->nbytes, out, len);
	/* The key was good when its index was read: a range past the end now
	 * means the value changed under us, like a short read. */
	if (err == NZ_EINVAL)
		return nz__error_set(NZ_EFORMAT,
				     "%s: ends before an inner chunk at byte %llu (replaced or "
				     "truncated?)",
				     describe(what, sizeof what, store, key),
				     (unsigned long long)e->offset);
	if (err < 0)
		return err;
	if (*len != e->nbytes) {
		err = nz__error_set(NZ_EFORMAT,
				    "%s: holds %zu of the %llu bytes of an inner chunk at byte %llu "
				    "(replaced or truncated?)",
				    describe(what, sizeof what, store, key), *len,
				    (unsigned long long)e->nbytes, (unsigned long long)e->offset);
		nz_free(*out);
		*out = NULL;
		*len = 0;
	}
	return err;
}

/* ---- the writer --------------------------------------------------------- */

struct nz__shard_writer {
	nz_store *store;
	char *key;
	char *spill;     /* index at start: the temporary key holding the chunks */
	nz__shard_layout l;
	size_t index_size;
	nz__shard_entry *entries;
	uint64_t count;
	uint64_t base;   /* offset of the first chunk byte in the final value */
	nz_store_writer *put; /* the shard (index at end) or the spill key */
};

/* ".<leaf>.nztmp.shard" in the key's folder: a temporary name by the
 * store's rule (nz__store_is_temp_name), so listings and resume skip and
 * clean it like any other temporary file. */
static char *spill_key(const char *key)
{
	const char *slash = strrchr(key, '/');
	size_t dir = slash ? (size_t)(slash - key) + 1 : 0, n = strlen(key) + 16;
	char *s = nz__malloc(n);
	if (s)
		snprintf(s, n, "%.*s.%s.nztmp.shard", (int)dir, key, key + dir);
	return s;
}

int nz__shard_writer_begin(nz__shard_writer **out, nz_store *store, const char *key,
			   const nz__shard_layout *l)
{
	char what[512];
	int err = 0;
	nz__shard_writer *w = NULL;
	*out = NULL;
	describe(what, sizeof what, store, key);
	if (!(w = nz__calloc(1, sizeof *w)))
		return nz__error_set(NZ_ENOMEM, "%s: out of memory starting it", what);
	w->store = store;
	w->l = *l;
	if ((err = nz__shard_index_size(&w->index_size, l, what)) < 0)
		goto done;
	if (!(w->key = nz__strdup(key)) ||
	    !(w->entries = nz__malloc((size_t)l->nchunks * sizeof *w->entries)) ||
	    (l->index_at_start && !(w->spill = spill_key(key)))) {
		err = nz__error_set(NZ_ENOMEM, "%s: out of memory starting it", what);
		goto done;
	}
	for (uint64_t i = 0; i < l->nchunks; i++)
		w->entries[i] = (nz__shard_entry){NZ__SHARD_EMPTY, NZ__SHARD_EMPTY};
	w->base = l->index_at_start ? w->index_size : 0;
	if ((err = nz_store_put_begin(&w->put, store, w->spill ? w->spill : key)) < 0)
		goto done;
	*out = w;
	w = NULL;
done:
	nz__shard_writer_abort(w);
	return err;
}

int nz__shard_writer_put(nz__shard_writer *w, uint64_t index, const void *data, size_t len)
{
	char what[512];
	int err;
	if (index >= w->l.nchunks)
		return nz__error_set(NZ_EINVAL, "%s: inner chunk %llu, but it has only %llu",
				     describe(what, sizeof what, w->store, w->key),
				     (unsigned long long)index, (unsigned long long)w->l.nchunks);
	if (w->entries[index].offset != NZ__SHARD_EMPTY)
		return nz__error_set(NZ_EINVAL, "%s: inner chunk %llu written twice",
				     describe(what, sizeof what, w->store, w->key),
				     (unsigned long long)index);
	if ((err = nz_store_put_write(w->put, data, len)) < 0)
		return err;
	w->entries[index].offset = w->base + nz_store_put_written(w->put) - len;
	w->entries[index].nbytes = len;
	w->count++;
	return 0;
}

uint64_t nz__shard_writer_count(const nz__shard_writer *w)
{
	return w->count;
}

/* Index at start: the index, then the spilled chunks copied in pieces. */
static int assemble(nz__shard_writer *w, const unsigned char *index)
{
	nz_store_writer *final = NULL;
	uint64_t total = 0;
	int err;
	if ((err = nz_store_put_commit(w->put)) < 0) {
		w->put = NULL;
		return err;
	}
	w->put = NULL;
	if ((err = nz_store_size(w->store, w->spill, &total)) < 0 ||
	    (err = nz_store_put_begin(&final, w->store, w->key)) < 0 ||
	    (err = nz_store_put_write(final, index, w->index_size)) < 0)
		goto done;
	for (uint64_t off = 0; off < total; off += COPY_PIECE) {
		void *piece = NULL;
		size_t n = 0;
		if ((err = nz_store_get_range(w->store, w->spill, off, COPY_PIECE, &piece, &n)) < 0)
			goto done;
		err = n == (total - off < COPY_PIECE ? total - off : COPY_PIECE)
			      ? nz_store_put_write(final, piece, n)
			      : nz__error_set(NZ_EIO, "shard '%s/%s': its temporary key '%s' changed "
					      "while being copied", nz_store_describe(w->store),
					      w->key, w->spill);
		nz_free(piece);
		if (err < 0)
			goto done;
	}
	err = nz_store_put_commit(final);
	final = NULL;
done:
	nz_store_put_abort(final);
	return err;
}

int nz__shard_writer_end(nz__shard_writer *w)
{
	int err;
	unsigned char *index = nz__malloc(w->index_size);
	if (!index) {
		err = nz__error_set(NZ_ENOMEM, "shard '%s/%s': out of memory for its index",
				    nz_store_describe(w->store), w->key);
		nz__shard_writer_abort(w);
		return err;
	}
	nz__shard_index_encode(index, &w->l, w->entries);
	if (w->spill) {
		err = assemble(w, index);
	} else {
		err = nz_store_put_write(w->put, index, w->index_size);
		if (err == 0)
			err = nz_store_put_commit(w->put);
		else
			nz_store_put_abort(w->put);
		w->put = NULL;
	}
	nz__free(index);
	nz__shard_writer_abort(w); /* frees, and removes the spill key */
	return err;
}

void nz__shard_writer_abort(nz__shard_writer *w)
{
	if (!w)
		return;
	nz_store_put_abort(w->put);
	if (w->spill) {
		/* Keep the caller's error: this cleanup's own failure matters less. */
		nz_error saved;
		nz__error_save(&saved);
		nz_store_remove(w->store, w->spill);
		nz__error_restore(&saved);
	}
	nz__free(w->entries);
	nz__free(w->spill);
	nz__free(w->key);
	nz__free(w);
}
