/* Crash safety of an NWB write (docs/reliability.md): the output store with
 * its incomplete marker, and resuming an interrupted write.
 *
 * A resume replays the whole write on the comparing store of
 * hdmf/resume.c: equal metadata documents are left alone, a different one
 * means the request differs from the interrupted one (NZ_EMISMATCH naming
 * the key); series data keep every stored chunk that decodes to exactly the
 * data it should hold. Object ids and the default create date come from
 * the marker, so the finished store is byte for byte what an uninterrupted
 * run writes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "nwb/nwb_impl.h"
#include "util/alloc.h"
#include "util/error.h"

/* ---- opening the output ---------------------------------------------------- */

static int random_seed(uint64_t *seed)
{
	while (*seed == 0) {
		ssize_t n = getrandom(seed, sizeof *seed, 0);
		if (n < 0 && errno != EINTR)
			return nz__error_errno(errno, "getrandom for the object-id seed", "");
	}
	return 0;
}

static void now_iso(char *buf, size_t cap)
{
	time_t t = time(NULL);
	struct tm tm;
	size_t n;
	localtime_r(&t, &tm);
	n = strftime(buf, cap, "%Y-%m-%dT%H:%M:%S%z", &tm);
	if (n >= 5 && n + 1 < cap) { /* +hhmm -> +hh:mm, as NWB spells it */
		memmove(buf + n - 1, buf + n - 2, 3);
		buf[n - 2] = ':';
	}
}

/* Seed and create date from the marker; values the caller gave must agree. */
static int adopt_marker(nz_nwb *f, const nz_nwb_opts *o, const json_t *m, uint64_t *seed)
{
	const char *s, *date;
	char *end;
	int err = 0;
	s = json_string_value(json_object_get(m, "object_id_seed"));
	date = json_string_value(json_object_get(m, "file_create_date"));
	errno = 0;
	*seed = s ? strtoull(s, &end, 10) : 0;
	if (!s || !date || errno || *end || *seed == 0 || strlen(date) >= sizeof f->create_date) {
		err = nz__error_set(NZ_EFORMAT, "'%s/%s' lacks a valid object_id_seed or "
				    "file_create_date: cannot resume (use --overwrite)", f->path,
				    NZ_INCOMPLETE_MARKER);
		goto done;
	}
	if (o->object_id_seed && o->object_id_seed != *seed) {
		err = nz__error_set(NZ_EMISMATCH, "resume: '%s' was started with object-id seed "
				    "%s, not %llu", f->path, s, (unsigned long long)o->object_id_seed);
		goto done;
	}
	if (o->file_create_date && strcmp(o->file_create_date, date) != 0) {
		err = nz__error_set(NZ_EMISMATCH, "resume: '%s' was started with file_create_date "
				    "%s, not %s", f->path, date, o->file_create_date);
		goto done;
	}
	strcpy(f->create_date, date);
done:
	return err;
}

int nz__nwb_open_output(nz_nwb *f, const nz_nwb_opts *o, uint64_t *seed)
{
	unsigned int flags = o->fsync ? NZ_STORE_FSYNC : 0;
	json_t *req = NULL;
	char text[32];
	int err;
	*seed = o->object_id_seed;
	if (o->resume && o->overwrite)
		return nz__error_set(NZ_EINVAL, "'%s': resume and overwrite exclude each other",
				     f->path);
	if (o->resume) {
		err = nz__hdmf_resume_open(&f->store, &req, &f->resumed.temp_removed, f->path, flags);
		if (err == 0 && f->store)
			err = adopt_marker(f, o, req, seed);
		json_decref(req);
		if (f->resume_info)
			*f->resume_info = f->resumed;
		if (err < 0 || f->store) {
			f->resume = err == 0;
			return err;
		}
	}
	if ((err = random_seed(seed)) < 0)
		return err;
	if (o->file_create_date)
		snprintf(f->create_date, sizeof f->create_date, "%s", o->file_create_date);
	else
		now_iso(f->create_date, sizeof f->create_date);
	snprintf(text, sizeof text, "%llu", (unsigned long long)*seed);
	if ((err = nz_store_open_dir(&f->store, f->path, flags | NZ_STORE_CREATE)) < 0)
		return err;
	/* The marker first: from now on the directory never looks complete
	 * until nz_nwb_close removes it. */
	if (!(req = json_pack("{s:s, s:s}", "object_id_seed", text, "file_create_date",
			      f->create_date)))
		return nz__error_set(NZ_ENOMEM, "out of memory creating '%s'", f->path);
	err = nz__hdmf_marker_write(f->store, req);
	json_decref(req);
	return err;
}

/* ---- series data ------------------------------------------------------------ */

static int write_now(nz_nwb *f, nz_array *const *a, nz_source *const *src, size_t n)
{
	int err;
	if (!f->resume)
		return nz_write_arrays(a, src, n, &f->wopts);
	err = nz__hdmf_write_resumed_n(a, src, n, f->store, &f->wopts, &f->resumed);
	if (f->resume_info)
		*f->resume_info = f->resumed;
	return err;
}

int nz__nwb_write_data(nz_nwb *f, nz_array **a, nz_source *src)
{
	if (!f->batching)
		return write_now(f, a, &src, 1);
	if (f->batch_n == f->batch_cap) {
		size_t cap = f->batch_cap ? 2 * f->batch_cap : 8;
		nz_array **na = nz__realloc(f->batch_a, cap * sizeof *na);
		nz_source **ns = na ? nz__realloc(f->batch_src, cap * sizeof *ns) : NULL;
		if (na)
			f->batch_a = na;
		if (!na || !ns)
			return nz__error_set(NZ_ENOMEM, "out of memory queueing the data of '%s'",
					     nz_array_path(*a));
		f->batch_src = ns;
		f->batch_cap = cap;
	}
	f->batch_a[f->batch_n] = *a;
	f->batch_src[f->batch_n++] = src;
	*a = NULL;
	return 0;
}

void nz__nwb_batch_begin(nz_nwb *f)
{
	nz__nwb_batch_end(f);
	f->batching = 1;
}

int nz__nwb_batch_write(nz_nwb *f)
{
	int err = f->batch_n ? write_now(f, f->batch_a, f->batch_src, f->batch_n) : 0;
	nz__nwb_batch_end(f);
	return err;
}

void nz__nwb_batch_end(nz_nwb *f)
{
	for (size_t i = 0; i < f->batch_n; i++)
		nz_array_free(f->batch_a[i]);
	nz__free(f->batch_a);
	nz__free(f->batch_src);
	f->batch_a = NULL;
	f->batch_src = NULL;
	f->batch_n = f->batch_cap = 0;
	f->batching = 0;
}
