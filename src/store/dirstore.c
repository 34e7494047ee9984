/* The directory store: key "a/b/c" is the file <root>/a/b/c.
 *
 * put (one piece, or streamed: put_begin/write/commit) writes a temporary
 * file next to the target and renames it over the target, so a reader (or
 * a crash) sees the old value, no value, or the whole new value. Temporary names carry the pid and a process-wide atomic
 * counter, so threads and processes (MPI ranks) never collide; list skips
 * them. The only shared mutable state is that counter. */
#define _GNU_SOURCE /* syncfs */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "store/store_impl.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"

/* Marker inside temporary names: ".<base>.nztmp.<pid>.<n>". */
#define TMP_MARK ".nztmp."

int nz__store_is_temp_name(const char *leaf)
{
	return leaf[0] == '.' && strstr(leaf, TMP_MARK) != NULL;
}

typedef struct dirstore {
	char *root;
	unsigned int flags;
	/* Test hook (docs/reliability.md): NZ_TEST_STORE_MAX_BYTES in the
	 * environment when a writable store is opened makes puts fail with
	 * ENOSPC once this many value bytes were written: a full disk at a
	 * chosen point, without a small filesystem. 0 = off. */
	uint64_t max_bytes;
	atomic_uint_least64_t written;
} dirstore;

static atomic_ulong tmp_counter;

static char *join(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	char *p = nz__malloc(na + nb + 2);
	if (!p) {
		nz__error_set(NZ_ENOMEM, "out of memory joining '%s' and '%s'", a, b);
		return NULL;
	}
	memcpy(p, a, na);
	p[na] = '/';
	memcpy(p + na + 1, b, nb + 1);
	return p;
}

/* mkdir -p of `path` up to (not including) its last '/'-component when
 * `parent_only`, else all of it. Safe against threads creating the same
 * folders: EEXIST is success. */
static int mkdirs(char *path, int parent_only)
{
	char *p = path + 1;
	char *last = parent_only ? strrchr(path, '/') : NULL;
	if (parent_only && !last)
		return 0;
	for (;; p++) {
		int end = (*p == '\0') || (last && p == last);
		if (*p != '/' && !end)
			continue;
		char saved = *p;
		*p = '\0';
		if (mkdir(path, 0777) != 0 && errno != EEXIST) {
			int e = errno;
			int code = nz__error_errno(e, "cannot create directory", path);
			*p = saved;
			return code;
		}
		*p = saved;
		if (end)
			return 0;
	}
}

/* Bytes per write(2). Measured on Linux 6.18 / ext4: one write of a 6.5 MB
 * chunk cost 3 to 5 times the kernel time of the same bytes in 1 MiB writes
 * (bench/RESULTS.md, "Chunk writes in pieces"); smaller pieces gain nothing
 * more. */
#define WRITE_PIECE ((size_t)1 << 20)

static int write_all(int fd, const unsigned char *p, size_t len, const char *path)
{
	while (len) {
		ssize_t n = write(fd, p, len > WRITE_PIECE ? WRITE_PIECE : len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return nz__error_errno(errno, "cannot write", path);
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int fsync_dir(const char *file)
{
	int err = 0, fd;
	char *dir = nz__strdup(file);
	char *slash;
	if (!dir)
		return nz__error_set(NZ_ENOMEM, "out of memory syncing '%s'", file);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	fd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) != 0)
		err = nz__error_errno(errno, "cannot sync directory", dir);
	if (fd >= 0)
		close(fd);
	nz__free(dir);
	return err;
}

static int open_tmp(int *fd, char **tmp_out, char *path)
{
	const char *slash = strrchr(path, '/');
	size_t dirlen = (size_t)(slash - path);
	size_t n = strlen(path) + 64;
	char *tmp = nz__malloc(n);
	if (!tmp)
		return nz__error_set(NZ_ENOMEM, "out of memory writing '%s'", path);
	snprintf(tmp, n, "%.*s/.%s" TMP_MARK "%ld.%lu", (int)dirlen, path, slash + 1,
		 (long)getpid(), (unsigned long)atomic_fetch_add(&tmp_counter, 1));
	*fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (*fd < 0 && errno == ENOENT) {
		int err = mkdirs(path, 1);
		if (err < 0) {
			nz__free(tmp);
			return err;
		}
		*fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	}
	if (*fd < 0) {
		int err = nz__error_errno(errno, "cannot create", tmp);
		nz__free(tmp);
		return err;
	}
	*tmp_out = tmp;
	return 0;
}

/* A streaming put: the temporary file, renamed onto `path` at commit. */
typedef struct ds_stream {
	int fd;
	char *path, *tmp;
} ds_stream;

static void stream_free(ds_stream *st)
{
	if (st->fd >= 0)
		close(st->fd);
	if (st->tmp) {
		unlink(st->tmp);
		nz__free(st->tmp);
	}
	nz__free(st->path);
	nz__free(st);
}

static int ds_put_begin(void *ctx, const char *key, void **out)
{
	dirstore *ds = ctx;
	int err = 0;
	ds_stream *st;
	if (!(ds->flags & (NZ_STORE_WRITE | NZ_STORE_CREATE)))
		return nz__error_set(NZ_EINVAL, "cannot write key '%s': store '%s' is read-only",
				     key, ds->root);
	if (!(st = nz__calloc(1, sizeof *st)))
		return nz__error_set(NZ_ENOMEM, "out of memory writing '%s' in '%s'", key, ds->root);
	st->fd = -1;
	if (!(st->path = join(ds->root, key))) {
		err = NZ_ENOMEM;
		goto done;
	}
	if ((err = open_tmp(&st->fd, &st->tmp, st->path)) < 0)
		goto done;
	*out = st;
	st = NULL;
done:
	if (st)
		stream_free(st);
	return err;
}

static int ds_put_write(void *ctx, void *stream, const void *data, size_t len)
{
	dirstore *ds = ctx;
	ds_stream *st = stream;
	if (ds->max_bytes && atomic_fetch_add(&ds->written, len) + len > ds->max_bytes)
		return nz__error_errno(ENOSPC, "cannot write (NZ_TEST_STORE_MAX_BYTES)", st->tmp);
	return write_all(st->fd, data, len, st->tmp);
}

static int ds_put_commit(void *ctx, void *stream)
{
	dirstore *ds = ctx;
	ds_stream *st = stream;
	int err = 0, fd = st->fd;
	if ((ds->flags & NZ_STORE_FSYNC) && fsync(fd) != 0) {
		err = nz__error_errno(errno, "cannot sync", st->tmp);
		goto done;
	}
	/* close can report a deferred write error (NFS, quota). */
	st->fd = -1;
	if (close(fd) != 0) {
		err = nz__error_errno(errno, "cannot close", st->tmp);
		goto done;
	}
	if (rename(st->tmp, st->path) != 0) {
		err = nz__error_errno(errno, "cannot rename onto", st->path);
		goto done;
	}
	nz__free(st->tmp);
	st->tmp = NULL;
	if (ds->flags & NZ_STORE_FSYNC)
		err = fsync_dir(st->path);
done:
	stream_free(st);
	return err;
}

static void ds_put_abort(void *ctx, void *stream)
{
	stream_free(stream);
}

static int ds_put(void *ctx, const char *key, const void *data, size_t len)
{
	void *st = NULL;
	int err = ds_put_begin(ctx, key, &st);
	if (err < 0)
		return err;
	if ((err = ds_put_write(ctx, st, data, len)) < 0) {
		ds_put_abort(ctx, st);
		return err;
	}
	return ds_put_commit(ctx, st);
}

/* Open `key` for reading: *fd and its stat. A missing key, or one that is
 * not a regular file, is NZ_ENOTFOUND. */
static int open_key(const dirstore *ds, const char *key, const char *path, int *fd,
		    struct stat *st)
{
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0 || fstat(*fd, st) != 0)
		return errno == ENOENT || errno == ENOTDIR
			       ? nz__error_set(NZ_ENOTFOUND, "key '%s' not found in '%s'", key, ds->root)
			       : nz__error_errno(errno, "cannot read", path);
	if (!S_ISREG(st->st_mode))
		return nz__error_set(NZ_ENOTFOUND, "key '%s' in '%s' is not a file", key, ds->root);
	return 0;
}

static int ds_get_range(void *ctx, const char *key, uint64_t offset, uint64_t length, int suffix,
			void **out, size_t *len)
{
	dirstore *ds = ctx;
	int err = 0, fd = -1;
	char *path = NULL;
	unsigned char *b = NULL;
	struct stat st;
	uint64_t start;
	size_t n, got = 0;
	if (!(path = join(ds->root, key)))
		return NZ_ENOMEM;
	if ((err = open_key(ds, key, path, &fd, &st)) < 0 ||
	    (err = nz__store_range((uint64_t)st.st_size, offset, length, suffix, key, ds->root,
				   &start, &n)) < 0)
		goto done;
	if (!(b = nz__malloc(n))) {
		err = nz__error_set(NZ_ENOMEM, "out of memory reading %zu bytes of '%s'", n, path);
		goto done;
	}
	while (got < n) {
		ssize_t r = pread(fd, b + got, n - got > (1u << 30) ? (1u << 30) : n - got,
				  (off_t)(start + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = nz__error_errno(errno, "cannot read", path);
			goto done;
		}
		if (r == 0) /* shrank under us: not the value that was sized */
			break;
		got += (size_t)r;
	}
	*out = b;
	*len = got;
	b = NULL;
done:
	if (fd >= 0)
		close(fd);
	nz__free(b);
	nz__free(path);
	return err;
}

static int ds_size(void *ctx, const char *key, uint64_t *size)
{
	dirstore *ds = ctx;
	struct stat st;
	int err = 0;
	char *path = join(ds->root, key);
	if (!path)
		return NZ_ENOMEM;
	if (stat(path, &st) != 0)
		err = errno == ENOENT || errno == ENOTDIR
			      ? nz__error_set(NZ_ENOTFOUND, "key '%s' not found in '%s'", key, ds->root)
			      : nz__error_errno(errno, "cannot stat", path);
	else if (!S_ISREG(st.st_mode))
		err = nz__error_set(NZ_ENOTFOUND, "key '%s' in '%s' is not a file", key, ds->root);
	else
		*size = (uint64_t)st.st_size;
	nz__free(path);
	return err;
}

static int ds_get(void *ctx, const char *key, void **out, size_t *len)
{
	dirstore *ds = ctx;
	int err = 0, fd = -1;
	char *path = NULL;
	nz_buf b = {0};
	struct stat st;
	if (!(path = join(ds->root, key)))
		return NZ_ENOMEM;
	if ((err = open_key(ds, key, path, &fd, &st)) < 0)
		goto done;
	/* st_size is a hint: read until EOF in case the file grows or shrinks. */
	if ((err = nz__buf_reserve(&b, (size_t)st.st_size + 1)) < 0)
		goto done;
	for (;;) {
		ssize_t n;
		if (b.len == b.cap && (err = nz__buf_reserve(&b, b.cap * 2)) < 0)
			goto done;
		n = read(fd, b.data + b.len, b.cap - b.len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = nz__error_errno(errno, "cannot read", path);
			goto done;
		}
		if (n == 0)
			break;
		b.len += (size_t)n;
	}
	*out = b.data;
	*len = b.len;
	b.data = NULL;
done:
	if (fd >= 0)
		close(fd);
	nz__buf_free(&b);
	nz__free(path);
	return err;
}

static int ds_exists(void *ctx, const char *key)
{
	dirstore *ds = ctx;
	struct stat st;
	int rc;
	char *path = join(ds->root, key);
	if (!path)
		return NZ_ENOMEM;
	if (stat(path, &st) == 0)
		rc = S_ISREG(st.st_mode) ? 1 : 0;
	else if (errno == ENOENT || errno == ENOTDIR)
		rc = 0;
	else
		rc = nz__error_errno(errno, "cannot stat", path);
	nz__free(path);
	return rc;
}

static int ds_remove(void *ctx, const char *key)
{
	dirstore *ds = ctx;
	int err = 0;
	char *path = join(ds->root, key);
	if (!path)
		return NZ_ENOMEM;
	if (unlink(path) != 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			err = nz__error_errno(errno, "cannot remove", path);
	} else if (ds->flags & NZ_STORE_FSYNC) {
		err = fsync_dir(path);
	}
	nz__free(path);
	return err;
}

/* Recursive walk: `rel` holds the key of the current folder (no trailing
 * '/'); entries are appended to it and truncated back afterwards. */
static int walk(const dirstore *ds, nz_buf *rel, nz_store_list_cb cb, void *payload)
{
	int err = 0;
	size_t base = rel->len;
	char *dirpath = NULL;
	DIR *d = NULL;
	struct dirent *e;
	if (!(dirpath = join(ds->root, base ? (const char *)rel->data : ".")))
		return NZ_ENOMEM;
	if (!(d = opendir(dirpath))) {
		err = errno == ENOENT ? 0 : nz__error_errno(errno, "cannot list", dirpath);
		goto done;
	}
	while ((errno = 0, e = readdir(d)) != NULL) {
		struct stat st;
		size_t n = strlen(e->d_name);
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    nz__store_is_temp_name(e->d_name))
			continue;
		rel->len = base;
		if ((base && (err = nz__buf_append(rel, "/", 1)) < 0) ||
		    (err = nz__buf_append(rel, e->d_name, n + 1)) < 0)
			goto done;
		rel->len--; /* keep the NUL but not in len */
		if (fstatat(dirfd(d), e->d_name, &st, 0) != 0)
			continue; /* vanished (removed concurrently) */
		if (S_ISDIR(st.st_mode))
			err = walk(ds, rel, cb, payload);
		else if (S_ISREG(st.st_mode))
			err = cb((const char *)rel->data, payload);
		if (err != 0)
			goto done;
	}
	if (errno != 0)
		err = nz__error_errno(errno, "cannot list", dirpath);
done:
	rel->len = base;
	if (rel->data)
		rel->data[base] = '\0';
	if (d)
		closedir(d);
	nz__free(dirpath);
	return err;
}

static int ds_list(void *ctx, const char *prefix, nz_store_list_cb cb, void *payload)
{
	int err, isfile;
	nz_buf rel = {0};
	if ((err = nz__buf_append(&rel, prefix, strlen(prefix) + 1)) < 0)
		return err;
	rel.len--;
	/* A prefix that names a file lists that one key. */
	isfile = rel.len ? ds_exists(ctx, prefix) : 0;
	if (isfile < 0)
		err = isfile;
	else if (isfile)
		err = cb(prefix, payload);
	else
		err = walk(ctx, &rel, cb, payload);
	nz__buf_free(&rel);
	return err;
}

/* Remove temporary files below `dir` (recursively), counting them. */
static int remove_temps_in(const char *dir, uint64_t *removed)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int err = 0;
	if (!d)
		return errno == ENOENT ? 0 : nz__error_errno(errno, "cannot list", dir);
	while (err == 0 && (errno = 0, e = readdir(d)) != NULL) {
		struct stat st;
		char *sub;
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (S_ISREG(st.st_mode) && nz__store_is_temp_name(e->d_name)) {
			int en = unlinkat(dirfd(d), e->d_name, 0) == 0 ? 0 : errno;
			if (en == 0) {
				++*removed;
			} else if (en != ENOENT) { /* (ENOENT: removed meanwhile) */
				sub = join(dir, e->d_name);
				err = sub ? nz__error_errno(en, "cannot remove temporary file", sub)
					  : nz__error_set(NZ_ENOMEM, "out of memory cleaning '%s'", dir);
				nz__free(sub);
			}
		} else if (S_ISDIR(st.st_mode)) {
			if (!(sub = join(dir, e->d_name)))
				err = nz__error_set(NZ_ENOMEM, "out of memory cleaning '%s'", dir);
			else
				err = remove_temps_in(sub, removed);
			nz__free(sub);
		}
	}
	if (err == 0 && errno != 0)
		err = nz__error_errno(errno, "cannot list", dir);
	closedir(d);
	return err;
}

static int ds_remove_temps(void *ctx, uint64_t *removed)
{
	dirstore *ds = ctx;
	if (!(ds->flags & (NZ_STORE_WRITE | NZ_STORE_CREATE)))
		return nz__error_set(NZ_EINVAL, "store '%s' is read-only: cannot remove its temporary files", ds->root);
	return remove_temps_in(ds->root, removed);
}

/* fsync a directory and, recursively, every directory below it: a put
 * syncs the file and the folder it is in, but folders created on the way
 * (mkdirs) are entries of their parents, synced here. */
static int fsync_tree(const char *dir)
{
	int err = 0, fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d;
	struct dirent *e;
	if (fd < 0)
		return nz__error_errno(errno, "cannot open directory", dir);
	if (fsync(fd) != 0) {
		err = nz__error_errno(errno, "cannot sync directory", dir);
		close(fd);
		return err;
	}
	if (!(d = fdopendir(fd))) {
		err = nz__error_errno(errno, "cannot list", dir);
		close(fd);
		return err;
	}
	while (err == 0 && (e = readdir(d)) != NULL) {
		struct stat st;
		char *sub;
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISDIR(st.st_mode))
			continue;
		if (!(sub = join(dir, e->d_name)))
			err = NZ_ENOMEM;
		else
			err = fsync_tree(sub);
		nz__free(sub);
	}
	closedir(d);
	return err;
}

static int ds_sync(void *ctx)
{
	dirstore *ds = ctx;
	if (!(ds->flags & (NZ_STORE_WRITE | NZ_STORE_CREATE)))
		return 0;
	/* With NZ_STORE_FSYNC every file is already durable: make the folder
	 * tree so. Otherwise flush the store's filesystem (syncfs; elsewhere
	 * sync(), as POSIX has no per-filesystem sync). */
	if (ds->flags & NZ_STORE_FSYNC)
		return fsync_tree(ds->root);
#ifdef __linux__
	{
		/* Only the store's filesystem, and errors are reported. */
		int err = 0, fd = open(ds->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0 || syncfs(fd) != 0)
			err = nz__error_errno(errno, "cannot sync the filesystem of", ds->root);
		if (fd >= 0)
			close(fd);
		return err;
	}
#else
	sync();
	return 0;
#endif
}

static const char *ds_describe(void *ctx)
{
	return ((dirstore *)ctx)->root;
}

static void ds_free(void *ctx)
{
	dirstore *ds = ctx;
	if (!ds)
		return;
	nz__free(ds->root);
	nz__free(ds);
}

static const nz_store_ops dir_ops = {.version = NZ_STORE_OPS_VERSION,
				     .put = ds_put,
				     .get = ds_get,
				     .exists = ds_exists,
				     .remove = ds_remove,
				     .list = ds_list,
				     .sync = ds_sync,
				     .describe = ds_describe,
				     .free = ds_free,
				     .put_begin = ds_put_begin,
				     .put_write = ds_put_write,
				     .put_commit = ds_put_commit,
				     .put_abort = ds_put_abort,
				     .get_range = ds_get_range,
				     .size = ds_size};

int nz_store_open_dir(nz_store **out, const char *path, unsigned int flags)
{
	int err = 0;
	size_t n;
	struct stat st;
	dirstore *ds = NULL;
	if (!out || !path || !path[0])
		return nz__error_set(NZ_EINVAL, "nz_store_open_dir: NULL or empty path");
	*out = NULL;
	if (!(ds = nz__calloc(1, sizeof *ds)) || !(ds->root = nz__strdup(path))) {
		err = nz__error_set(NZ_ENOMEM, "out of memory opening store '%s'", path);
		goto done;
	}
	ds->flags = flags;
	if ((flags & (NZ_STORE_WRITE | NZ_STORE_CREATE)) && getenv("NZ_TEST_STORE_MAX_BYTES"))
		ds->max_bytes = strtoull(getenv("NZ_TEST_STORE_MAX_BYTES"), NULL, 10);
	atomic_init(&ds->written, 0);
	/* Drop trailing slashes so joined paths and messages read cleanly. */
	n = strlen(ds->root);
	while (n > 1 && ds->root[n - 1] == '/')
		ds->root[--n] = '\0';
	if ((flags & NZ_STORE_CREATE) && (err = mkdirs(ds->root, 0)) < 0)
		goto done;
	if (stat(ds->root, &st) != 0) {
		err = nz__error_errno(errno, "cannot open store", ds->root);
		goto done;
	}
	if (!S_ISDIR(st.st_mode)) {
		err = nz__error_set(NZ_EINVAL, "store '%s' is not a directory", ds->root);
		goto done;
	}
	if ((err = nz_store_new(out, &dir_ops, ds)) < 0)
		goto done;
	nz__store_set_temps_op(*out, ds_remove_temps);
	ds = NULL;
done:
	ds_free(ds);
	return err;
}
