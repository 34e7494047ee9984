/* See replace.h. */
#define _XOPEN_SOURCE 700 /* nftw, realpath */
#include "store/replace.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/store_impl.h"
#include "util/alloc.h"
#include "util/error.h"

/* nftw has no payload: the walk's state is per thread (one walk at a time
 * per thread). */
static _Thread_local struct {
	const struct stat *keep;
	size_t nkeep;
	dev_t dev;
	int why; /* 0 ok, else a reason below */
	int err; /* errno of a failed removal */
	char at[1024];
} walk;

enum { WHY_LINK = 1, WHY_KEEP, WHY_MOUNT, WHY_UNREADABLE };

static atomic_ulong aside_counter;

static int check_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)ftw;
	if (flag == FTW_SL || flag == FTW_SLN)
		walk.why = WHY_LINK;
	else if (flag == FTW_DNR || flag == FTW_NS)
		walk.why = WHY_UNREADABLE;
	else if (sb->st_dev != walk.dev)
		walk.why = WHY_MOUNT;
	for (size_t i = 0; !walk.why && i < walk.nkeep; i++)
		if (sb->st_dev == walk.keep[i].st_dev && sb->st_ino == walk.keep[i].st_ino)
			walk.why = WHY_KEEP;
	if (walk.why)
		snprintf(walk.at, sizeof walk.at, "%s", p);
	return walk.why;
}

/* Everything below `path` may go: no link, no other filesystem, no input. */
static int check_tree(const char *path, const struct stat *root, const char *const *keep)
{
	struct stat ks[8];
	size_t n = 0;
	int rc;
	for (size_t i = 0; keep && keep[i]; i++) {
		if (n == sizeof ks / sizeof *ks)
			return nz__error_set(NZ_EINVAL, "replacing '%s': more than %zu inputs to keep",
					     path, sizeof ks / sizeof *ks);
		if (stat(keep[i], &ks[n]) == 0) /* one that does not exist cannot be inside */
			n++;
	}
	memset(&walk, 0, sizeof walk);
	walk.keep = ks;
	walk.nkeep = n;
	walk.dev = root->st_dev;
	rc = nftw(path, check_entry, 16, FTW_PHYS);
	if (rc < 0)
		return nz__error_errno(errno, "cannot inspect the existing output", path);
	switch (walk.why) {
	case WHY_LINK:
		return nz__error_set(NZ_EEXISTS, "output '%s' holds a symbolic link '%s': not "
				     "replacing it (remove the link first)", path, walk.at);
	case WHY_KEEP:
		return nz__error_set(NZ_EEXISTS, "output '%s' holds an input of this run ('%s'): "
				     "replacing it would delete the input", path, walk.at);
	case WHY_MOUNT:
		return nz__error_set(NZ_EEXISTS, "output '%s' holds another filesystem at '%s': "
				     "not replacing it", path, walk.at);
	case WHY_UNREADABLE:
		return nz__error_set(NZ_EEXISTS, "output '%s': cannot read '%s': not replacing it",
				     path, walk.at);
	}
	return 0;
}

static int has_root_key(const char *path, const char *marker)
{
	const char *keys[] = {".zgroup", "zarr.json", marker};
	char probe[4096];
	struct stat st;
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
		if (!keys[i])
			continue;
		snprintf(probe, sizeof probe, "%s/%s", path, keys[i]);
		if (lstat(probe, &st) == 0 && S_ISREG(st.st_mode))
			return 1;
	}
	return 0;
}

/* 1 if a folder above `path` is itself a Zarr store (then `path` is one of
 * its groups or arrays, not a store of its own), naming it in `found`. */
static int inside_store(const char *path, const char *marker, char *found, size_t cap)
{
	char parent[4096], *real, *slash;
	const char *cut = strrchr(path, '/');
	int in = 0;
	if (cut == path)
		return 0; /* "/name": only the root above */
	snprintf(parent, sizeof parent, "%.*s", cut ? (int)(cut - path) : 1, cut ? path : ".");
	if (!(real = realpath(parent, NULL)))
		return 0;
	for (;;) {
		if ((in = has_root_key(real, marker)) != 0) {
			snprintf(found, cap, "%s", real);
			break;
		}
		if (!(slash = strrchr(real, '/')) || slash == real)
			break;
		*slash = '\0';
	}
	free(real);
	return in;
}

/* 1 if `path` holds nothing but temporary names (which are then regular
 * files or links, removed without following), 0 if it holds anything else;
 * negative on error. */
static int clean_if_fresh(const char *path, int remove_them)
{
	char p[4096];
	DIR *d = opendir(path);
	struct dirent *e;
	int fresh = 1, err = 0;
	if (!d)
		return nz__error_errno(errno, "cannot list the existing output", path);
	while (fresh && (errno = 0, e = readdir(d)) != NULL) {
		struct stat st;
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(p, sizeof p, "%s/%s", path, e->d_name);
		fresh = nz__store_is_temp_name(e->d_name) && lstat(p, &st) == 0 &&
			!S_ISDIR(st.st_mode);
		if (fresh && remove_them && unlink(p) != 0 && errno != ENOENT) {
			err = nz__error_errno(errno, "cannot remove a temporary file", p);
			break;
		}
	}
	closedir(d);
	return err < 0 ? err : fresh;
}

int nz__store_dir_is_fresh(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode))
		return 0;
	return clean_if_fresh(path, 0) == 1;
}

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	if (remove(p) != 0 && errno != ENOENT) {
		walk.err = errno;
		snprintf(walk.at, sizeof walk.at, "%s", p);
		return 1;
	}
	return 0;
}

/* Depth first, links unlinked (FTW_PHYS), never into another filesystem. */
static int rm_tree(const char *path)
{
	walk.err = 0;
	if (nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) != 0)
		return nz__error_errno(walk.err ? walk.err : errno, "cannot remove",
				       walk.err ? walk.at : path);
	return 0;
}

static void clear(nz__replace *r)
{
	nz__free(r->path);
	nz__free(r->aside);
	r->path = r->aside = NULL;
}

/* ".<name>.nzold.<pid>.<n>" in the folder of `path`. */
static char *aside_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t dirlen = slash ? (size_t)(slash - path + 1) : 0, cap = strlen(path) + 64;
	char *s = nz__malloc(cap);
	if (!s) {
		nz__error_set(NZ_ENOMEM, "out of memory replacing '%s'", path);
		return NULL;
	}
	snprintf(s, cap, "%.*s.%s.nzold.%ld.%lu", (int)dirlen, path, path + dirlen, (long)getpid(),
		 (unsigned long)atomic_fetch_add(&aside_counter, 1));
	return s;
}

int nz__replace_begin(nz__replace *r, const char *path, int overwrite, const char *marker,
		      const char *const *keep)
{
	struct stat st;
	char probe[4096];
	size_t n;
	int err = 0, fresh;
	r->path = r->aside = NULL;
	if (!path || !*path)
		return nz__error_set(NZ_EINVAL, "no output path");
	if (!(r->path = nz__strdup(path)))
		return nz__error_set(NZ_ENOMEM, "out of memory replacing '%s'", path);
	for (n = strlen(r->path); n > 1 && r->path[n - 1] == '/'; n--)
		r->path[n - 1] = '\0';
	path = r->path;
	if (lstat(path, &st) != 0) {
		if (errno == ENOENT)
			return 0; /* r->path kept: commit/abort free it */
		err = nz__error_errno(errno, "cannot inspect the output", path);
		goto done;
	}
	if (!overwrite) {
		err = nz__error_set(NZ_EEXISTS, "output '%s' already exists (use --overwrite)", path);
		goto done;
	}
	if (S_ISLNK(st.st_mode)) {
		err = nz__error_set(NZ_EEXISTS, "output '%s' is a symbolic link: not replacing it "
				    "(nor what it points to); remove the link or name its target",
				    path);
		goto done;
	}
	if (!S_ISDIR(st.st_mode)) {
		err = nz__error_set(NZ_EEXISTS, "output '%s' exists and is not a directory: not "
				    "replacing it", path);
		goto done;
	}
	if (!has_root_key(path, marker)) {
		if ((fresh = clean_if_fresh(path, 0)) < 0) {
			err = fresh;
			goto done;
		}
		if (!fresh) {
			err = nz__error_set(NZ_EEXISTS, "output '%s' exists and is not a Zarr store: "
					    "not replacing it", path);
			goto done;
		}
		if ((fresh = clean_if_fresh(path, 1)) < 0)
			err = fresh;
		goto done;
	}
	if (inside_store(path, marker, probe, sizeof probe)) {
		err = nz__error_set(NZ_EEXISTS, "output '%s' lies inside the Zarr store '%s': not "
				    "replacing a part of another store", path, probe);
		goto done;
	}
	if ((err = check_tree(path, &st, keep)) < 0)
		goto done;
	if (!(r->aside = aside_name(path))) {
		err = NZ_ENOMEM;
		goto done;
	}
	if (rename(path, r->aside) != 0) {
		err = nz__error_errno(errno, "cannot move the existing output aside", path);
		nz__free(r->aside);
		r->aside = NULL;
	}
done:
	if (err < 0)
		clear(r);
	return err;
}

int nz__replace_pending(const nz__replace *r)
{
	return r && r->aside != NULL;
}

int nz__replace_commit(nz__replace *r)
{
	int err = 0;
	if (r->aside && (err = rm_tree(r->aside)) < 0)
		nz__error_wrap("the new '%s' is complete, but its old version is left at '%s'",
			       r->path, r->aside);
	clear(r);
	return err;
}

void nz__replace_abort(nz__replace *r)
{
	nz_error saved;
	if (!r->aside) {
		clear(r);
		return;
	}
	struct stat st;
	nz__error_save(&saved);
	if ((lstat(r->path, &st) == 0 && rm_tree(r->path) < 0) || rename(r->aside, r->path) != 0)
		nz__error_set(saved.code, "%s (and the previous '%s' could not be put back: it is "
			      "at '%s')", saved.message, r->path, r->aside);
	else
		nz__error_restore(&saved);
	clear(r);
}
