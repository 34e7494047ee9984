/* The `nwbzarr` commands. Each returns the process exit status and prints
 * its own errors ("nwbzarr: <message>") on stderr. */
#ifndef NZ_CLI_CLI_H
#define NZ_CLI_CLI_H

#include <stdint.h>

#include "args.h"
#include "nwbzarr.h"

int nzc_convert(const nzc_args *a);
int nzc_info(const nzc_args *a);

/** Fill *c for a --compressor NAME (blosc-lz4, blosc-zstd, zstd, lz4, zlib,
 *  gzip, none) with its default level, or `clevel` when >= 0; -1 for an
 *  unknown name. Shared by the commands that take --compressor. */
int nzc_compressor_by_name(nz_compressor *c, const char *name, int clevel);

/** Print nz_error_last() as "nwbzarr: <message>"; returns 1. */
int nzc_fail(void);

/** The end-of-convert summary: a line on stdout, or JSON with --json;
 *  nothing with --quiet (unless --json). */
void nzc_report(const nzc_args *a, uint64_t frames, uint64_t channels, size_t itemsize,
		double rate, double elapsed_s, const char *sidecar);

/** Bytes of the regular files below `dir` (0 if unreadable); chunks_only
 *  skips metadata (names starting with '.'). */
uint64_t nzc_du(const char *dir, int chunks_only);

#endif
