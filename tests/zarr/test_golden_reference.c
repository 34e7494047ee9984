/* Golden: every metadata document of the reference stores (written by
 * zarr-python 2.13 through hdmf-zarr) parsed and re-serialised by our
 * emitter must reproduce the file byte for byte. */
#define _XOPEN_SOURCE 700
#include <ftw.h>

#include "test.h"
#include "util/alloc.h"
#include "util/json.h"

static int ndocs, nbad;

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	const char *base = path + ftw->base;
	FILE *f;
	char *text, *out = NULL;
	json_t *v = NULL;
	size_t n;
	(void)type;
	if (strcmp(base, ".zarray") && strcmp(base, ".zattrs") && strcmp(base, ".zgroup") &&
	    strcmp(base, ".zmetadata"))
		return 0;
	ASSERT((f = fopen(path, "rb")) != NULL);
	text = malloc((size_t)st->st_size + 1);
	n = fread(text, 1, (size_t)st->st_size, f);
	fclose(f);
	ASSERT(n == (size_t)st->st_size);
	ASSERT_OK(nz__json_parse(&v, text, n, path, 0));
	ASSERT_OK(nz__json_dumps(&out, v, NZ_JSON_ZARR));
	if (strlen(out) != n || memcmp(out, text, n) != 0) {
		size_t i = 0;
		while (i < n && out[i] == text[i])
			i++;
		fprintf(stderr, "%s differs at byte %zu: ours '%.40s' theirs '%.40s'\n", path, i, out + i,
			text + i);
		nbad++;
	}
	ndocs++;
	nz__free(out);
	json_decref(v);
	free(text);
	return 0;
}

int main(void)
{
	const char *data = getenv("NZ_REF");
	char root[4096];
	nz__alloc_init();
	ASSERT(data != NULL);
	snprintf(root, sizeof root, "%s/zarr", data);
	ASSERT(nftw(root, visit, 16, FTW_PHYS) == 0);
	printf("%d metadata documents, %d differ\n", ndocs, nbad);
	ASSERT(ndocs > 500);
	ASSERT_EQ_INT(nbad, 0);
	return 0;
}
