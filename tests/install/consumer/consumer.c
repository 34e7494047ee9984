/* A program of another project, built against an installed nwbzarr (see
 * tests/install/install.sh):  consumer OUT.zarr VERSION
 * Checks that the header and the library found are the expected version,
 * writes a small int32 array through the public API, reads it back, and
 * checks that an error names its path. */
#include <stdio.h>
#include <string.h>

#include <nwbzarr.h>

static int check(int ok, const char *what)
{
	if (!ok)
		fprintf(stderr, "consumer: %s\n", what);
	return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	nz_store *store = NULL, *missing = NULL;
	nz_array *array = NULL;
	uint64_t shape[2] = {5, 6}, chunks[2] = {2, 4}, start[2] = {0, 0};
	int32_t data[30], back[30];
	nz_array_opts opts = NZ_ARRAY_OPTS_INIT;
	char nowhere[4096];
	int err = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: consumer OUT.zarr VERSION\n");
		return 2;
	}
	if ((err = check(strcmp(nz_version(), argv[2]) == 0, "nz_version() differs")) < 0 ||
	    (err = check(strcmp(NZ_VERSION_STRING, argv[2]) == 0, "NZ_VERSION_STRING differs")) < 0)
		goto done;

	for (int i = 0; i < 30; i++)
		data[i] = i * 1000 - 7;
	opts.dtype = "<i4";
	opts.ndim = 2;
	opts.shape = shape;
	opts.chunks = chunks;
	if ((err = nz_store_open_dir(&store, argv[1], NZ_STORE_CREATE)) < 0 ||
	    (err = nz_array_create(&array, store, "x", &opts)) < 0 ||
	    (err = nz_array_write_all(array, data, sizeof data)) < 0 ||
	    (err = nz_array_read_region(array, start, shape, back, sizeof back)) < 0)
		goto done;
	if ((err = check(memcmp(data, back, sizeof data) == 0, "read back differs")) < 0)
		goto done;

	snprintf(nowhere, sizeof nowhere, "%s/no/such/dir", argv[1]);
	err = nz_store_open_dir(&missing, nowhere, NZ_STORE_READ);
	if ((err = check(err < 0 && strstr(nz_error_last()->message, nowhere) != NULL,
			 "opening a missing directory did not fail naming it")) < 0)
		goto done;
	err = 0;
done:
	if (err < 0 && nz_error_last()->code < 0)
		fprintf(stderr, "consumer: %s\n", nz_error_last()->message);
	nz_array_free(array);
	nz_store_free(missing);
	nz_store_free(store);
	return err < 0 ? 1 : 0;
}
