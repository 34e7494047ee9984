/* The progress line of the long commands (convert, export, verify). */
#include <stdio.h>
#include <unistd.h>

#include "cli.h"

static int g_bar_open; /* the line awaits its newline; main thread only */

/* "\r  done / total MB  rate  ETA" on stderr, redrawn in place. */
static int progress(const nz_progress *p, void *ctx)
{
	double mb = p->bytes_done / 1e6, total = p->bytes_total / 1e6;
	double rate = p->elapsed_s > 0 ? mb / p->elapsed_s : 0;
	double eta = rate > 0 ? (total - mb) / rate : 0;
	(void)ctx;
	fprintf(stderr, "\r  %8.1f / %.1f MB  %7.1f MB/s  ETA %4.0fs ", mb, total, rate, eta);
	g_bar_open = p->bytes_done != p->bytes_total;
	if (!g_bar_open)
		fputc('\n', stderr);
	fflush(stderr);
	return 0;
}

nz_progress_cb nzc_progress_for(int quiet, int json)
{
	return !quiet && !json && isatty(STDERR_FILENO) ? progress : NULL;
}

void nzc_progress_end(void)
{
	if (g_bar_open)
		fputc('\n', stderr);
	g_bar_open = 0;
}
