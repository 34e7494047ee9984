/* The `nwbzarr` commands. Each returns the process exit status and prints
 * its own errors ("nwbzarr: <message>") on stderr. */
#ifndef NZ_CLI_CLI_H
#define NZ_CLI_CLI_H

#include <jansson.h>
#include <signal.h>
#include <stdint.h>

#include "args.h"
#include "nwbzarr.h"

int nzc_convert(const nzc_args *a);
int nzc_info(const nzc_args *a);
/** `nwbzarr repair FILE`: nz_record_repair, then a summary line (or JSON). */
int nzc_repair(const nzc_args *a);
/** 1 if the convert input is a stream: "-" (standard input) or a FIFO. */
int nzc_is_stream(const char *input);
/** Open the stream a convert records: "-" is standard input (fd 0), a FIFO
 *  is opened for reading, which waits for its writer (a SIGINT that sets
 *  *cancel stops the wait). 0, or -1 after printing why. */
int nzc_open_stream(int *fd, const char *input, const volatile sig_atomic_t *cancel);
/** Record the stream `fd` (a->input) into the file *f (metadata added) as the
 *  series `so` of `channels` x `dtype` frames until end of stream or until
 *  *cancel is set (SIGINT), then close it. *f is taken over by the
 *  recorder (NULL on return unless starting failed). *frames: frames
 *  written. Returns the exit status (0, or 1 after printing why and, when
 *  the store holds frames, that `nwbzarr repair` finishes it). */
int nzc_record_stream(nz_nwb **f, int fd, const nz_nwb_series_opts *so, const char *dtype,
		      uint64_t channels, const nzc_args *a, const volatile sig_atomic_t *cancel,
		      uint64_t *frames);

/** 1 when convert's input is a whole session (a folder, a .meta or a
 *  structure.oebin, or --streams given): nzc_convert_session converts it. */
int nzc_is_session(const nzc_args *a);
int nzc_convert_session(const nzc_args *a);

/** What every convert resolves alike (convert.c): the NWBFile fields
 *  (flag, else session JSON, else start / desc) and writing options. */
void nzc_file_opts(nz_nwb_opts *o, const nzc_args *a, const nz_session *s, const char *start,
		   const char *desc, const nz_compressor *comp);
/** The subject from the session JSON and the flags; 1 when there is one. */
int nzc_subject(nz_nwb_subject *sub, const nzc_args *a, const nz_session *s);
/** Usage errors in the resolved request (UTF-8, times, --overwrite onto
 *  an input): 0, or the exit status 2 after saying why. */
int nzc_check_request(const nzc_args *a, const nz_nwb_opts *o);
/** on 1: SIGINT/SIGTERM set the cancel flag nzc_file_opts hands the
 *  library; on 0: default handlers again. */
void nzc_catch_signals(int on);

/** Fill *c for a --compressor NAME (blosc-lz4, blosc-zstd, zstd, lz4, zlib,
 *  gzip, none) with its default level, or `clevel` when >= 0; -1 for an
 *  unknown name or a level the compressor does not take (nzc_codec_choose
 *  says why). Shared by the commands that take --compressor. */
int nzc_compressor_by_name(nz_compressor *c, const char *name, int clevel);

/** The progress callback of a long command: a line on stderr redrawn in
 *  place (MB done of total, MB/s, ETA), only when stderr is a terminal and
 *  neither --quiet nor --json was given; NULL otherwise. */
nz_progress_cb nzc_progress_for(int quiet, int json);

/** After a failed write, once the library let go of `output`: say whether
 *  it is incomplete (suggesting --resume only for failures a rerun can get
 *  past: I/O, full disk, cancel, memory) or, after --overwrite, that the old
 *  store was left as it was. `code` is the failure's nz_error_code. */
void nzc_say_output_state(const char *output, int code, int overwrite);

/** After a failed write: free the unfinished file *f (which puts back an
 *  --overwrite'n old store), set *f to NULL, then nzc_say_output_state with
 *  the failure's code. No-op when *f is NULL (nothing was started). */
void nzc_abandon_output(nz_nwb **f, const char *output, int overwrite);

/** End an unfinished progress line (before printing an error). */
void nzc_progress_end(void);

/** --json prints the paths it was given, and JSON text is UTF-8: 0 when
 *  both are (b may be NULL), else -1 after saying so (a usage error). */
int nzc_json_paths(const char *a, const char *b);

/** Print `j` (stolen; NULL = out of memory) as one line of JSON with
 *  sorted keys on stdout; -1 with a message on stderr when it cannot. */
int nzc_print_json(json_t *j);

/** Print nz_error_last() as "nwbzarr: <message>"; returns 1. */
int nzc_fail(void);

/** The end-of-convert summary: a line on stdout, or JSON with --json;
 *  nothing with --quiet (unless --json). jobs_used: the worker threads the
 *  engine actually ran (nz_write_stats.jobs), not the -j asked for.
 *  Returns 0, or -1 after a message when the JSON cannot be printed. */
int nzc_report(const nzc_args *a, uint64_t frames, uint64_t channels, size_t itemsize,
	       double rate, double elapsed_s, const char *sidecar, int jobs_used);

/** Bytes of the regular files below `dir` (0 if unreadable); chunks_only
 *  skips metadata (names starting with '.'). */
uint64_t nzc_du(const char *dir, int chunks_only);

#endif
