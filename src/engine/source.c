/* Sources: a raw recording file (pread), a borrowed memory buffer, callbacks.
 * Every read is positional and keeps no per-source cursor, so one source
 * serves all workers without locks or per-worker copies. */
#include "engine/source.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/box.h"
#include "util/alloc.h"
#include "util/error.h"

enum source_kind { SOURCE_RAW, SOURCE_MEMORY, SOURCE_CALLBACK };

struct nz_source {
	enum source_kind kind;
	int ndim;
	uint64_t shape[NZ_MAX_DIMS];
	size_t itemsize;
	size_t row_bytes; /* bytes of one index along dim 0 */
	unsigned int flags; /* NZ_SOURCE_* */
	char *dtype;
	/* raw */
	int fd;
	char *path;
	uint64_t offset;
	/* memory */
	const unsigned char *data;
	/* callback */
	nz_source_ops ops;
	void *ctx;
	/* stored chunks (any kind, NULL = none) */
	const nz__stored_ops *stored;
	void *stored_ctx;
};

/* Validate and record what every kind has in common. */
static int source_new(nz_source **out, enum source_kind kind, const char *dtype, int ndim,
		      const uint64_t *shape, const char *what)
{
	nz_source *s = NULL;
	size_t itemsize, total;
	int err;

	*out = NULL;
	if (ndim < 0 || ndim > NZ_MAX_DIMS || (ndim > 0 && !shape))
		return nz__error_set(NZ_EINVAL, "source %s: ndim %d out of range 0..%d", what, ndim,
				     NZ_MAX_DIMS);
	if ((err = nz__dtype_size(&itemsize, dtype)) < 0)
		return nz__error_wrap("source %s", what);
	if (nz__prod_size(&total, shape, ndim, itemsize) < 0)
		return nz__error_set(NZ_EINVAL, "source %s: size overflows", what);
	if (!(s = nz__calloc(1, sizeof *s)) || !(s->dtype = nz__strdup(dtype))) {
		nz__free(s);
		return nz__error_set(NZ_ENOMEM, "source %s: out of memory", what);
	}
	s->kind = kind;
	s->ndim = ndim;
	if (ndim > 0)
		memcpy(s->shape, shape, (size_t)ndim * sizeof *shape);
	s->itemsize = itemsize;
	s->row_bytes = itemsize;
	nz__prod_size(&s->row_bytes, shape + 1, ndim > 0 ? ndim - 1 : 0, itemsize);
	s->fd = -1;
	*out = s;
	return 0;
}

int nz_source_open_raw(nz_source **out, const char *path, const nz_raw_opts *opts)
{
	nz_source *s = NULL;
	struct stat st;
	uint64_t shape[2], frame, body;
	size_t itemsize;
	int fd = -1, err = 0;

	*out = NULL;
	if (!path || !opts || opts->version != NZ_RAW_OPTS_VERSION || opts->nchannels == 0)
		return nz__error_set(NZ_EINVAL, "raw source '%s': bad options (version or nchannels)",
				     path ? path : "(null)");
	if ((err = nz__dtype_size(&itemsize, opts->dtype)) < 0)
		return nz__error_wrap("raw source '%s'", path);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return nz__error_errno(errno, "open", path);
	if (fstat(fd, &st) < 0) {
		err = nz__error_errno(errno, "stat", path);
		goto done;
	}
	if (opts->nchannels > UINT64_MAX / itemsize) {
		err = nz__error_set(NZ_EINVAL, "raw source '%s': nchannels too large", path);
		goto done;
	}
	frame = opts->nchannels * itemsize;
	if ((uint64_t)st.st_size < opts->header_offset) {
		err = nz__error_set(NZ_EFORMAT, "raw source '%s': file has %" PRIu64
				    " bytes, less than the header offset %" PRIu64,
				    path, (uint64_t)st.st_size, opts->header_offset);
		goto done;
	}
	body = (uint64_t)st.st_size - opts->header_offset;
	if (body % frame != 0) {
		err = nz__error_set(NZ_EFORMAT, "raw source '%s': %" PRIu64 " data bytes are not a "
				    "whole number of frames of %" PRIu64 " channels x %zu bytes",
				    path, body, opts->nchannels, itemsize);
		goto done;
	}
	shape[0] = body / frame;
	shape[1] = opts->nchannels;
	if ((err = source_new(&s, SOURCE_RAW, opts->dtype, 2, shape, path)) < 0)
		goto done;
	if (!(s->path = nz__strdup(path))) {
		err = nz__error_set(NZ_ENOMEM, "raw source '%s': out of memory", path);
		goto done;
	}
	s->offset = opts->header_offset;
	s->flags = NZ_SOURCE_ROWS;
	/* Tasks go through the file in order: ask for generous read-ahead. */
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	s->fd = fd;
	fd = -1;
	*out = s;
	s = NULL;
done:
	if (fd >= 0)
		close(fd);
	nz_source_free(s);
	return err;
}

int nz_source_from_memory(nz_source **out, const void *data, const char *dtype, int ndim,
			  const uint64_t *shape)
{
	int err;

	*out = NULL;
	if (!data)
		return nz__error_set(NZ_EINVAL, "memory source: data is NULL");
	if ((err = source_new(out, SOURCE_MEMORY, dtype, ndim, shape, "in memory")) < 0)
		return err;
	(*out)->data = data;
	return 0;
}

int nz_source_from_callback(nz_source **out, const nz_source_ops *ops, void *ctx,
			    const char *dtype, int ndim, const uint64_t *shape)
{
	int err;

	*out = NULL;
	if (!ops || ops->version != NZ_SOURCE_OPS_VERSION || !ops->read)
		return nz__error_set(NZ_EINVAL, "callback source: ops missing, read missing or "
				     "version is not NZ_SOURCE_OPS_VERSION");
	if ((err = source_new(out, SOURCE_CALLBACK, dtype, ndim, shape, "callback")) < 0)
		return err;
	(*out)->ops = *ops;
	(*out)->ctx = ctx;
	return 0;
}

void nz_source_free(nz_source *src)
{
	if (!src)
		return;
	if (src->fd >= 0)
		close(src->fd);
	if (src->kind == SOURCE_CALLBACK && src->ops.free)
		src->ops.free(src->ctx);
	nz__free(src->path);
	nz__free(src->dtype);
	nz__free(src);
}

int nz_source_ndim(const nz_source *src) { return src->ndim; }
const uint64_t *nz_source_shape(const nz_source *src) { return src->shape; }
size_t nz_source_itemsize(const nz_source *src) { return src->itemsize; }
const char *nz_source_dtype(const nz_source *src) { return src->dtype; }
const void *nz__source_memory(const nz_source *src)
{
	return src->kind == SOURCE_MEMORY ? src->data : NULL;
}
int nz__source_prefers_rows(const nz_source *src) { return (src->flags & NZ_SOURCE_ROWS) != 0; }
int nz__source_runs_last(const nz_source *src) { return (src->flags & NZ_SOURCE_LAST) != 0; }

int nz_source_set_flags(nz_source *src, unsigned int flags)
{
	if (flags & ~(NZ_SOURCE_ROWS | NZ_SOURCE_LAST))
		return nz__error_set(NZ_EINVAL, "source %s: unknown flags 0x%x",
				     nz__source_describe(src), flags);
	src->flags = flags;
	return 0;
}

const char *nz__source_describe(const nz_source *src)
{
	return src->kind == SOURCE_RAW ? src->path
	       : src->kind == SOURCE_MEMORY ? "memory" : "callback";
}

void *nz__source_callback_ctx(const nz_source *src, const nz_source_ops *ops)
{
	return src && src->kind == SOURCE_CALLBACK && src->ops.read == ops->read ? src->ctx : NULL;
}

void nz__source_set_stored(nz_source *src, const nz__stored_ops *ops, void *ctx)
{
	src->stored = ops;
	src->stored_ctx = ctx;
}

int nz__source_stored_matches(const nz_source *src, const nz_array *dst)
{
	return src->stored ? src->stored->matches(src->stored_ctx, dst) : 0;
}

int nz__source_read_stored(nz_source *src, const uint64_t *index, nz_buf *out, nz_buf *dec,
			   const void **chunk)
{
	return src->stored ? src->stored->get(src->stored_ctx, index, out, dec, chunk) : 1;
}

/* Read exactly len bytes at pos, retrying short reads and EINTR. */
static int pread_full(const nz_source *s, void *buf, size_t len, uint64_t pos)
{
	unsigned char *p = buf;

	while (len > 0) {
		ssize_t n = pread(s->fd, p, len, (off_t)pos);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return nz__error_errno(errno, "read", s->path);
		if (n == 0)
			return nz__error_set(NZ_EIO, "read '%s': unexpected end of file at byte %" PRIu64
					     " (was it truncated?)", s->path, pos);
		p += n;
		len -= (size_t)n;
		pos += (uint64_t)n;
	}
	return 0;
}

/* Rows [start0, start0+count0) x channels [start1, start1+count1). Full rows
 * are one pread; a narrower box reads whole rows in blocks and extracts. */
static int raw_read(const nz_source *s, const uint64_t *start, const uint64_t *count, void *out)
{
	enum { BLOCK = 1 << 20 };
	uint64_t pos = s->offset + start[0] * s->row_bytes, rows, done, in_shape[2], in_off[2],
		 out_shape[2], out_off[2], n[2];
	unsigned char *tmp = NULL;
	int err = 0;

	if (count[1] == s->shape[1])
		return pread_full(s, out, (size_t)(count[0] * s->row_bytes), pos);
	rows = BLOCK / s->row_bytes ? BLOCK / s->row_bytes : 1;
	if (rows > count[0])
		rows = count[0];
	if (!(tmp = nz__malloc((size_t)rows * s->row_bytes)))
		return nz__error_set(NZ_ENOMEM, "read '%s': out of memory", s->path);
	in_shape[1] = s->shape[1];
	out_shape[1] = count[1];
	in_off[0] = 0;
	in_off[1] = start[1];
	out_off[1] = 0;
	n[1] = count[1];
	for (done = 0; done < count[0]; done += n[0]) {
		n[0] = count[0] - done < rows ? count[0] - done : rows;
		if ((err = pread_full(s, tmp, (size_t)(n[0] * s->row_bytes), pos + done * s->row_bytes)) < 0)
			break;
		in_shape[0] = n[0];
		out_shape[0] = count[0];
		out_off[0] = done;
		nz__copy_box(out, out_shape, out_off, tmp, in_shape, in_off, n, 2, s->itemsize);
	}
	nz__free(tmp);
	return err;
}

int nz_source_read(nz_source *src, const uint64_t *start, const uint64_t *count, void *out,
		   size_t len)
{
	static const uint64_t zero[NZ_MAX_DIMS] = {0};
	size_t need;
	int d, err;

	for (d = 0; d < src->ndim; d++) {
		if (start[d] > src->shape[d] || count[d] > src->shape[d] - start[d])
			return nz__error_set(NZ_EINVAL, "read from %s: region [%" PRIu64 ", +%" PRIu64
					     ") of dimension %d is outside the shape %" PRIu64,
					     nz__source_describe(src), start[d], count[d], d,
					     src->shape[d]);
	}
	if (nz__prod_size(&need, count, src->ndim, src->itemsize) < 0 || need != len)
		return nz__error_set(NZ_EINVAL, "read from %s: buffer of %zu bytes for a region "
				     "that needs %zu", nz__source_describe(src), len, need);
	if (need == 0)
		return 0;
	switch (src->kind) {
	case SOURCE_RAW:
		return raw_read(src, start, count, out);
	case SOURCE_MEMORY:
		nz__copy_box(out, count, zero, src->data, src->shape, start, count, src->ndim,
			     src->itemsize);
		return 0;
	case SOURCE_CALLBACK:
		nz_error_clear();
		if ((err = src->ops.read(src->ctx, start, count, out)) == 0)
			return 0;
		if (err > 0)
			err = NZ_EIO;
		if (nz_error_last()->code == 0)
			nz__error_set(err, "%s", nz_strerror(err));
		return nz__error_wrap("source callback failed reading %d-d region starting at "
				      "index %" PRIu64 " (%" PRIu64 " along dim 0)", src->ndim,
				      src->ndim ? start[0] : 0, src->ndim ? count[0] : 0);
	}
	return nz__error_set(NZ_EINVAL, "read: unknown source kind");
}
