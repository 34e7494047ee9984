/* Read every array of the reference stores (hdmf-zarr 0.6 / zarr 2.13):
 * each must open and every chunk decode to its full size, pickle-coded
 * ones (hdmf-zarr's default object codec) through the restricted decoder. The raw ElectricalSeries samples must
 * equal the raw files shipped beside them, byte for byte. */
#define _XOPEN_SOURCE 700
#include <ftw.h>

#include "test.h"

static char stores[4096];
static int narrays, nobject, npickle;

static void read_all(nz_array *a, const char *path)
{
	uint64_t grid[NZ_MAX_DIMS], c[NZ_MAX_DIMS], i, n = nz_array_nchunks(a), rem;
	size_t nbytes = nz_array_chunk_nbytes(a);
	void *buf = malloc(nbytes ? nbytes : 1);
	int d, nd = nz_array_ndim(a);
	nz_array_chunk_grid(a, grid);
	for (i = 0; i < n; i++) {
		for (rem = i, d = nd - 1; d >= 0; d--)
			c[d] = rem % grid[d], rem /= grid[d];
		if (nz_array_object_codec(a) != NZ_OBJECT_NONE) {
			nz_vlen *v = NULL;
			if (nz_array_read_chunk_vlen(&v, a, c) != 0)
				NZ__FAIL("%s: chunk %llu", path, (unsigned long long)i);
			nz_vlen_free(v);
		} else if (nz_array_read_chunk(a, NULL, c, buf, nbytes) != 0) {
			NZ__FAIL("%s: chunk %llu", path, (unsigned long long)i);
		}
	}
	free(buf);
}

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	char dir[4096];
	nz_store *s = NULL;
	nz_array *a = NULL;
	const char *rel, *end;
	int rc;
	(void)st, (void)type;
	if (strcmp(path + ftw->base, ".zarray") != 0)
		return 0;
	/* Open the store at the *.nwb.zarr folder; the array path is below it. */
	end = strstr(path + strlen(stores), ".nwb.zarr/");
	ASSERT(end != NULL);
	end += strlen(".nwb.zarr");
	snprintf(dir, sizeof dir, "%.*s", (int)(end - path), path);
	rel = end + 1;
	ASSERT_OK(nz_store_open_dir(&s, dir, NZ_STORE_READ));
	snprintf(dir, sizeof dir, "%.*s", (int)(strlen(rel) - strlen("/.zarray")), rel);
	rc = nz_array_open(&a, s, dir);
	if (rc != 0)
		NZ__FAIL("opening %s", path);
	read_all(a, path);
	narrays++;
	nobject += nz_array_object_codec(a) != NZ_OBJECT_NONE;
	npickle += nz_array_object_codec(a) == NZ_OBJECT_PICKLE;
	nz_array_free(a);
	nz_store_free(s);
	return 0;
}

static void compare_raw(const char *store, const char *raw, uint64_t rows, uint64_t cols)
{
	char p[4200];
	nz_store *s = NULL;
	nz_array *a = NULL;
	uint64_t start[2] = { 0, 0 }, count[2] = { rows, cols };
	size_t n = (size_t)(rows * cols * 2);
	char *got = malloc(n), *want = malloc(n);
	FILE *f;
	snprintf(p, sizeof p, "%s/%s", stores, store);
	ASSERT_OK(nz_store_open_dir(&s, p, NZ_STORE_READ));
	ASSERT_OK(nz_array_open(&a, s, "acquisition/ElectricalSeries/data"));
	ASSERT_OK(nz_array_read_region(a, start, count, got, n));
	snprintf(p, sizeof p, "%s/../raw/%s", stores, raw);
	ASSERT((f = fopen(p, "rb")) != NULL);
	ASSERT(fread(want, 1, n, f) == n);
	fclose(f);
	ASSERT_MEM_EQ(got, want, n);
	/* A region straddling chunk edges equals the same slice of the raw. */
	start[0] = 4990, start[1] = 1, count[0] = 20, count[1] = 2;
	ASSERT_OK(nz_array_read_region(a, start, count, got, 80));
	for (size_t r = 0; r < 20; r++)
		ASSERT_MEM_EQ(got + r * 4, want + ((4990 + r) * cols + 1) * 2, 4);
	nz_array_free(a);
	nz_store_free(s);
	free(got);
	free(want);
}

int main(void)
{
	const char *data = getenv("NZ_REF");
	ASSERT(data != NULL);
	snprintf(stores, sizeof stores, "%s/zarr", data);
	ASSERT(nftw(stores, visit, 16, FTW_PHYS) == 0);
	printf("%d arrays read (%d object, %d pickle)\n", narrays, nobject, npickle);
	ASSERT(narrays > 300 && nobject > 200 && npickle > 0);
	compare_raw("reference.nwb.zarr", "reference_ephys.int16", 30000, 4);
	compare_raw("ecephys_units.nwb.zarr", "ecephys_units_ElectricalSeries.int16", 20000, 8);
	printf("ok\n");
	return 0;
}
