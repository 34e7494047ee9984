/* nz__replace_*: the one replace-the-output routine (store/replace.h).
 * Each case checks the decision and, where it refuses, that nothing was
 * touched; where it replaces, that commit removes the old store and abort
 * brings it back byte for byte; links are never followed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/replace.h"
#include "test.h"
#include "util/error.h"

static char root[512];

static void put(const char *rel, const char *text)
{
	char p[1024];
	FILE *f;
	snprintf(p, sizeof p, "%s/%s", root, rel);
	f = fopen(p, "w");
	ASSERT(f != NULL);
	fputs(text, f);
	fclose(f);
}

static void dir(const char *rel)
{
	char p[1024];
	snprintf(p, sizeof p, "%s/%s", root, rel);
	ASSERT(mkdir(p, 0755) == 0 || errno == EEXIST);
}

static char *path(const char *rel)
{
	static char p[4][1024];
	static int k;
	k = (k + 1) % 4;
	snprintf(p[k], sizeof p[k], "%s/%s", root, rel);
	return p[k];
}

static int exists(const char *rel)
{
	struct stat st;
	return lstat(path(rel), &st) == 0;
}

static void read_text(const char *rel, char *buf, size_t cap)
{
	FILE *f = fopen(path(rel), "r");
	size_t n;
	ASSERT(f != NULL);
	n = fread(buf, 1, cap - 1, f);
	buf[n] = '\0';
	fclose(f);
}

/* A small v2 store at `rel`, with `tag` in a chunk. */
static void store(const char *rel, const char *tag)
{
	char p[512];
	dir(rel);
	snprintf(p, sizeof p, "%s/.zgroup", rel);
	put(p, "{\"zarr_format\": 2}");
	snprintf(p, sizeof p, "%s/a", rel);
	dir(p);
	snprintf(p, sizeof p, "%s/a/0.0", rel);
	put(p, tag);
}

static int nothing_aside(void)
{
	/* no ".out.nzold.*" left in root */
	char cmd[1200];
	snprintf(cmd, sizeof cmd, "ls -a '%s' | grep -q nzold", root);
	return system(cmd) != 0;
}

static void test_absent_and_refusals(void)
{
	nz__replace r = NZ__REPLACE_INIT;
	char buf[64];
	ASSERT_OK(nz__replace_begin(&r, path("new"), 0, ".marker", NULL));
	ASSERT(!nz__replace_pending(&r));
	ASSERT_OK(nz__replace_commit(&r));

	store("s", "old");
	ASSERT_ERR(NZ_EEXISTS, nz__replace_begin(&r, path("s"), 0, ".marker", NULL));
	ASSERT_CONTAINS(nz_error_last()->message, "use --overwrite");

	put("file", "data");
	ASSERT_ERR(NZ_EEXISTS, nz__replace_begin(&r, path("file"), 1, ".marker", NULL));
	ASSERT_CONTAINS(nz_error_last()->message, "not a directory");
	read_text("file", buf, sizeof buf);
	ASSERT_EQ_STR(buf, "data");

	dir("other");
	put("other/notes.txt", "mine");
	ASSERT_ERR(NZ_EEXISTS, nz__replace_begin(&r, path("other"), 1, ".marker", NULL));
	ASSERT_CONTAINS(nz_error_last()->message, "not a Zarr store");
	ASSERT(exists("other/notes.txt"));

	/* a directory named like a temporary file is not "fresh" */
	dir("tdir");
	dir("tdir/.x.nztmp.1.2");
	ASSERT_ERR(NZ_EEXISTS, nz__replace_begin(&r, path("tdir"), 1, ".marker", NULL));
	ASSERT(exists("tdir/.x.nztmp.1.2"));
}

static void test_links(void)
{
	nz__replace r = NZ__REPLACE_INIT;
	char buf[64];
	store("target", "precious");
	ASSERT(symlink(path("target"), path("link")) == 0);
	ASSERT_ERR(NZ_EEXISTS, nz__replace_begin(&r, path("link"), 1, ".marker", NULL));
	ASSERT_CONTAINS(nz_error_last()->message, "symbolic link");
	read_text("target/a/0.0", buf, sizeof buf);
	ASSERT_EQ_STR(buf, "precious");
	ASSERT(exists("target/.zgroup") && exists("link"));
	/* trailing slash: still the link, not its target */
	{
		char p[1100];
		snprintf(p, sizeof p, "%s/", path("link"));
		ASSERT_ERR(NZ_EEXISTS, nz__replace_begin(&r, p, 1, ".marker", NULL));
	}

	/* a store holding a link to data elsewhere is refused whole */
	store("holder", "mine");
	put("outside.txt", "outside");
	ASSERT(symlink(path("outside.txt"), path("holder/a/0.1")) == 0);
	ASSERT_ERR(NZ_EEXISTS, nz__replace_begin(&r, path("holder"), 1, ".marker", NULL));
	ASSERT_CONTAINS(nz_error_last()->message, "holder/a/0.1");
	ASSERT(exists("holder/a/0.0") && exists("holder/a/0.1"));
	read_text("outside.txt", buf, sizeof buf);
	ASSERT_EQ_STR(buf, "outside");
	ASSERT(nothing_aside());

	/* a group of another store is not a store of its own */
	put("target/a/.zgroup", "{\"zarr_format\": 2}");
	ASSERT_ERR(NZ_EEXISTS, nz__replace_begin(&r, path("target/a"), 1, ".marker", NULL));
	ASSERT_CONTAINS(nz_error_last()->message, "lies inside the Zarr store");
	ASSERT(exists("target/a/0.0"));
}

static void test_fresh(void)
{
	nz__replace r = NZ__REPLACE_INIT;
	dir("empty");
	ASSERT_OK(nz__replace_begin(&r, path("empty"), 1, ".marker", NULL));
	ASSERT(!nz__replace_pending(&r));
	ASSERT(exists("empty")); /* kept: it may be a mount point */
	nz__replace_abort(&r);

	dir("temps");
	put("temps/.zgroup.nztmp.12.3", "half");
	ASSERT_OK(nz__replace_begin(&r, path("temps"), 1, ".marker", NULL));
	ASSERT(exists("temps") && !exists("temps/.zgroup.nztmp.12.3"));
	ASSERT_OK(nz__replace_commit(&r));
}

static void test_replace(void)
{
	nz__replace r = NZ__REPLACE_INIT;
	char buf[64];
	/* abort: the new partial output goes, the old store comes back */
	store("out", "v1");
	ASSERT_OK(nz__replace_begin(&r, path("out"), 1, ".marker", NULL));
	ASSERT(nz__replace_pending(&r));
	ASSERT(!exists("out"));
	store("out", "partial");
	nz__error_set(NZ_ENOSPC, "the write failed");
	nz__replace_abort(&r);
	ASSERT_EQ_INT(nz_error_last()->code, NZ_ENOSPC);
	ASSERT_EQ_STR(nz_error_last()->message, "the write failed");
	read_text("out/a/0.0", buf, sizeof buf);
	ASSERT_EQ_STR(buf, "v1");
	ASSERT(nothing_aside());

	/* abort before anything new was written */
	ASSERT_OK(nz__replace_begin(&r, path("out"), 1, ".marker", NULL));
	nz__replace_abort(&r);
	read_text("out/a/0.0", buf, sizeof buf);
	ASSERT_EQ_STR(buf, "v1");

	/* commit: the old store is gone, the new one stays */
	ASSERT_OK(nz__replace_begin(&r, path("out"), 1, ".marker", NULL));
	store("out", "v2");
	ASSERT_OK(nz__replace_commit(&r));
	read_text("out/a/0.0", buf, sizeof buf);
	ASSERT_EQ_STR(buf, "v2");
	ASSERT(nothing_aside());

	/* an incomplete store (marker, no .zgroup) is a store too */
	dir("inc");
	put("inc/.marker", "{}");
	ASSERT_OK(nz__replace_begin(&r, path("inc"), 1, ".marker", NULL));
	ASSERT(!exists("inc"));
	nz__replace_abort(&r);
	ASSERT(exists("inc/.marker"));
}

static void test_keep(void)
{
	nz__replace r = NZ__REPLACE_INIT;
	const char *keep[] = {NULL, NULL};
	store("withinput", "x");
	put("withinput/rec.bin", "samples");
	keep[0] = path("withinput/rec.bin");
	ASSERT_ERR(NZ_EEXISTS, nz__replace_begin(&r, path("withinput"), 1, ".marker", keep));
	ASSERT_CONTAINS(nz_error_last()->message, "input");
	ASSERT(exists("withinput/rec.bin"));
	/* the same file under another name (a hard link) counts */
	ASSERT(link(path("withinput/rec.bin"), path("hard.bin")) == 0);
	keep[0] = path("hard.bin");
	ASSERT_ERR(NZ_EEXISTS, nz__replace_begin(&r, path("withinput"), 1, ".marker", keep));
	ASSERT(exists("withinput/rec.bin"));
}

int main(void)
{
	const char *tmp = getenv("NZ_TMP");
	char cmd[1200];
	snprintf(root, sizeof root, "%s/store_replace", tmp ? tmp : "/tmp");
	snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", root, root);
	ASSERT(system(cmd) == 0);
	test_absent_and_refusals();
	test_links();
	test_fresh();
	test_replace();
	test_keep();
	nz_test_rm_rf(root);
	puts("ok");
	return 0;
}
