/* Resuming a write of a sharded Zarr v3 array (nz__hdmf_write_resumed):
 * a child writing (65432, 384) int16 in shards of (30000, 384) is killed
 * (SIGKILL from its source) in the middle of shard 1; shard 2 is then
 * replaced by a damaged object (short, no valid index). The resume at -j 2
 * keeps shard 0 untouched (same inode: not rewritten), writes shard 1 and
 * rewrites shard 2, counts 1 kept, 1 repaired, 1 written, and the store is
 * byte-identical to an uninterrupted write. A second resume keeps all 3. */
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/write.h"
#include "hdmf/hdmf.h"
#include "test.h"

#define ROWS 65432
#define COLS 384

static char tmp[512];

static int16_t value(uint64_t r, uint64_t c)
{
	return (int16_t)((int)(r % 89) * 5 - (int)(c % 7) * 3 + (int)((r * 5 + c) % 13));
}

static int gen_read(void *ctx, const uint64_t *start, const uint64_t *count, void *out)
{
	const uint64_t *kill_row = ctx;
	int16_t *o = out;
	if (kill_row && start[0] + count[0] > *kill_row)
		raise(SIGKILL);
	for (uint64_t r = 0; r < count[0]; r++)
		for (uint64_t c = 0; c < count[1]; c++)
			o[r * count[1] + c] = value(start[0] + r, start[1] + c);
	return 0;
}

static nz_source *source(uint64_t *kill_row)
{
	static const uint64_t shape[2] = {ROWS, COLS};
	nz_source_ops ops = {NZ_SOURCE_OPS_VERSION, gen_read, NULL};
	nz_source *src;
	ASSERT_OK(nz_source_from_callback(&src, &ops, kill_row, "<i2", 2, shape));
	return src;
}

static nz_array *open_or_create(nz_store **st, const char *root, int create)
{
	static const uint64_t shape[2] = {ROWS, COLS}, chunks[2] = {3000, 64},
			      shards[2] = {30000, 384};
	nz_array_opts ao = NZ_ARRAY_OPTS_INIT;
	nz_array *a;

	if (!create) {
		ASSERT_OK(nz_store_open_dir(st, root, NZ_STORE_WRITE));
		ASSERT_OK(nz_array_open(&a, *st, "data"));
		return a;
	}
	nz_test_rm_rf(root);
	ASSERT_OK(nz_store_open_dir(st, root, NZ_STORE_CREATE));
	ao.zarr_format = 3;
	ao.dtype = "<i2";
	ao.ndim = 2;
	ao.shape = shape;
	ao.chunks = chunks;
	ao.shards = shards;
	ASSERT_OK(nz_array_create(&a, *st, "data", &ao));
	return a;
}

static ino_t inode(const char *root, const char *key)
{
	char p[2300];
	struct stat sb;
	snprintf(p, sizeof p, "%s/%s", root, key);
	ASSERT(stat(p, &sb) == 0);
	return sb.st_ino;
}

static void resume(const char *root, uint64_t kept, uint64_t repaired, uint64_t written)
{
	nz_nwb_resume_info info = {0, 0, 0, 0};
	nz_write_opts wo = NZ_WRITE_OPTS_INIT;
	nz_source *src = source(NULL);
	nz_store *st;
	nz_array *a = open_or_create(&st, root, 0);

	wo.jobs = 2;
	ASSERT_OK(nz__hdmf_write_resumed(a, st, src, &wo, &info));
	ASSERT_EQ_U64(info.chunks_kept, kept);
	ASSERT_EQ_U64(info.chunks_repaired, repaired);
	ASSERT_EQ_U64(info.chunks_written, written);
	nz_array_free(a);
	nz_store_free(st);
	nz_source_free(src);
}

int main(void)
{
	char ref[1024], root[1024], cmd[4600], p[2300];
	uint64_t kill_row = 45000, removed = 0;
	nz_write_opts wo = NZ_WRITE_OPTS_INIT;
	nz_source *src;
	nz_store *st;
	nz_array *a;
	ino_t ino0;
	pid_t pid;
	int status;
	FILE *f;

	snprintf(tmp, sizeof tmp, "%s/resume_shards", getenv("NZ_TMP") ? getenv("NZ_TMP") : "/tmp");
	nz_test_rm_rf(tmp);
	snprintf(cmd, sizeof cmd, "mkdir -p '%s'", tmp);
	ASSERT(system(cmd) == 0);
	snprintf(ref, sizeof ref, "%s/ref", tmp);
	snprintf(root, sizeof root, "%s/cut", tmp);

	/* The uninterrupted write. */
	a = open_or_create(&st, ref, 1);
	src = source(NULL);
	wo.jobs = 1;
	ASSERT_OK(nz_write_array(a, src, &wo));
	nz_array_free(a);
	nz_store_free(st);
	nz_source_free(src);

	/* Killed in the middle of shard 1 (-j 1: shard 0 is done by then). */
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		a = open_or_create(&st, root, 1);
		src = source(&kill_row);
		nz_write_array(a, src, &wo);
		_exit(0); /* not reached: the source kills the process */
	}
	ASSERT(waitpid(pid, &status, 0) == pid);
	ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	ASSERT(inode(root, "data/c/0/0") != 0);
	snprintf(p, sizeof p, "%s/data/c/1/0", root);
	ASSERT(access(p, F_OK) != 0); /* no complete-looking shard 1 */
	ASSERT(nz_test_temp_files(root) >= 1); /* its stream, left by the kill */
	ASSERT_OK(nz__hdmf_remove_temps(root, &removed));
	ASSERT(removed >= 1);
	/* A damaged shard 2: 100 bytes, shorter than its index. */
	snprintf(p, sizeof p, "%s/data/c/2", root);
	ASSERT(mkdir(p, 0777) == 0 || access(p, F_OK) == 0);
	snprintf(p, sizeof p, "%s/data/c/2/0", root);
	ASSERT((f = fopen(p, "wb")) != NULL);
	for (int i = 0; i < 100; i++)
		fputc(i, f);
	ASSERT(fclose(f) == 0);

	ino0 = inode(root, "data/c/0/0");
	resume(root, 1, 1, 1);
	ASSERT(inode(root, "data/c/0/0") == ino0);
	ASSERT_EQ_INT(nz_test_temp_files(root), 0);
	snprintf(cmd, sizeof cmd, "diff -r '%s' '%s'", ref, root);
	if (system(cmd) != 0)
		NZ__FAIL("the resumed store differs from the uninterrupted one");
	resume(root, 3, 0, 0);
	nz_test_rm_rf(tmp);
	printf("ok\n");
	return 0;
}
