/* Finding every stream of a session from any of its paths: SpikeGLX runs
 * (<run>_gN_tN.imecN.ap.bin beside or in <run>_gN_imecN/ folders, CatGT's
 * _tcat names alike) and Open Ephys binary recordings (record node /
 * experimentN / recordingM / structure.oebin). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "recording/rec_impl.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/file.h"

#define MAX_META (1u << 20) /* the largest real .meta/.oebin here is 281 KB */

typedef struct paths {
	char **p;
	size_t n, cap;
} paths;

static void paths_free(paths *l)
{
	for (size_t i = 0; i < l->n; i++)
		nz__free(l->p[i]);
	nz__free(l->p);
}

static int paths_add(paths *l, const char *dir, const char *name)
{
	char buf[PATH_MAX];
	/* dir NULL: name is the whole path */
	if ((size_t)snprintf(buf, sizeof buf, "%s%s%s", dir ? dir : "", dir ? "/" : "", name) >=
	    sizeof buf)
		return nz__error_set(NZ_EINVAL, "path '%s/%s' is too long", dir ? dir : "", name);
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->p[i], buf) == 0)
			return 0;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		char **g = nz__realloc(l->p, cap * sizeof *g);
		if (!g)
			return nz__error_set(NZ_ENOMEM, "out of memory listing '%s'", dir);
		l->p = g;
		l->cap = cap;
	}
	if (!(l->p[l->n] = nz__strdup(buf)))
		return nz__error_set(NZ_ENOMEM, "out of memory listing '%s'", dir);
	l->n++;
	return 0;
}

static int ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);
	return a >= b && strcmp(s + a - b, tail) == 0;
}

static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* "<run>_g0_imec3": a SpikeGLX probe folder. */
static int probe_folder(const char *name)
{
	const char *m = strstr(name, "_imec");
	if (!m || !m[5])
		return 0;
	for (m += 5; *m; m++)
		if (*m < '0' || *m > '9')
			return 0;
	return 1;
}

/* Entries of `dir` that `want` accepts, sorted by name. */
static int list_dir(paths *out, const char *dir, int (*want)(const char *dir, const char *name))
{
	struct dirent **ents = NULL;
	int n = scandir(dir, &ents, NULL, alphasort), err = 0;
	if (n < 0)
		return nz__error_errno(errno, "cannot list", dir);
	for (int i = 0; i < n; i++) {
		if (!err && ents[i]->d_name[0] != '.' && want(dir, ents[i]->d_name))
			err = paths_add(out, dir, ents[i]->d_name);
		free(ents[i]);
	}
	free(ents);
	return err;
}

static int want_meta(const char *dir, const char *name)
{
	(void)dir;
	return ends_with(name, ".meta") && (strstr(name, ".imec") || strstr(name, ".nidq"));
}

static int want_probe_dir(const char *dir, const char *name)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	return probe_folder(name) && is_dir(p);
}

/* The run's stem: the name before ".imec" / ".nidq". */
static size_t stem_len(const char *base)
{
	const char *a = strstr(base, ".imec"), *b = strstr(base, ".nidq");
	const char *m = a && (!b || a < b) ? a : b;
	return m ? (size_t)(m - base) : 0;
}

static const char *base_of(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* Check a stream's data file and take its frame count from its size (a
 * .meta's fileSizeBytes is that of the original recording, often absent). */
static int data_frames(nz_rec_stream *s)
{
	struct stat st;
	uint64_t row = s->columns * 2;
	if (stat(s->data_path, &st) != 0)
		return nz__error_errno(errno, "cannot open the data file", s->data_path);
	if (!S_ISREG(st.st_mode))
		return nz__error_set(NZ_EFORMAT, "'%s' is not a regular file", s->data_path);
	if ((uint64_t)st.st_size % row)
		return nz__error_set(NZ_EFORMAT, "'%s': %llu bytes is not a whole number of frames "
				     "of %llu int16 channels (%s)", s->data_path,
				     (unsigned long long)st.st_size,
				     (unsigned long long)s->columns, s->meta_path);
	s->frames = (uint64_t)st.st_size / row;
	if (!s->frames)
		return nz__error_set(NZ_EFORMAT, "'%s' holds no frames", s->data_path);
	return 0;
}

static int parse_file(nz_rec *r, const char *path, int oebin, const char *node,
		      const char *recdir)
{
	char *text = NULL;
	size_t len = 0;
	int err;
	if ((err = nz__read_file(&text, &len, path, MAX_META)) < 0)
		return err;
	err = oebin ? nz__oebin_parse(r, text, len, path, node, recdir)
		    : nz__sglx_parse(r, text, len, path, base_of(path));
	nz__free(text);
	return err;
}

static int by_id(const void *a, const void *b)
{
	return strcmp(((const nz_rec_stream *)a)->id, ((const nz_rec_stream *)b)->id);
}

/* ---- SpikeGLX ----------------------------------------------------------- */

/* Every .meta of the run `stem` in dir and the probe folders beside it. */
static int sglx_metas(paths *metas, const char *dir, const char *want_stem, char *stem,
		      size_t cap)
{
	paths dirs = {0}, all = {0};
	char parent[PATH_MAX];
	int err;
	snprintf(parent, sizeof parent, "%s", dir);
	if ((err = paths_add(&dirs, NULL, dir)) < 0 ||
	    (err = list_dir(&dirs, dir, want_probe_dir)) < 0)
		goto done;
	if (probe_folder(base_of(dir)) && strrchr(parent, '/')) {
		*strrchr(parent, '/') = '\0';
		if ((err = paths_add(&dirs, NULL, parent)) < 0 ||
		    (err = list_dir(&dirs, parent, want_probe_dir)) < 0)
			goto done;
	}
	for (size_t i = 0; i < dirs.n; i++)
		if ((err = list_dir(&all, dirs.p[i], want_meta)) < 0)
			goto done;
	for (size_t i = 0; i < all.n; i++) {
		const char *b = base_of(all.p[i]);
		size_t n = stem_len(b);
		if (!n)
			continue;
		if (!want_stem && !*stem)
			snprintf(stem, cap, "%.*s", (int)n, b);
		if (want_stem ? (strlen(want_stem) == n && !strncmp(b, want_stem, n))
			      : (strlen(stem) == n && !strncmp(b, stem, n))) {
			if ((err = paths_add(metas, NULL, all.p[i])) < 0)
				goto done;
		} else if (!want_stem) {
			err = nz__error_set(NZ_EINVAL, "'%s' holds several SpikeGLX runs ('%s' and "
					    "'%.*s'): name a file of the one to convert", dir, stem,
					    (int)n, b);
			goto done;
		}
	}
done:
	paths_free(&dirs);
	paths_free(&all);
	return err;
}

static int sglx_open(nz_rec *r, const char *dir, const char *file)
{
	paths metas = {0};
	char stem[256] = "", want[256];
	int err;
	if (file) {
		size_t n = stem_len(base_of(file));
		if (!n || n >= sizeof want)
			return nz__error_set(NZ_EINVAL, "'%s' is not named like a SpikeGLX stream "
					     "(<run>_gN_tN.imecN.ap.bin, .nidq.meta, ...)", file);
		snprintf(want, sizeof want, "%.*s", (int)n, base_of(file));
	}
	if ((err = sglx_metas(&metas, dir, file ? want : NULL, stem, sizeof stem)) < 0)
		goto done;
	if (!metas.n) {
		err = nz__error_set(NZ_ENOTFOUND, file ? "'%s': no .meta of its run found beside it"
						       : "'%s' holds no SpikeGLX .meta and no Open "
							 "Ephys structure.oebin", file ? file : dir);
		goto done;
	}
	for (size_t i = 0; i < metas.n; i++) {
		const char *meta = metas.p[i];
		char bin[PATH_MAX];
		nz_rec_stream *s;
		if ((err = parse_file(r, meta, 0, NULL, NULL)) < 0)
			goto done;
		s = &r->streams[r->n - 1];
		snprintf(bin, sizeof bin, "%.*s.bin", (int)(strlen(meta) - 5), meta);
		if ((err = nz__rec_set(&s->data_path, bin)) < 0 || (err = data_frames(s)) < 0)
			goto done;
	}
done:
	paths_free(&metas);
	return err;
}

/* ---- Open Ephys -------------------------------------------------------- */

static int want_oe(const char *dir, const char *name)
{
	char p[PATH_MAX];
	if (strcmp(name, "structure.oebin") == 0)
		return 1;
	if (strcmp(name, "continuous") == 0 || strcmp(name, "events") == 0 ||
	    strcmp(name, "spikes") == 0)
		return 0;
	snprintf(p, sizeof p, "%s/%s", dir, name);
	return is_dir(p);
}

static int find_oebins(paths *out, const char *dir, int depth)
{
	paths here = {0};
	int err = list_dir(&here, dir, want_oe);
	for (size_t i = 0; !err && i < here.n; i++) {
		if (ends_with(here.p[i], "/structure.oebin"))
			err = paths_add(out, NULL, here.p[i]);
		else if (depth > 0)
			err = find_oebins(out, here.p[i], depth - 1);
	}
	paths_free(&here);
	return err;
}

/* The last `n` components of the folder of `path`, e.g. "experiment1/recording1". */
static const char *tail_dirs(const char *path, int n, char *buf, size_t cap)
{
	const char *p;
	int k = 0;
	snprintf(buf, cap, "%s", path);
	if (strrchr(buf, '/'))
		*strrchr(buf, '/') = '\0';
	for (p = buf + strlen(buf); p > buf; p--)
		if (p[-1] == '/' && ++k == n)
			break;
	return p;
}

/* sync_messages.txt (0.6+): "Software Time (milliseconds since midnight
 * Jan 1st 1970 UTC): N" gives the start in UTC. */
static int oe_start(nz_rec *r, size_t first, const char *recdir)
{
	char path[PATH_MAX + 32], iso[96], *text = NULL, *p;
	size_t len;
	long long ms;
	struct tm tm;
	time_t t;
	int err;
	snprintf(path, sizeof path, "%s/sync_messages.txt", recdir);
	if (access(path, F_OK) != 0)
		return 0;
	if ((err = nz__read_file(&text, &len, path, MAX_META)) < 0)
		return err;
	p = strstr(text, "1970 UTC): ");
	if (p && sscanf(p + 11, "%lld", &ms) == 1 && ms > 0 && ms < 32503680000000LL) {
		t = (time_t)(ms / 1000);
		gmtime_r(&t, &tm);
		snprintf(iso, sizeof iso, "%04d-%02d-%02dT%02d:%02d:%02d.%03lldZ", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms % 1000);
		for (size_t i = first; i < r->n && !err; i++)
			err = nz__rec_set(&r->streams[i].utc_time, iso);
	}
	nz__free(text);
	return err;
}

static int oe_open(nz_rec *r, const paths *oebins)
{
	char a[PATH_MAX], b[PATH_MAX];
	const char *rec0 = oebins->n ? tail_dirs(oebins->p[0], 2, a, sizeof a) : "";
	int err = 0;
	for (size_t i = 0; i < oebins->n; i++) {
		const char *path = oebins->p[i], *rec = tail_dirs(path, 2, b, sizeof b);
		char recdir[PATH_MAX], nodedir[PATH_MAX], settings[PATH_MAX + 64], *s;
		const char *node = NULL;
		size_t first = r->n;
		if (strcmp(rec, rec0) != 0)
			return nz__error_set(NZ_EINVAL, "several Open Ephys recordings ('%s' and "
					     "'%s'): name the folder of one", rec0, rec);
		snprintf(recdir, sizeof recdir, "%s", path);
		*strrchr(recdir, '/') = '\0';
		snprintf(nodedir, sizeof nodedir, "%s", recdir);
		settings[0] = '\0';
		/* <node>/experimentN/recordingM: the node's folder names it and holds
		 * settings.xml (settings_N.xml for experiment N > 1). */
		if ((s = strrchr(nodedir, '/')) && (*s = '\0', s = strrchr(nodedir, '/')) &&
		    strncmp(s + 1, "experiment", 10) == 0) {
			int exp = atoi(s + 11);
			*s = '\0';
			node = base_of(nodedir);
			if (exp > 1)
				snprintf(settings, sizeof settings, "%s/settings_%d.xml", nodedir, exp);
			else
				snprintf(settings, sizeof settings, "%s/settings.xml", nodedir);
		}
		if ((err = parse_file(r, path, 1, node, recdir)) < 0 ||
		    (err = oe_start(r, first, recdir)) < 0)
			return err;
		for (size_t k = first; k < r->n; k++)
			if ((err = data_frames(&r->streams[k])) < 0 ||
			    (settings[0] && (err = nz__oebin_settings(
						     &r->streams[k],
						     (nz_rec_channel *)r->streams[k].channels,
						     settings)) < 0))
				return err;
	}
	return 0;
}

/* ---- entry points ------------------------------------------------------ */

static int check_ids(const nz_rec *r)
{
	for (size_t i = 1; i < r->n; i++)
		if (strcmp(r->streams[i - 1].id, r->streams[i].id) == 0)
			return nz__error_set(NZ_EFORMAT, "two streams named '%s' ('%s' and '%s')",
					     r->streams[i].id, r->streams[i - 1].meta_path,
					     r->streams[i].meta_path);
	return 0;
}

int nz_rec_open(nz_rec **out, const char *path)
{
	nz_rec *r = NULL;
	paths oebins = {0};
	char dir[PATH_MAX], up[PATH_MAX + 32];
	struct stat st;
	int err;
	*out = NULL;
	if (!path || !*path || strlen(path) >= sizeof dir - 64)
		return nz__error_set(NZ_EINVAL, "recording path missing or too long");
	if (stat(path, &st) != 0)
		return nz__error_errno(errno, "cannot open", path);
	if (!(r = nz__calloc(1, sizeof *r)))
		return nz__error_set(NZ_ENOMEM, "out of memory opening '%s'", path);
	snprintf(dir, sizeof dir, "%s", path);
	while (strlen(dir) > 1 && dir[strlen(dir) - 1] == '/')
		dir[strlen(dir) - 1] = '\0';
	if (S_ISDIR(st.st_mode)) {
		if ((err = find_oebins(&oebins, dir, 4)) < 0)
			goto done;
		err = oebins.n ? oe_open(r, &oebins) : sglx_open(r, dir, NULL);
	} else if (!S_ISREG(st.st_mode)) {
		err = nz__error_set(NZ_EINVAL, "'%s' is neither a file nor a folder", path);
	} else if (ends_with(dir, "structure.oebin") || ends_with(dir, "continuous.dat")) {
		/* recordingM/structure.oebin, recordingM/continuous/<stream>/continuous.dat */
		snprintf(up, sizeof up, "%s", dir);
		*strrchr(up, '/') = '\0';
		if (ends_with(dir, "continuous.dat"))
			strcat(up, "/../..");
		strcat(up, "/structure.oebin");
		if ((err = paths_add(&oebins, NULL, up)) < 0)
			goto done;
		err = oe_open(r, &oebins);
	} else {
		char *slash = strrchr(dir, '/');
		if (slash)
			*slash = '\0';
		err = sglx_open(r, slash ? dir : ".", path);
	}
	if (err < 0)
		goto done;
	qsort(r->streams, r->n, sizeof *r->streams, by_id);
	if ((err = check_ids(r)) < 0)
		goto done;
	*out = r;
	r = NULL;
done:
	paths_free(&oebins);
	nz_rec_free(r);
	return err;
}

int nz_rec_parse_meta(nz_rec **out, const char *text, size_t len, const char *name)
{
	nz_rec *r = nz__calloc(1, sizeof *r);
	int err;
	*out = NULL;
	if (!r)
		return nz__error_set(NZ_ENOMEM, "out of memory parsing '%s'", name);
	if ((err = nz__sglx_parse(r, text, len, name, base_of(name))) < 0) {
		nz_rec_free(r);
		return err;
	}
	*out = r;
	return 0;
}

int nz_rec_parse_oebin(nz_rec **out, const char *text, size_t len, const char *what,
		       const char *node)
{
	nz_rec *r = nz__calloc(1, sizeof *r);
	int err;
	*out = NULL;
	if (!r)
		return nz__error_set(NZ_ENOMEM, "out of memory parsing '%s'", what);
	if ((err = nz__oebin_parse(r, text, len, what, node, NULL)) < 0 ||
	    (qsort(r->streams, r->n, sizeof *r->streams, by_id), err = check_ids(r)) < 0) {
		nz_rec_free(r);
		return err;
	}
	*out = r;
	return 0;
}
