/* What the bare loops (bare_loop.c, bare_shard.c) share: they are baselines,
 * not library code, so an I/O error ends the program. */
#ifndef NZ_BENCH_BARE_IO_H
#define NZ_BENCH_BARE_IO_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* len bytes at pos of fd, or exit naming `what`. */
static void pread_all(int fd, void *buf, size_t len, off_t pos, const char *what)
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

#endif
