/* shard_tool read|write DIR KEY NCHUNKS START CRC32C: the shard byte layer
 * (src/zarr/shard.h) on the shard KEY of directory store DIR, for the
 * zarr-python interop script. START and CRC32C are 0/1 (index location
 * start, index crc32c).
 *   read:  prints one line per inner chunk: "-" when empty, else its bytes
 *          in hex (via nz__shard_read_index + nz__shard_read_chunk).
 *   write: reads lines "INDEX HEX" from stdin and writes the shard with
 *          nz__shard_writer (chunks in input order; others empty).
 * Errors: the message on stderr, exit 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nwbzarr.h"
#include "util/alloc.h"
#include "zarr/shard.h"

static int fail(void)
{
	fprintf(stderr, "shard_tool: %s\n", nz_error_last()->message);
	return 1;
}

static int do_read(nz_store *s, const char *key, const nz__shard_layout *l)
{
	nz__shard_entry *e = NULL;
	uint64_t size = 0;
	if (nz__shard_read_index(&e, &size, s, key, l) < 0)
		return fail();
	for (uint64_t i = 0; i < l->nchunks; i++) {
		unsigned char *p = NULL;
		size_t n = 0;
		if (nz__shard_read_chunk((void **)&p, &n, s, key, &e[i]) < 0)
			return fail();
		if (!p)
			fputc('-', stdout);
		for (size_t k = 0; k < n; k++)
			printf("%02x", p[k]);
		fputc('\n', stdout);
		nz_free(p);
	}
	nz__free(e);
	return 0;
}

static int do_write(nz_store *s, const char *key, const nz__shard_layout *l)
{
	static char line[1 << 20];
	static unsigned char bytes[1 << 19];
	nz__shard_writer *w = NULL;
	if (nz__shard_writer_begin(&w, s, key, l) < 0)
		return fail();
	while (fgets(line, sizeof line, stdin)) {
		char *hex;
		unsigned long long i = strtoull(line, &hex, 10);
		size_t n = 0;
		while (*hex == ' ')
			hex++;
		for (; hex[0] && hex[0] != '\n' && hex[1]; hex += 2) {
			unsigned v;
			if (sscanf(hex, "%2x", &v) != 1 || n == sizeof bytes) {
				fprintf(stderr, "shard_tool: bad input line\n");
				nz__shard_writer_abort(w);
				return 1;
			}
			bytes[n++] = (unsigned char)v;
		}
		if (nz__shard_writer_put(w, i, bytes, n) < 0) {
			nz__shard_writer_abort(w);
			return fail();
		}
	}
	return nz__shard_writer_end(w) < 0 ? fail() : 0;
}

int main(int argc, char **argv)
{
	nz_store *s = NULL;
	nz__shard_layout l = {0};
	int rc, write;
	if (argc != 7 || (strcmp(argv[1], "read") && strcmp(argv[1], "write"))) {
		fprintf(stderr, "usage: shard_tool read|write DIR KEY NCHUNKS START CRC32C\n");
		return 2;
	}
	write = argv[1][0] == 'w';
	l.nchunks = strtoull(argv[4], NULL, 10);
	l.index_at_start = atoi(argv[5]);
	l.index_crc32c = atoi(argv[6]);
	if (nz_store_open_dir(&s, argv[2], write ? NZ_STORE_WRITE : NZ_STORE_READ) < 0)
		return fail();
	rc = write ? do_write(s, argv[3], &l) : do_read(s, argv[3], &l);
	nz_store_free(s);
	return rc;
}
