/* The session container: streams, their channels, the start time (the
 * column sources are colsrc.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "recording/rec_impl.h"
#include "util/alloc.h"
#include "util/error.h"

int nz__rec_set(const char **field, const char *value)
{
	char *c = nz__strdup(value ? value : "");
	if (!c)
		return nz__error_set(NZ_ENOMEM, "out of memory reading a recording's metadata");
	nz__free((char *)*field);
	*field = c;
	return 0;
}

int nz__rec_push(nz_rec *r, nz_rec_stream **s)
{
	const char **strs[9];
	nz_rec_stream *st;
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 4;
		nz_rec_stream *g = nz__realloc(r->streams, cap * sizeof *g);
		if (!g)
			return nz__error_set(NZ_ENOMEM, "out of memory listing streams");
		r->streams = g;
		r->cap = cap;
	}
	st = &r->streams[r->n++];
	memset(st, 0, sizeof *st);
	st->format = "";
	strs[0] = &st->id;
	strs[1] = &st->band;
	strs[2] = &st->probe_part;
	strs[3] = &st->serial;
	strs[4] = &st->data_path;
	strs[5] = &st->meta_path;
	strs[6] = &st->create_time;
	strs[7] = &st->utc_time;
	strs[8] = NULL;
	for (size_t i = 0; strs[i]; i++)
		if (nz__rec_set(strs[i], "") < 0)
			return NZ_ENOMEM;
	*s = st;
	return 0;
}

int nz__rec_channels(nz_rec_stream *s, size_t n)
{
	nz_rec_channel *c = nz__calloc(n ? n : 1, sizeof *c);
	if (!c)
		return nz__error_set(NZ_ENOMEM, "out of memory for %zu channels", n);
	for (size_t i = 0; i < n; i++) {
		c[i].column = i;
		c[i].electrode = -1;
		c[i].shank = -1;
		c[i].x = c[i].y = NAN;
	}
	nz__free((void *)s->channels);
	s->channels = c;
	s->n_channels = n;
	return 0;
}

size_t nz_rec_count(const nz_rec *r)
{
	return r ? r->n : 0;
}

const nz_rec_stream *nz_rec_get(const nz_rec *r, size_t i)
{
	return r && i < r->n ? &r->streams[i] : NULL;
}

const nz_rec_stream *nz_rec_find(const nz_rec *r, const char *id)
{
	for (size_t i = 0; r && id && i < r->n; i++)
		if (strcmp(r->streams[i].id, id) == 0)
			return &r->streams[i];
	return NULL;
}

int nz_rec_start_time(const nz_rec *r, char *buf, size_t cap)
{
	const char *local = NULL;
	struct tm tm;
	time_t t;
	long off;
	size_t n;
	if (!buf || cap < 32)
		return nz__error_set(NZ_EINVAL, "nz_rec_start_time: buffer too small");
	for (size_t i = 0; r && i < r->n; i++) {
		const nz_rec_stream *s = &r->streams[i];
		if (*s->utc_time) {
			snprintf(buf, cap, "%s", s->utc_time);
			return 0;
		}
		/* the same format throughout: the smallest string is the earliest */
		if (*s->create_time && (!local || strcmp(s->create_time, local) < 0))
			local = s->create_time;
	}
	if (!local)
		return nz__error_set(NZ_ENOTFOUND, "no stream of the session states its start time");
	memset(&tm, 0, sizeof tm);
	if (sscanf(local, "%4d-%2d-%2dT%2d:%2d:%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
		   &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 6)
		return nz__error_set(NZ_EFORMAT, "fileCreateTime '%s' is not a date-time", local);
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	tm.tm_isdst = -1; /* the zone's rule for that date decides summer time */
	if ((t = mktime(&tm)) == (time_t)-1 || !localtime_r(&t, &tm))
		return nz__error_set(NZ_EFORMAT, "fileCreateTime '%s' is not a local time here",
				     local);
	off = tm.tm_gmtoff / 60;
	n = strftime(buf, cap, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, cap - n, "%c%02ld:%02ld", off < 0 ? '-' : '+', labs(off) / 60,
		 labs(off) % 60);
	return 0;
}

void nz_rec_free(nz_rec *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++) {
		nz_rec_stream *s = &r->streams[i];
		const char *strs[] = {s->id, s->band, s->probe, s->probe_part, s->serial,
				      s->data_path, s->meta_path, s->create_time, s->utc_time};
		for (size_t k = 0; k < sizeof strs / sizeof *strs; k++)
			nz__free((char *)strs[k]);
		nz__free((void *)s->channels);
	}
	nz__free(r->streams);
	nz__free(r);
}
