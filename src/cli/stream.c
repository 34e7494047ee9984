/* `nwbzarr convert -` (or a FIFO): record frames as they come from a stream
 * of unknown length (include/nwbzarr/record.h), and `nwbzarr repair`. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#define READ_BYTES ((size_t)1 << 20)

int nzc_is_stream(const char *input)
{
	struct stat st;
	return strcmp(input, "-") == 0 || (stat(input, &st) == 0 && S_ISFIFO(st.st_mode));
}

/* Read up to `cap` bytes; 0 at end of stream, -1 on error (errno), -2
 * when interrupted by the signal that set *cancel. */
static ssize_t read_some(int fd, unsigned char *buf, size_t cap, const volatile sig_atomic_t *cancel)
{
	for (;;) {
		ssize_t n = read(fd, buf, cap);
		if (n >= 0)
			return n;
		if (errno != EINTR)
			return -1;
		if (*cancel)
			return -2;
	}
}

/* Discard the first `offset` bytes (a header); 0 or read_some's codes. */
static int skip_header(int fd, unsigned char *buf, uint64_t offset, const volatile sig_atomic_t *cancel)
{
	while (offset > 0) {
		ssize_t n = read_some(fd, buf, offset < READ_BYTES ? (size_t)offset : READ_BYTES, cancel);
		if (n <= 0)
			return n < 0 ? (int)n : 0;
		offset -= (uint64_t)n;
	}
	return 0;
}

int nzc_open_stream(int *fd, const char *input, const volatile sig_atomic_t *cancel)
{
	if (strcmp(input, "-") == 0) {
		*fd = 0;
		return 0;
	}
	/* A FIFO blocks here until a writer opens it (Ctrl-C stops the wait). */
	while (*cancel || (*fd = open(input, O_RDONLY | O_CLOEXEC)) < 0)
		if (errno != EINTR || *cancel) {
			fprintf(stderr, "nwbzarr: cannot open '%s': %s\n", input,
				*cancel ? "interrupted" : strerror(errno));
			return -1;
		}
	return 0;
}

int nzc_record_stream(nz_nwb **f, int fd, const nz_nwb_series_opts *so, const char *dtype,
		      uint64_t channels, const nzc_args *a, const volatile sig_atomic_t *cancel,
		      uint64_t *frames)
{
	nz_record_opts ro = NZ_RECORD_OPTS_INIT;
	nz_record_series_opts rs = NZ_RECORD_SERIES_OPTS_INIT;
	nz_record *r = NULL;
	nz_record_series *s = NULL;
	unsigned char *buf = NULL;
	size_t row = (size_t)channels * (size_t)(dtype[2] - '0'), have = 0;
	int rc = 1, stopped = 0;
	ssize_t n;

	*frames = 0;
	ro.flush_interval = a->have_flush_interval ? a->flush_interval : 0;
	rs.series = *so;
	rs.dtype = dtype;
	rs.channels = channels;
	if (!(buf = malloc(READ_BYTES + row))) {
		fprintf(stderr, "nwbzarr: out of memory reading '%s'\n", a->input);
		return 1;
	}
	if (nz_record_begin(&r, *f, &ro) < 0)
		goto fail;
	*f = NULL; /* the recorder owns the file */
	if (nz_record_add_series(&s, r, &rs) < 0)
		goto fail;
	if ((n = skip_header(fd, buf, a->offset, cancel)) < 0)
		goto read_failed;
	/* Whole frames are appended as they come; a partial frame waits in
	 * buf for the rest of its bytes. */
	while ((n = read_some(fd, buf + have, READ_BYTES + row - have, cancel)) > 0) {
		size_t whole;
		have += (size_t)n;
		whole = have / row;
		if (whole && nz_record_append(s, buf, whole, NULL) < 0)
			goto fail;
		memmove(buf, buf + whole * row, have - whole * row);
		have -= whole * row;
	}
	if (n == -2)
		stopped = 1;
	else if (n < 0)
		goto read_failed;
	if (have && !a->quiet)
		fprintf(stderr, "nwbzarr: '%s' ended %zu bytes into a frame of %zu: those bytes "
			"were dropped\n", a->input, have, row);
	if (stopped && !a->quiet)
		fprintf(stderr, "nwbzarr: interrupted: finalising the %llu frames that arrived\n",
			(unsigned long long)nz_record_series_frames(s));
	if (nz_record_close(r) < 0)
		goto fail;
	*frames = nz_record_series_frames(s);
	if (*frames == 0 && !a->quiet)
		fprintf(stderr, "nwbzarr: '%s' delivered no frames: the series is empty\n", a->input);
	rc = 0;
	goto done;
read_failed:
	fprintf(stderr, "nwbzarr: cannot read '%s': %s\n", a->input,
		n == -2 ? "interrupted" : strerror(errno));
	goto incomplete;
fail:
	nzc_fail();
incomplete:
	if (r)
		fprintf(stderr, "nwbzarr: '%s' holds every frame up to its last flush; finish it "
			"with `nwbzarr repair %s`\n", a->output, a->output);
done:
	nz_record_free(r);
	free(buf);
	return rc;
}

int nzc_repair(const nzc_args *a)
{
	nz_record_repair_info info;
	if (a->json && nzc_json_paths(a->input, NULL) < 0)
		return 2;
	if (nz_record_repair(&info, a->input, a->fsync) < 0)
		return nzc_fail();
	if (a->json)
		return nzc_print_json(json_pack("{s:s, s:I, s:I, s:I}", "file", a->input, "series",
						(json_int_t)info.series, "frames",
						(json_int_t)info.frames, "temp_removed",
						(json_int_t)info.temp_removed)) < 0;
	printf("repaired %s: %llu series, %llu frames kept, %llu temporary files removed\n",
	       a->input, (unsigned long long)info.series, (unsigned long long)info.frames,
	       (unsigned long long)info.temp_removed);
	return 0;
}
