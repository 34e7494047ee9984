/* What the bare loops (bare_loop.c, bare_shard.c, bare_export.c) share: they
 * are baselines, not library code, so an I/O error ends the program. Static
 * inline: each loop uses only some of them. */
#ifndef NZ_BENCH_BARE_IO_H
#define NZ_BENCH_BARE_IO_H

#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

static inline void die(const char *what)
{
	perror(what);
	exit(1);
}

/* malloc, or exit. */
static inline void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		die("malloc");
	return p;
}

/* len bytes at pos of fd, or exit naming `what`. */
static inline void pread_all(int fd, void *buf, size_t len, off_t pos, const char *what)
{
	unsigned char *p = buf;
	while (len) {
		ssize_t n = pread(fd, p, len, pos);
		if (n <= 0)
			die(what);
		p += n;
		len -= (size_t)n;
		pos += n;
	}
}

/* len bytes to fd in writes of at most 1 MiB (as the library's store
 * writes: on Linux 6.18 / ext4 one large write costs several times the
 * kernel time of the same bytes in pieces), or exit naming `path`. */
static inline void write_all(int fd, const void *buf, size_t len, const char *path)
{
	const unsigned char *p = buf;
	while (len) {
		ssize_t n = write(fd, p, len > ((size_t)1 << 20) ? ((size_t)1 << 20) : len);
		if (n <= 0)
			die(path);
		p += n;
		len -= (size_t)n;
	}
}

/* CRC32C (Castagnoli, reflected 0x82F63B78), bitwise: it runs once per
 * shard over a few KiB of index (the shard index's checksum). */
static inline uint32_t crc32c(const unsigned char *p, size_t n)
{
	uint32_t c = 0xFFFFFFFFu;
	int k;
	while (n--) {
		c ^= *p++;
		for (k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
	}
	return c ^ 0xFFFFFFFFu;
}

static inline void put_le64(unsigned char *p, uint64_t v)
{
	int k;
	for (k = 0; k < 8; k++)
		p[k] = (unsigned char)(v >> (8 * k));
}

/* A shard's index (ilen bytes) and its CRC32C, little-endian, at the end of
 * the shard: the index_location "end" form. */
static inline void write_shard_index(int fd, const unsigned char *index, size_t ilen, const char *path)
{
	uint32_t crc = crc32c(index, ilen);
	unsigned char le[4] = {(unsigned char)crc, (unsigned char)(crc >> 8), (unsigned char)(crc >> 16),
			       (unsigned char)(crc >> 24)};
	write_all(fd, index, ilen, path);
	write_all(fd, le, 4, path);
}

/* A new sharded array's folders: `out` and `out/c` (neither may exist). */
static inline void make_shard_dirs(const char *out)
{
	char dir[4096];
	if (mkdir(out, 0777) != 0)
		die(out);
	if ((size_t)snprintf(dir, sizeof dir, "%s/c", out) >= sizeof dir || mkdir(dir, 0777) != 0)
		die(dir);
}

/* `jobs` (1..256) threads of fn, joined. */
static inline void run_workers(int jobs, void *(*fn)(void *))
{
	pthread_t th[256];
	int i;
	for (i = 0; i < jobs; i++)
		if (pthread_create(&th[i], NULL, fn, NULL) != 0)
			die("pthread_create");
	for (i = 0; i < jobs; i++)
		pthread_join(th[i], NULL);
}

/* OUT/zarr.json of a 2-D signed-integer array (bits per element) in shards
 * of `shard` made of `chunk`s, index at the end with CRC32C, inner codecs
 * bytes then `codec` (JSON text): the form zarr-python 3 writes, so that the
 * readers check a bare loop's output like every other variant's. */
static inline void write_shard_meta(const char *out, const uint64_t shape[2], int bits,
				    const uint64_t shard[2], const uint64_t chunk[2], const char *codec)
{
	char path[4096];
	FILE *f;

	if ((size_t)snprintf(path, sizeof path, "%s/zarr.json", out) >= sizeof path || !(f = fopen(path, "w")))
		die(path);
	fprintf(f,
		"{\"zarr_format\": 3, \"node_type\": \"array\", \"shape\": [%" PRIu64 ", %" PRIu64 "], "
		"\"data_type\": \"int%d\", \"fill_value\": 0, \"attributes\": {},\n"
		" \"chunk_grid\": {\"name\": \"regular\", \"configuration\": {\"chunk_shape\": [%" PRIu64
		", %" PRIu64 "]}},\n"
		" \"chunk_key_encoding\": {\"name\": \"default\", \"configuration\": {\"separator\": \"/\"}},\n"
		" \"codecs\": [{\"name\": \"sharding_indexed\", \"configuration\": {\"chunk_shape\": [%" PRIu64
		", %" PRIu64 "],\n"
		"   \"codecs\": [{\"name\": \"bytes\", \"configuration\": {\"endian\": \"little\"}},\n     %s],\n"
		"   \"index_codecs\": [{\"name\": \"bytes\", \"configuration\": {\"endian\": \"little\"}}, "
		"{\"name\": \"crc32c\"}],\n"
		"   \"index_location\": \"end\"}}]}\n",
		shape[0], shape[1], bits, shard[0], shard[1], chunk[0], chunk[1], codec);
	if (fclose(f) != 0)
		die(path);
}

#endif
