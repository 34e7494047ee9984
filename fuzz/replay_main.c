/* Replays a fuzz target's corpus: every file below the given folders (or the
 * given files) is passed once to LLVMFuzzerTestOneInput. A crash or sanitizer
 * report fails the ctest test; an empty corpus is an error, so a test that
 * silently checks nothing cannot pass.
 *
 * Each input is copied into a buffer of exactly its size, as libFuzzer does,
 * so AddressSanitizer catches a parser reading one byte past its input (a
 * spare byte would hide that). The path is printed before it runs, so the
 * last path in a failed test's output is the input that broke it. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static long replayed;

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	long n;
	if (!f) {
		perror(path);
		return -1;
	}
	if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		fclose(f);
		return -1;
	}
	buf = malloc(n ? (size_t)n : 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	printf("%s\n", path);
	fflush(stdout);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	replayed++;
	return 0;
}

static int replay_path(const char *path)
{
	struct stat st;
	struct dirent **list = NULL;
	int n, rc = 0;
	if (stat(path, &st) != 0) {
		perror(path);
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return replay_file(path);
	/* Sorted, so every run replays in the same order. */
	if ((n = scandir(path, &list, NULL, alphasort)) < 0) {
		perror(path);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		char child[4096];
		if (rc == 0 && list[i]->d_name[0] != '.') {
			snprintf(child, sizeof child, "%s/%s", path, list[i]->d_name);
			rc = replay_path(child);
		}
		free(list[i]);
	}
	free(list);
	return rc;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (replay_path(argv[i]) != 0)
			return 1;
	if (replayed == 0) {
		fprintf(stderr, "no corpus inputs found\n");
		return 1;
	}
	printf("replayed %ld inputs\n", replayed);
	return 0;
}
