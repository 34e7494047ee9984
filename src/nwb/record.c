/* Recording (include/nwbzarr/record.h): starting, series of unknown length,
 * appends. Flushing, the pool's jobs and closing are in record_flush.c.
 *
 * A series' data and timestamps are created by the same code as any other
 * series (series.c, through the hdmf layer) with 0 frames, so a recording
 * writes whatever layout that layer writes; only their length grows. */
#include <stdio.h>
#include <string.h>

#include "nwb/record_impl.h"
#include "util/alloc.h"
#include "util/error.h"
#include "zarr/resize.h"

/* ---- starting -------------------------------------------------------------- */

static int check_opts(nz_record_opts *o, const nz_record_opts *in)
{
	if (in && in->version != NZ_RECORD_OPTS_VERSION)
		return nz__error_set(NZ_EINVAL, "record: options of an unknown version");
	*o = in ? *in : (nz_record_opts)NZ_RECORD_OPTS_INIT;
	if (o->flush_interval != o->flush_interval || o->flush_interval > 86400.0)
		return nz__error_set(NZ_EINVAL, "record: flush interval must be a number of "
				     "seconds up to 86400");
	if (o->threads < 0 || o->threads > 64)
		return nz__error_set(NZ_EINVAL, "record: threads must be 0..64, not %d", o->threads);
	if (o->flush_interval == 0)
		o->flush_interval = 1.0;
	if (o->threads == 0)
		o->threads = 2;
	return 0;
}

int nz_record_begin(nz_record **out, nz_nwb *f, const nz_record_opts *opts)
{
	nz_record_opts o = NZ_RECORD_OPTS_INIT;
	nz_record *r = NULL;
	int err;
	*out = NULL;
	if ((err = check_opts(&o, opts)) < 0)
		return err;
	if ((err = nz__nwb_check_open(f, "record")) < 0)
		return err;
	if (f->resume || f->skip_finalise || f->skip_series_data)
		return nz__error_set(NZ_EINVAL, "record '%s': a recording cannot resume or be "
				     "written by several processes (use nz_record_repair)", f->path);
	if (!(r = nz__calloc(1, sizeof *r)) ||
	    !(r->scratch = nz__calloc((size_t)o.threads, sizeof *r->scratch))) {
		nz__free(r);
		return nz__error_set(NZ_ENOMEM, "out of memory starting to record '%s'", f->path);
	}
	r->interval = o.flush_interval;
	r->budget = o.memory_budget ? o.memory_budget : (size_t)32 << 20;
	r->auto_budget = o.memory_budget == 0;
	r->threads = o.threads;
	pthread_mutex_init(&r->mu, NULL);
	pthread_mutex_init(&r->flush_mu, NULL);
	if ((err = nz__cond_init(&r->cv)) < 0 || (err = nz__cond_init(&r->stop_cv)) < 0)
		goto fail;
	for (int i = 0; i < o.threads; i++)
		if ((err = nz_scratch_new(&r->scratch[i])) < 0)
			goto fail;
	/* The pool's queue holds each series at most once (its scheduled
	 * flag), so a worker re-queueing a series never waits. */
	if ((err = nz__pool_new(&r->pool, o.threads, NZ_RECORD_MAX_SERIES + 1)) < 0)
		goto fail;
	/* Everything but the series, then a consolidated file that opens. */
	if ((err = nz__nwb_write_static(f)) < 0 || (err = nz__record_marker(r, f)) < 0 ||
	    (err = nz__record_consolidate(r, f->store)) < 0)
		goto fail;
	f->skip_series_data = 1; /* series data come from appends */
	r->f = f;
	if (r->interval > 0 && (err = nz__record_flusher_start(r)) < 0) {
		r->f = NULL;
		f->skip_series_data = 0;
		goto fail;
	}
	*out = r;
	return 0;
fail:
	nz__error_wrap("record '%s'", f->path);
	nz_record_free(r);
	return err;
}

int nz__record_marker(nz_record *r, nz_nwb *f)
{
	json_t *m = NULL, *list = json_array();
	int err = 0;
	for (size_t i = 0; list && i < r->n_series; i++)
		if (json_array_append_new(list, json_string(r->series[i]->path)) < 0) {
			json_decref(list);
			list = NULL;
		}
	if (!list) {
		err = nz__error_set(NZ_ENOMEM, "out of memory writing the recording marker");
		goto done;
	}
	if ((err = nz__hdmf_marker_read(&m, f->store)) < 0)
		goto done;
	if (json_object_set_new(m, "recording", json_pack("{s:O}", "series", list)) < 0) {
		err = nz__error_set(NZ_ENOMEM, "out of memory writing the recording marker");
		goto done;
	}
	err = nz__hdmf_marker_write(f->store, m);
done:
	json_decref(m);
	json_decref(list);
	return err;
}

int nz__record_consolidate(nz_record *r, nz_store *store)
{
	json_t *cm = NULL;
	int err;
	if ((err = nz_consolidate(store)) < 0 || (err = nz__consolidated_read(&cm, store)) < 0)
		return err;
	json_decref(r->cm);
	r->cm = cm;
	return 0;
}

/* ---- series ---------------------------------------------------------------- */

static int check_series(const nz_record *r, const nz_record_series_opts *o)
{
	if (!r || !o || o->version != NZ_RECORD_SERIES_OPTS_VERSION)
		return nz__error_set(NZ_EINVAL, "record: series options missing or of an unknown "
				     "version");
	if (r->closed)
		return nz__error_set(NZ_EINVAL, "record '%s': already closed", r->f->path);
	if (r->n_series == NZ_RECORD_MAX_SERIES)
		return nz__error_set(NZ_EINVAL, "record '%s': at most %d series", r->f->path,
				     NZ_RECORD_MAX_SERIES);
	if (!o->dtype || strcmp(o->dtype, "|O") == 0)
		return nz__error_set(NZ_EINVAL, "record series '%s': needs a fixed-size dtype",
				     o->series.name ? o->series.name : "(null)");
	if (o->series.timestamps || o->series.n_timestamps)
		return nz__error_set(NZ_EINVAL, "record series '%s': timestamps come with the "
				     "appends (set timestamps = 1), not in the series options",
				     o->series.name ? o->series.name : "(null)");
	if (o->electrical && o->channels == 0)
		return nz__error_set(NZ_EINVAL, "record series '%s': an ElectricalSeries needs "
				     "channels >= 1", o->series.name ? o->series.name : "(null)");
	return 0;
}

/* A recording's default shard on Zarr v3: whole inner chunks making about
 * a second (series.rate frames; 30000 without a rate), as a flush rewrites
 * the last shard every second; NULL (unsharded) when that is one chunk. */
static const uint64_t *default_shards(uint64_t *shards, const nz_record_series_opts *o,
				      const uint64_t *chunks, int ndim)
{
	double second = o->series.rate > 0 && o->series.rate < 1e12 ? o->series.rate : 30000.0;
	uint64_t n = (uint64_t)(second / (double)chunks[0] + 0.999999);
	if (n <= 1)
		return NULL;
	shards[0] = n * chunks[0];
	if (ndim == 2)
		shards[1] = chunks[1];
	return shards;
}

/* Create the series through series.c with 0 frames; timestamps, when
 * asked for, are chunked and sharded as the data's rows are. */
static int create_series(nz_record *r, const nz_record_series_opts *o)
{
	nz_nwb *f = r->f;
	nz_source *src = NULL;
	nz_nwb_series_opts so = o->series;
	uint64_t shape[2] = {0, o->channels}, chunks[2], shards[2];
	int ndim = o->channels ? 2 : 1, err;
	static const char dummy = 0; /* a 0-frame source still wants a buffer */
	if ((err = nz_source_from_memory(&src, &dummy, o->dtype, ndim, shape)) < 0)
		return err;
	if (o->series.chunks)
		memcpy(chunks, o->series.chunks, (size_t)ndim * sizeof *chunks);
	else
		nz_nwb_default_chunks(chunks, ndim, shape, nz_source_itemsize(src));
	if (so.version < 2)
		so.shards = NULL;
	so.version = NZ_NWB_SERIES_OPTS_VERSION;
	so.chunks = chunks;
	if (f->zarr_format == 3 && !so.shards)
		so.shards = default_shards(shards, o, chunks, ndim);
	if (f->zarr_format != 3)
		so.shards = NULL;
	f->grow_timestamps = o->timestamps ? chunks[0] : 0;
	f->grow_ts_shards = o->timestamps && so.shards ? so.shards[0] : 0;
	err = o->electrical ? nz_nwb_add_electrical_series(f, &so, src)
			    : nz_nwb_add_timeseries(f, &so, src);
	f->grow_timestamps = f->grow_ts_shards = 0;
	nz_source_free(src);
	return err;
}

static int open_series(nz_record_series *s, const nz_record_series_opts *o)
{
	char key[700];
	nz_store *store = s->r->f->store;
	int err;
	snprintf(key, sizeof key, "%s/data", s->path);
	if ((err = nz_array_open(&s->data, store, key)) < 0)
		return err;
	if (o->timestamps) {
		snprintf(key, sizeof key, "%s/timestamps", s->path);
		if ((err = nz_array_open(&s->ts, store, key)) < 0)
			return err;
	}
	s->ndim = nz_array_ndim(s->data);
	s->channels = s->ndim == 2 ? nz_array_shape(s->data)[1] : 1;
	s->unit = nz_array_chunks(s->data)[0];
	s->itemsize = nz_array_itemsize(s->data);
	if (s->ndim == 2 && nz_array_chunks(s->data)[1] != s->channels)
		return nz__error_set(NZ_EUNSUPPORTED, "record series '/%s': chunks must span every "
				     "channel (%llu)", s->path, (unsigned long long)s->channels);
	if (s->ts && nz_array_chunks(s->ts)[0] != s->unit)
		return nz__error_set(NZ_EUNSUPPORTED, "record series '/%s': the timestamps' chunks "
				     "differ from the data's", s->path);
	if ((err = nz__grow_new(&s->gdata, s->data)) < 0 ||
	    (s->ts && (err = nz__grow_new(&s->gts, s->ts)) < 0))
		return err;
	if (nz__mul_size(&s->row_bytes, (size_t)s->channels, s->itemsize) < 0 ||
	    nz__mul_size(&s->unit_bytes, (size_t)s->unit, s->row_bytes) < 0)
		return nz__error_set(NZ_EINVAL, "record series '/%s': a write unit is too large",
				     s->path);
	return 0;
}

int nz_record_add_series(nz_record_series **out, nz_record *r, const nz_record_series_opts *o)
{
	nz_record_series *s = NULL;
	char parent[600];
	int err;
	*out = NULL;
	if ((err = check_series(r, o)) < 0)
		return err;
	if ((err = nz__nwb_check_name(o->series.name, "series")) < 0)
		return err;
	if ((o->series.module ? (size_t)snprintf(parent, sizeof parent, "processing/%s/%s",
						   o->series.module, o->series.name)
			      : (size_t)snprintf(parent, sizeof parent, "acquisition/%s",
						 o->series.name)) >= sizeof parent)
		return nz__error_set(NZ_EINVAL, "series '%s': path too long", o->series.name);
	pthread_mutex_lock(&r->flush_mu);
	if ((err = nz__record_failed(r)) < 0)
		goto done;
	for (size_t i = 0; i < r->n_series; i++)
		if (strcmp(r->series[i]->path, parent) == 0) {
			err = nz__error_set(NZ_EEXISTS, "record '%s': series '/%s' was added before",
					    r->f->path, parent);
			goto done;
		}
	if (!(s = nz__calloc(1, sizeof *s)) || !(s->path = nz__strdup(parent))) {
		err = nz__error_set(NZ_ENOMEM, "out of memory adding series '%s'", o->series.name);
		goto done;
	}
	s->r = r;
	pthread_mutex_init(&s->mu, NULL);
	if ((err = create_series(r, o)) < 0 || (err = open_series(s, o)) < 0)
		goto done;
	r->series[r->n_series++] = s;
	if (r->auto_budget) { /* 32 MiB a series, at most 256 MiB */
		pthread_mutex_lock(&r->mu);
		r->budget = (r->n_series < 8 ? r->n_series : 8) * ((size_t)32 << 20);
		pthread_mutex_unlock(&r->mu);
	}
	/* In the marker before it is readable, so a repair finds it. */
	if ((err = nz__record_marker(r, r->f)) < 0 ||
	    (err = nz__record_consolidate(r, r->f->store)) < 0) {
		r->n_series--;
		goto done;
	}
	*out = s;
	s = NULL;
done:
	pthread_mutex_unlock(&r->flush_mu);
	if (s) {
		nz__grow_free(s->gdata);
		nz__grow_free(s->gts);
		nz_array_free(s->data);
		nz_array_free(s->ts);
		pthread_mutex_destroy(&s->mu);
		nz__free(s->path);
		nz__free(s);
	}
	return err;
}

uint64_t nz_record_series_frames(const nz_record_series *s)
{
	uint64_t n;
	if (!s)
		return 0;
	pthread_mutex_lock((pthread_mutex_t *)&s->mu);
	n = s->frames;
	pthread_mutex_unlock((pthread_mutex_t *)&s->mu);
	return n;
}

/* ---- appending ------------------------------------------------------------- */

/* Copy `take` frames starting at frame `from` of the caller's block into
 * the open unit at row `row`. */
static void copy_frames(nz_record_series *s, const void *frames, const void *const *planar,
			uint64_t from, uint64_t take, uint64_t row)
{
	unsigned char *dst = s->open->data + (size_t)row * s->row_bytes;
	if (frames) {
		memcpy(dst, (const unsigned char *)frames + (size_t)from * s->row_bytes,
		       (size_t)take * s->row_bytes);
		return;
	}
	for (uint64_t i = 0; i < take; i++, dst += s->row_bytes)
		for (uint64_t c = 0; c < s->channels; c++)
			memcpy(dst + (size_t)c * s->itemsize,
			       (const unsigned char *)planar[c] + (size_t)(from + i) * s->itemsize,
			       s->itemsize);
}

static int append(nz_record_series *s, const void *frames, const void *const *planar,
		  uint64_t n, const double *ts)
{
	uint64_t done = 0;
	int err = 0;
	if (!s)
		return nz__error_set(NZ_EINVAL, "record append: no series");
	if (n && !frames && !planar)
		return nz__error_set(NZ_EINVAL, "record append '/%s': no frames given", s->path);
	if (n && (ts != NULL) != (s->ts != NULL))
		return nz__error_set(NZ_EINVAL, "record append '/%s': %s", s->path,
				     s->ts ? "this series needs one timestamp per frame"
					   : "this series has a rate, not timestamps");
	if (s->r->closed)
		return nz__error_set(NZ_EINVAL, "record append '/%s': the file is closed", s->path);
	if ((err = nz__record_failed(s->r)) < 0)
		return err;
	pthread_mutex_lock(&s->mu);
	while (done < n) {
		uint64_t row = s->frames % s->unit, take = s->unit - row;
		if (take > n - done)
			take = n - done;
		if (!s->open && (err = nz__record_job_new(&s->open, s, s->frames / s->unit, 1)) < 0)
			break;
		copy_frames(s, frames, planar, done, take, row);
		if (ts)
			memcpy(s->open->ts + row, ts + done, (size_t)take * sizeof *ts);
		s->frames += take;
		done += take;
		s->open->nframes = row + take;
		if (s->frames % s->unit == 0) {
			nz__record_job *j = s->open;
			s->open = NULL;
			if ((err = nz__record_push(s, j)) < 0)
				break;
			/* Back-pressure without s->mu: a flush may take the
			 * series meanwhile (its state is whole between chunks). */
			pthread_mutex_unlock(&s->mu);
			err = nz__record_wait_budget(s->r);
			pthread_mutex_lock(&s->mu);
			if (err < 0)
				break;
		}
	}
	pthread_mutex_unlock(&s->mu);
	return err;
}

int nz_record_append(nz_record_series *s, const void *frames, uint64_t nframes,
		     const double *timestamps)
{
	return append(s, frames, NULL, nframes, timestamps);
}

int nz_record_append_planar(nz_record_series *s, const void *const *channels, uint64_t nframes,
			    const double *timestamps)
{
	return append(s, NULL, channels, nframes, timestamps);
}

/* ---- freeing --------------------------------------------------------------- */

void nz_record_free(nz_record *r)
{
	if (!r)
		return;
	nz__record_flusher_stop(r);
	/* Let the workers finish what is queued (units past the published
	 * length are invisible to readers and harmless to a repair): a worker
	 * re-queues its series, which must not race with the pool's end. */
	pthread_mutex_lock(&r->mu);
	for (size_t i = 0; i < r->n_series; i++)
		while (r->series[i]->scheduled)
			pthread_cond_wait(&r->cv, &r->mu);
	pthread_mutex_unlock(&r->mu);
	nz__pool_free(r->pool);
	for (size_t i = 0; i < r->n_series; i++) {
		nz_record_series *s = r->series[i];
		nz__record_job_free(s->open);
		while (s->head) {
			nz__record_job *j = s->head;
			s->head = j->next;
			nz__record_job_free(j);
		}
		while (s->spare) {
			nz__record_job *j = s->spare;
			s->spare = j->next;
			nz__record_job_free(j);
		}
		nz__grow_free(s->gdata);
		nz__grow_free(s->gts);
		nz_array_free(s->data);
		nz_array_free(s->ts);
		pthread_mutex_destroy(&s->mu);
		nz__free(s->path);
		nz__free(s);
	}
	for (int i = 0; r->scratch && i < r->threads; i++)
		nz_scratch_free(r->scratch[i]);
	nz__free(r->scratch);
	pthread_mutex_destroy(&r->mu);
	pthread_mutex_destroy(&r->flush_mu);
	pthread_cond_destroy(&r->cv);
	pthread_cond_destroy(&r->stop_cv);
	json_decref(r->cm);
	nz_nwb_free(r->f);
	nz__free(r);
}
