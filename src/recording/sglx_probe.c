/* Neuropixels probes in SpikeGLX metadata: which type, the gain of each
 * channel and where each electrode sits. The table below gives defaults
 * only; what the .meta states (imMaxInt, imChan0apGain, ~snsGeomMap) wins,
 * so a type not listed still converts when its file says enough. The list
 * and the rules are in docs/recordings.md. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recording/rec_impl.h"
#include "util/alloc.h"
#include "util/error.h"

enum geom { G_NONE, G_NP1, G_NP2_1, G_NP2_4 };
enum gains { GAIN_FIXED, GAIN_ENTRY, GAIN_HEADER };

#define TYPE_3A (-1) /* phase 3A files have no imDatPrb_type */

static const struct ptype {
	int type;
	const char *name;
	int width;          /* ints per ~imroTbl entry */
	enum gains gains;
	double gain;        /* GAIN_FIXED: the AP gain */
	double maxint;      /* when imMaxInt is absent */
	enum geom geom;     /* when ~snsGeomMap is absent */
} types[] = {
	{TYPE_3A, "NP1.0 phase 3A", 5, GAIN_ENTRY, 0, 512, G_NP1},
	{0, "NP1.0", 6, GAIN_ENTRY, 0, 512, G_NP1},
	{1020, "NP1.0 NHP", 6, GAIN_ENTRY, 0, 512, G_NONE},
	{1030, "NP1.0 NHP", 6, GAIN_ENTRY, 0, 512, G_NONE},
	{1100, "NP1.0 UHD", 6, GAIN_ENTRY, 0, 512, G_NONE},
	{1110, "NP1.0 UHD programmable", 3, GAIN_HEADER, 0, 512, G_NONE},
	{1120, "NP1.0 UHD", 6, GAIN_ENTRY, 0, 512, G_NONE},
	{1121, "NP1.0 UHD", 6, GAIN_ENTRY, 0, 512, G_NONE},
	{1122, "NP1.0 UHD", 6, GAIN_ENTRY, 0, 512, G_NONE},
	{1123, "NP1.0 UHD", 6, GAIN_ENTRY, 0, 512, G_NONE},
	{1200, "NP1.0 NHP", 6, GAIN_ENTRY, 0, 512, G_NONE},
	{1300, "NP1.0 opto", 6, GAIN_ENTRY, 0, 512, G_NONE},
	{21, "NP2.0 single shank", 4, GAIN_FIXED, 80, 8192, G_NP2_1},
	{24, "NP2.0 four shank", 5, GAIN_FIXED, 80, 8192, G_NP2_4},
	{2013, "NP2.0 four shank (NP2013)", 5, GAIN_FIXED, 100, 2048, G_NP2_4},
	{2014, "NP2.0 four shank (NP2014)", 5, GAIN_FIXED, 100, 2048, G_NP2_4},
	{2020, "NP2.0 quad base", 5, GAIN_FIXED, 100, 2048, G_NP2_4},
	{2021, "NP2.0 quad base", 5, GAIN_FIXED, 100, 2048, G_NP2_4},
};

void nz__imro_free(nz__imro *t)
{
	nz__free(t->v);
	memset(t, 0, sizeof *t);
}

/* "(h0,h1,...)(a b c)(a b c)...": every entry the same number of ints. */
int nz__imro_parse(nz__imro *t, const char *s, const char *what)
{
	const char *p, *close;
	size_t cap = 0;
	memset(t, 0, sizeof *t);
	if (!s || *s != '(' || !(close = strchr(s, ')')))
		return nz__error_set(NZ_EFORMAT, "%s: ~imroTbl is missing or has no (header)", what);
	for (p = s + 1; p < close && t->n_hdr < 8;) {
		const char *c = memchr(p, ',', (size_t)(close - p));
		size_t n = (size_t)((c ? c : close) - p);
		snprintf(t->hdr[t->n_hdr++], sizeof t->hdr[0], "%.*s", (int)n, p);
		p = c ? c + 1 : close;
	}
	for (p = close + 1; *p;) {
		long vals[8];
		int n = 0;
		char *stop;
		if (*p != '(' || !(close = strchr(p, ')')))
			goto bad;
		for (p++; p < close;) {
			while (*p == ' ')
				p++;
			if (p == close)
				break;
			if (n == 8)
				goto bad;
			vals[n++] = strtol(p, &stop, 10);
			if (stop == p || stop > close || (*stop != ' ' && *stop != ')'))
				goto bad;
			p = stop;
		}
		if (n == 0 || (t->width && n != t->width))
			goto bad;
		t->width = n;
		if (t->n_entries == cap) {
			long *g;
			cap = cap ? 2 * cap : 512;
			if (cap > 1u << 20 || !(g = nz__realloc(t->v, cap * (size_t)n * sizeof *g))) {
				nz__imro_free(t);
				return nz__error_set(NZ_ENOMEM, "%s: ~imroTbl too large", what);
			}
			t->v = g;
		}
		memcpy(&t->v[t->n_entries++ * (size_t)n], vals, (size_t)n * sizeof *vals);
		p = close + 1;
	}
	return 0;
bad:
	nz__imro_free(t);
	return nz__error_set(NZ_EFORMAT, "%s: ~imroTbl entry %zu is not (int int ...) like the "
			     "others", what, t->n_entries);
}

static const struct ptype *find_type(int type)
{
	for (size_t i = 0; i < sizeof types / sizeof *types; i++)
		if (types[i].type == type)
			return &types[i];
	return NULL;
}

/* The electrode (site) number and shank of channel entry e. */
static int site_of(const struct ptype *pt, const long *e, long *site, long *shank)
{
	*shank = 0;
	switch (pt ? pt->geom : G_NONE) {
	case G_NP1: *site = e[1] * 384 + e[0]; return 1;   /* (chn bank ...) */
	case G_NP2_1: *site = e[3]; return 1;              /* (chn bankmask refid elec) */
	case G_NP2_4: *shank = e[1]; *site = e[4]; return 1; /* (chn shank bank refid elec) */
	default: return 0;
	}
}

/* Site -> position in um within its shank, as SpikeGLX's own ~snsGeomMap
 * places them: NP1.0 rows 20 um apart, staggered columns at 27/59 and
 * 11/43 um; NP2.0 rows 15 um apart, columns at 27 and 59 um. */
static void site_xy(enum geom g, long site, double *x, double *y)
{
	long row = site / 2, col = site % 2;
	if (g == G_NP1) {
		*x = row % 2 == 0 ? (col ? 59 : 27) : (col ? 43 : 11);
		*y = 20.0 * (double)row;
	} else {
		*x = col ? 59 : 27;
		*y = 15.0 * (double)row;
	}
}

/* ~snsGeomMap=(part,nShanks,pitch,width)(s:x:y:used)...: one entry per
 * saved neural channel, in file order. */
static int geom_map(nz_rec_channel *ch, size_t n, const char *m, const char *what)
{
	const char *p = strchr(m, ')'), *h = strchr(m, ',');
	double pitch = 0;
	size_t k = 0;
	int shanks = 0;
	if (*m != '(' || !p || !h || sscanf(h, ",%d,%lf", &shanks, &pitch) != 2 || shanks < 1 ||
	    shanks > 64 || !(pitch >= 0 && pitch < 1e5))
		return nz__error_set(NZ_EFORMAT, "%s: ~snsGeomMap header is not (part,shanks,pitch,"
				     "width)", what);
	for (p++; *p; p = strchr(p, ')') + 1) {
		int s, used, got = 0;
		double x, y;
		while (k < n && ch[k].kind != NZ_REC_NEURAL)
			k++;
		if (sscanf(p, "(%d:%lf:%lf:%d)%n", &s, &x, &y, &used, &got) != 4 || got == 0 ||
		    s < 0 || s >= shanks || !isfinite(x) || !isfinite(y))
			return nz__error_set(NZ_EFORMAT, "%s: ~snsGeomMap entry %zu is not "
					     "(shank:x:y:used)", what, k);
		if (k == n)
			return nz__error_set(NZ_EFORMAT, "%s: ~snsGeomMap has more entries than "
					     "neural channels", what);
		ch[k].shank = s;
		ch[k].x = x + s * pitch;
		ch[k].y = y;
		k++;
	}
	while (k < n && ch[k].kind != NZ_REC_NEURAL)
		k++;
	if (k != n)
		return nz__error_set(NZ_EFORMAT, "%s: ~snsGeomMap has fewer entries than neural "
				     "channels", what);
	return 0;
}

static int probe_type(const nz__kv *kv, const nz__imro *t, int *type)
{
	double v;
	int rc = nz__kv_num(kv, "imDatPrb_type", &v);
	if (rc < 0)
		return rc;
	if (rc == 0) {
		*type = (int)v;
		return v == floor(v) && v >= 0 && v < 1e6
			       ? 0 : nz__error_set(NZ_EFORMAT, "%s: imDatPrb_type=%g", kv->what, v);
	}
	if (nz__kv_get(kv, "imProbeOpt")) {
		*type = TYPE_3A;
		return 0;
	}
	if (t->n_hdr && isdigit((unsigned char)t->hdr[0][0])) {
		*type = atoi(t->hdr[0]);
		return 0;
	}
	return nz__error_set(NZ_EFORMAT, "%s: no imDatPrb_type and no imProbeOpt: the probe "
			     "type is unknown", kv->what);
}

int nz__sglx_probe(nz_rec_stream *s, nz_rec_channel *ch, const nz__kv *kv, int lf)
{
	nz__imro t;
	const struct ptype *pt;
	const char *geo = nz__kv_get(kv, "~snsGeomMap"), *pn = nz__kv_get(kv, "imDatPrb_pn");
	double range, maxint = 0, gain0 = 0;
	char part[64];
	int type = 0, err, rc, multi;
	if ((err = nz__imro_parse(&t, nz__kv_get(kv, "~imroTbl"), kv->what)) < 0)
		return err;
	if ((err = probe_type(kv, &t, &type)) < 0)
		goto done;
	pt = find_type(type);
	if (type == TYPE_3A)
		snprintf(part, sizeof part, "Neuropixels 3A");
	else
		snprintf(part, sizeof part, "%s (type %d)", pn && *pn ? pn : pt ? pt->name : "probe",
			 type);
	if ((err = nz__rec_set(&s->probe_part, part)) < 0 ||
	    (err = nz__kv_num(kv, "imAiRangeMax", &range)) < 0)
		goto done;
	if (err == 1 || !(range > 0 && range < 100)) {
		err = nz__error_set(NZ_EFORMAT, "%s: imAiRangeMax missing or not positive", kv->what);
		goto done;
	}
	if ((rc = nz__kv_num(kv, "imMaxInt", &maxint)) < 0) {
		err = rc;
		goto done;
	}
	if (rc == 1)
		maxint = pt ? pt->maxint : 0;
	if (!(maxint >= 1 && maxint <= 32768)) {
		err = nz__error_set(NZ_EFORMAT, "%s: probe type %d: imMaxInt %s (types known "
				    "without it: docs/recordings.md)", kv->what, type,
				    rc == 1 ? "is missing" : "is out of range");
		goto done;
	}
	if ((rc = nz__kv_num(kv, lf ? "imChan0lfGain" : "imChan0apGain", &gain0)) < 0) {
		err = rc;
		goto done;
	}
	if (pt && pt->width != t.width) {
		err = nz__error_set(NZ_EFORMAT, "%s: probe type %d wants ~imroTbl entries of %d "
				    "values, not %d", kv->what, type, pt->width, t.width);
		goto done;
	}
	for (size_t i = 0; i < s->n_channels; i++) {
		const long *e;
		long site, shank;
		double g = 0;
		if (ch[i].kind != NZ_REC_NEURAL)
			continue;
		if (pt && (pt->gains == GAIN_ENTRY || pt->geom != G_NONE) &&
		    (size_t)ch[i].electrode >= t.n_entries) {
			err = nz__error_set(NZ_EFORMAT, "%s: channel %s has no ~imroTbl entry (%zu "
					    "entries)", kv->what, ch[i].name, t.n_entries);
			goto done;
		}
		if (pt && pt->gains == GAIN_HEADER) {
			g = t.n_hdr > 4 ? atof(t.hdr[lf ? 4 : 3]) : 0;
		} else if (pt && pt->gains == GAIN_ENTRY) {
			e = &t.v[(size_t)ch[i].electrode * (size_t)t.width];
			g = (double)e[lf ? 4 : 3];
		} else {
			g = gain0 > 0 ? gain0 : pt ? pt->gain : 0;
		}
		if (!(g > 0)) {
			err = nz__error_set(NZ_EFORMAT, "%s: probe type %d: the gain of %s is %s "
					    "(imChan0%sGain missing; known types: docs/recordings.md)",
					    kv->what, type, ch[i].name, g == 0 ? "unknown" : "not positive",
					    lf ? "lf" : "ap");
			goto done;
		}
		ch[i].volts_per_count = range / maxint / g;
		if ((size_t)ch[i].electrode < t.n_entries &&
		    site_of(pt, &t.v[(size_t)ch[i].electrode * (size_t)t.width], &site, &shank)) {
			multi = pt->geom == G_NP2_4;
			if (multi)
				snprintf(ch[i].contact, sizeof ch[i].contact, "s%lde%ld", shank, site);
			else
				snprintf(ch[i].contact, sizeof ch[i].contact, "e%ld", site);
			if (!geo) {
				site_xy(pt->geom, site, &ch[i].x, &ch[i].y);
				ch[i].x += multi ? 250.0 * (double)shank : 0;
				ch[i].shank = (int)shank;
			}
		}
	}
	if (geo)
		err = geom_map(ch, s->n_channels, geo, kv->what);
	else
		for (size_t i = 0; i < s->n_channels && !err; i++)
			if (ch[i].kind == NZ_REC_NEURAL && isnan(ch[i].x))
				err = nz__error_set(NZ_EFORMAT, "%s: probe type %d (%s): no ~snsGeomMap "
						    "and no built-in geometry for this type (known: "
						    "3A, 0, 21, 24, 2013, 2014, 2020, 2021)", kv->what,
						    type, part);
done:
	nz__imro_free(&t);
	return err;
}
