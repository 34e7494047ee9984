/* SpikeGLX .meta files: key=value lines (CRLF or LF, values may be empty
 * or end in blanks), the `~` tables last. One .meta describes one stream:
 * an imec probe's AP or LF band, or the NIDQ board. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recording/rec_impl.h"
#include "util/alloc.h"
#include "util/error.h"

void nz__kv_free(nz__kv *kv)
{
	nz__free(kv->buf);
	nz__free(kv->key);
	nz__free(kv->val);
	memset(kv, 0, sizeof *kv);
}

int nz__kv_parse(nz__kv *kv, const char *text, size_t len, const char *what)
{
	size_t lines = 1, line = 0;
	char *p, *end;
	memset(kv, 0, sizeof *kv);
	kv->what = what;
	if (memchr(text, '\0', len))
		return nz__error_set(NZ_EFORMAT, "%s: binary data in a SpikeGLX .meta file", what);
	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	if (!(kv->buf = nz__malloc(len + 1)) || !(kv->key = nz__calloc(lines, sizeof *kv->key)) ||
	    !(kv->val = nz__calloc(lines, sizeof *kv->val))) {
		nz__kv_free(kv);
		return nz__error_set(NZ_ENOMEM, "out of memory reading '%s'", what);
	}
	memcpy(kv->buf, text, len);
	kv->buf[len] = '\0';
	for (p = kv->buf, end = kv->buf + len; p < end; p++) {
		char *eol = memchr(p, '\n', (size_t)(end - p)), *eq, *t;
		line++;
		if (!eol)
			eol = end;
		*eol = '\0';
		for (t = eol; t > p && isspace((unsigned char)t[-1]); t--)
			t[-1] = '\0';
		if (*p) {
			if (!(eq = strchr(p, '=')) || eq == p) {
				nz__kv_free(kv);
				return nz__error_set(NZ_EFORMAT, "%s:%zu: not a key=value line", what,
						     line);
			}
			*eq = '\0';
			kv->key[kv->n] = p;
			kv->val[kv->n++] = eq + 1;
		}
		p = eol;
	}
	kv->what = what;
	return 0;
}

const char *nz__kv_get(const nz__kv *kv, const char *key)
{
	for (size_t i = 0; i < kv->n; i++)
		if (strcmp(kv->key[i], key) == 0)
			return kv->val[i];
	return NULL;
}

int nz__kv_num(const nz__kv *kv, const char *key, double *v)
{
	const char *s = nz__kv_get(kv, key);
	char *stop;
	double d;
	if (!s || !*s)
		return 1;
	d = strtod(s, &stop);
	if (stop == s || *stop || !isfinite(d))
		return nz__error_set(NZ_EFORMAT, "%s: %s='%s' is not a number", kv->what, key, s);
	*v = d;
	return 0;
}

/* A required number in (lo, hi]. */
static int need_num(const nz__kv *kv, const char *key, double lo, double hi, double *v)
{
	int rc = nz__kv_num(kv, key, v);
	if (rc < 0)
		return rc;
	if (rc == 1)
		return nz__error_set(NZ_EFORMAT, "%s: %s is missing", kv->what, key);
	if (!(*v > lo && *v <= hi))
		return nz__error_set(NZ_EFORMAT, "%s: %s=%g is out of range", kv->what, key, *v);
	return 0;
}

/* From the file name: "<run>.imec1.ap.meta" -> probe 1 and band "ap",
 * "<run>.imec.lf.meta" (3A) -> probe 0, "<run>.nidq.meta" -> nidq. */
static int name_parts(const char *name, const char *what, int *probe, char *band, char *id,
		      size_t cap)
{
	const char *im = strstr(name, ".imec"), *b;
	*probe = -1;
	if (strstr(name, ".nidq.")) {
		snprintf(band, 8, "nidq");
		snprintf(id, cap, "nidq");
		return 0;
	}
	if (strstr(name, ".obx."))
		return nz__error_set(NZ_EFORMAT, "%s: OneBox (.obx) streams are not supported", what);
	if (!im)
		return nz__error_set(NZ_EFORMAT, "%s: the name has neither .imecN. nor .nidq. "
				     "(SpikeGLX names a stream <run>_gN_tN.imecN.ap.meta)", what);
	b = im + 5;
	*probe = 0;
	if (isdigit((unsigned char)*b)) {
		long p = strtol(b, (char **)&b, 10);
		if (p > 99)
			return nz__error_set(NZ_EFORMAT, "%s: probe index %ld", what, p);
		*probe = (int)p;
	}
	if (strncmp(b, ".ap.", 4) != 0 && strncmp(b, ".lf.", 4) != 0)
		return nz__error_set(NZ_EFORMAT, "%s: the name says neither .ap. nor .lf.", what);
	snprintf(band, 8, "%.2s", b + 1);
	snprintf(id, cap, "%.*s", (int)(b + 3 - (im + 1)), im + 1);
	return 0;
}

/* ~snsChanMap=(header)(NAME;acq:disp)...: one entry per saved column, in
 * file order; the name's letters say what the channel is. */
static int chan_map(nz_rec_stream *s, nz_rec_channel *ch, const nz__kv *kv, int nidq)
{
	const char *m = nz__kv_get(kv, "~snsChanMap"), *p;
	size_t i = 0;
	if (!m || !*m)
		return nz__error_set(NZ_EFORMAT, "%s: ~snsChanMap is missing", kv->what);
	if (*m != '(' || !(p = strchr(m, ')')))
		return nz__error_set(NZ_EFORMAT, "%s: ~snsChanMap has no (header)", kv->what);
	for (p++; *p; i++) {
		char name[24];
		const char *close = strchr(p, ')'), *semi;
		size_t n, letters = 0;
		long num;
		char *stop;
		if (*p != '(' || !close || !(semi = memchr(p, ';', (size_t)(close - p))) ||
		    (n = (size_t)(semi - p - 1)) == 0 || n >= sizeof name)
			return nz__error_set(NZ_EFORMAT, "%s: ~snsChanMap entry %zu is not "
					     "(NAME;acq:disp)", kv->what, i);
		if (i >= s->n_channels)
			return nz__error_set(NZ_EFORMAT, "%s: ~snsChanMap has more entries than "
					     "nSavedChans=%zu", kv->what, s->n_channels);
		memcpy(name, p + 1, n);
		name[n] = '\0';
		while (isalpha((unsigned char)name[letters]))
			letters++;
		num = strtol(name + letters, &stop, 10);
		if (letters == 0 || letters > 2 || stop == name + letters || *stop || num < 0 ||
		    num > 100000)
			return nz__error_set(NZ_EFORMAT, "%s: ~snsChanMap entry %zu: channel name "
					     "'%s' is not like AP12", kv->what, i, name);
		snprintf(ch[i].name, sizeof ch[i].name, "%s", name);
		if (!nidq && (strncmp(name, "AP", letters) == 0 || strncmp(name, "LF", letters) == 0)) {
			ch[i].kind = NZ_REC_NEURAL;
			ch[i].electrode = num;
		} else if (!nidq && strncmp(name, "SY", letters) == 0) {
			ch[i].kind = NZ_REC_SYNC;
		} else if (nidq && (!strncmp(name, "MN", letters) || !strncmp(name, "MA", letters) ||
				    !strncmp(name, "XA", letters))) {
			ch[i].kind = NZ_REC_ANALOG;
			snprintf(ch[i].group, sizeof ch[i].group, "%.2s", name);
		} else if (nidq && strncmp(name, "XD", letters) == 0) {
			ch[i].kind = NZ_REC_DIGITAL;
			snprintf(ch[i].group, sizeof ch[i].group, "XD");
		} else {
			return nz__error_set(NZ_EFORMAT, "%s: ~snsChanMap entry %zu: unknown channel "
					     "kind '%s'", kv->what, i, name);
		}
		p = close + 1;
	}
	if (i != s->n_channels)
		return nz__error_set(NZ_EFORMAT, "%s: ~snsChanMap has %zu entries for "
				     "nSavedChans=%zu", kv->what, i, s->n_channels);
	return 0;
}

/* NIDQ: V = count x niAiRangeMax / niMaxInt / gain (MN and MA channels
 * have their amplifier gains, XA gain 1). */
static int nidq_gains(nz_rec_channel *ch, size_t n, const nz__kv *kv)
{
	double range, maxint = 32768, mn = 1, ma = 1;
	int err;
	if ((err = need_num(kv, "niAiRangeMax", 0, 1e3, &range)) < 0 ||
	    (err = nz__kv_num(kv, "niMaxInt", &maxint)) < 0 ||
	    (err = nz__kv_num(kv, "niMNGain", &mn)) < 0 ||
	    (err = nz__kv_num(kv, "niMAGain", &ma)) < 0)
		return err;
	if (!(maxint >= 1 && maxint <= 32768) || !(mn > 0) || !(ma > 0))
		return nz__error_set(NZ_EFORMAT, "%s: niMaxInt/niMNGain/niMAGain out of range",
				     kv->what);
	for (size_t i = 0; i < n; i++)
		if (ch[i].kind == NZ_REC_ANALOG)
			ch[i].volts_per_count = range / maxint /
						(ch[i].group[1] == 'N' ? mn : ch[i].group[1] == 'A' &&
						 ch[i].group[0] == 'M' ? ma : 1);
	return 0;
}

int nz__sglx_parse(nz_rec *r, const char *text, size_t len, const char *what, const char *name)
{
	nz__kv kv;
	nz_rec_stream *s;
	nz_rec_channel *ch;
	char band[8], id[32], probe[16];
	double chans, rate, first = 0;
	const char *v;
	int err, pidx, nidq;
	if ((err = nz__kv_parse(&kv, text, len, what)) < 0)
		return err;
	if ((err = name_parts(name, what, &pidx, band, id, sizeof id)) < 0)
		goto done;
	nidq = pidx < 0;
	v = nz__kv_get(&kv, "typeThis");
	if (v && strcmp(v, nidq ? "nidq" : "imec") != 0) {
		err = nz__error_set(NZ_EFORMAT, "%s: typeThis=%s but the name says %s", what, v,
				    nidq ? "nidq" : "imec");
		goto done;
	}
	if ((err = need_num(&kv, "nSavedChans", 0, 100000, &chans)) < 0 ||
	    (err = need_num(&kv, nidq ? "niSampRate" : "imSampRate", 0, 1e7, &rate)) < 0)
		goto done;
	if (chans != floor(chans)) {
		err = nz__error_set(NZ_EFORMAT, "%s: nSavedChans=%g is not an integer", what, chans);
		goto done;
	}
	if ((err = nz__kv_num(&kv, "firstSample", &first)) < 0)
		goto done;
	if (!(first >= 0 && first < 9e15)) {
		err = nz__error_set(NZ_EFORMAT, "%s: firstSample out of range", what);
		goto done;
	}
	if ((err = nz__rec_push(r, &s)) < 0)
		goto done;
	s->format = "spikeglx";
	s->rate = rate;
	s->first_time = first / rate;
	s->columns = (uint64_t)chans;
	if ((err = nz__rec_set(&s->id, id)) < 0 || (err = nz__rec_set(&s->band, band)) < 0 ||
	    (err = nz__rec_set(&s->meta_path, what)) < 0 ||
	    (err = nz__rec_channels(s, (size_t)chans)) < 0)
		goto done;
	v = nz__kv_get(&kv, "fileCreateTime");
	if (v && *v) {
		int y, mo, d, h, mi, sec, used = 0;
		if (sscanf(v, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &used) != 6 ||
		    v[used] || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) {
			err = nz__error_set(NZ_EFORMAT, "%s: fileCreateTime='%s' is not "
					    "YYYY-MM-DDTHH:MM:SS", what, v);
			goto done;
		}
		if ((err = nz__rec_set(&s->create_time, v)) < 0)
			goto done;
	}
	ch = (nz_rec_channel *)s->channels;
	if ((err = chan_map(s, ch, &kv, nidq)) < 0)
		goto done;
	if (nidq) {
		err = nidq_gains(ch, s->n_channels, &kv);
		goto done;
	}
	snprintf(probe, sizeof probe, "Imec%d", pidx);
	if ((err = nz__rec_set(&s->probe, probe)) < 0 ||
	    (err = nz__rec_set(&s->serial, nz__kv_get(&kv, "imDatPrb_sn")
						   ? nz__kv_get(&kv, "imDatPrb_sn")
						   : nz__kv_get(&kv, "imProbeSN"))) < 0)
		goto done;
	for (size_t i = 0; i < s->n_channels; i++)
		if (ch[i].kind == NZ_REC_NEURAL && (ch[i].name[0] == 'L') != (band[0] == 'l')) {
			err = nz__error_set(NZ_EFORMAT, "%s: channel %s in an %s file", what,
					    ch[i].name, band);
			goto done;
		}
	err = nz__sglx_probe(s, ch, &kv, band[0] == 'l');
done:
	nz__kv_free(&kv);
	return err;
}
