/* The recording layer's parsers on every real SpikeGLX .meta and Open
 * Ephys structure.oebin of tests/data/recordings: channel kinds and counts,
 * rates, volts per count (range / maxint / gain, per probe type) and probe
 * geometry. The built-in geometry of each type is checked against
 * SpikeGLX's own ~snsGeomMap in the files that have both. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

static char *slurp(const char *rel, size_t *len)
{
	char path[4096];
	FILE *f;
	char *buf;
	long n;
	snprintf(path, sizeof path, "%s/recordings/%s", getenv("NZ_REF"), rel);
	f = fopen(path, "rb");
	ASSERT(f != NULL);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	ASSERT(buf && fread(buf, 1, (size_t)n, f) == (size_t)n);
	buf[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* Drop the line starting with `key` (a whole ~table) from text. */
static size_t drop_line(char *text, size_t len, const char *key)
{
	char *p = strstr(text, key), *eol;
	if (!p)
		return len;
	eol = strchr(p, '\n');
	eol = eol ? eol + 1 : text + len;
	memmove(p, eol, (size_t)(text + len - eol) + 1);
	return len - (size_t)(eol - p);
}

static size_t count_kind(const nz_rec_stream *s, int kind)
{
	size_t n = 0;
	for (size_t i = 0; i < s->n_channels; i++)
		n += s->channels[i].kind == kind;
	return n;
}

static const struct meta_case {
	const char *file, *name; /* name: what the file would be called in a run */
	uint64_t cols;
	double rate;
	size_t neural, sync;
	double range, maxint, gain; /* of the first neural channel */
	const char *contact0;       /* "" = none derivable */
	double x0, y0;              /* position of the first neural channel */
} metas[] = {
	{"phase3a.imec.ap.meta", NULL, 385, 30000, 384, 1, 0.6, 512, 500, "e0", 27, 0},
	{"sample3A_g0_t0.imec.ap.meta", NULL, 385, 30000, 384, 1, 0.6, 512, 500, "e0", 27, 0},
	{"sample3A_g0_t0.imec.lf.meta", NULL, 385, 2500, 384, 1, 0.6, 512, 250, "e0", 27, 0},
	{"Noise_g0_t0.imec0.ap.meta", NULL, 385, 30000, 384, 1, 0.6, 512, 500, "e0", 27, 0},
	{"sample3B_g0_t0.imec1.ap.meta", NULL, 385, 30000.390639481, 384, 1, 0.6, 512, 500, "e0",
	 27, 0},
	{"sample3B_g0_t0.imec1.lf.meta", NULL, 385, 2500.0325532900833, 384, 1, 0.6, 512, 250,
	 "e0", 27, 0},
	{"NP1_saved_only_subset_of_channels.meta", "Day_3_g0_t0.imec1.ap.meta", 152, 0, 151, 1,
	 0.6, 512, 500, NULL, NAN, NAN},
	{"sample3B_version202304.ap.meta", "v_g0_t0.imec0.ap.meta", 385, 30000, 384, 1, 0.6, 512,
	 500, "e0", 27, 0},
	{"p2_g0_t0.imec0.ap.meta", NULL, 385, 30000, 384, 1, 0.5, 8192, 80, "e0", 27, 0},
	{"NP2_4_shanks.imec0.ap.meta", NULL, 385, 30000, 384, 1, 0.5, 8192, 80, "s0e0", 27, 0},
	{"NP2_4_shanks_save_different_electrodes.imec0.ap.meta", NULL, 385, 30000, 384, 1, 0.5,
	 8192, 80, NULL, NAN, NAN},
	{"sampleNP2.4_4shanks_while_acquiring_incomplete.ap.meta", "w_g0_t0.imec0.ap.meta", 385,
	 0, 384, 1, 0.5, 8192, 80, NULL, NAN, NAN},
	{"NP2_2013_all_channels.imec0.ap.meta", NULL, 385, 30000, 384, 1, 0.62, 2048, 100, "s0e0",
	 27, 0},
	{"NP2_2013_subset_channels.imec0.ap.meta", NULL, 121, 0, 120, 1, 0.62, 2048, 100, NULL,
	 NAN, NAN},
	{"sampleNP2.4_4shanks_appVersion20230905.ap.meta", "a_g0_t0.imec0.ap.meta", 385, 30000,
	 384, 1, 0.62, 2048, 100, NULL, NAN, NAN},
	{"NP2020_sample_g0_t0.imec0.ap.meta", NULL, 1540, 30000, 1536, 4, 0.62, 2048, 100, "s0e0",
	 27, 0},
	{"NP1110_bank0_g0_t0.imec0.ap.meta", NULL, 385, 30000, 384, 1, 0.6, 512, 500, "", 15.5,
	 0},
};

static void check_meta(const struct meta_case *c)
{
	char rel[256];
	size_t len;
	char *text;
	nz_rec *r;
	const nz_rec_stream *s;
	const nz_rec_channel *n0 = NULL;
	snprintf(rel, sizeof rel, "spikeglx/%s", c->file);
	text = slurp(rel, &len);
	ASSERT_OK(nz_rec_parse_meta(&r, text, len, c->name ? c->name : c->file));
	ASSERT_EQ_U64(nz_rec_count(r), 1);
	s = nz_rec_get(r, 0);
	ASSERT_EQ_U64(s->columns, c->cols);
	ASSERT_EQ_U64(s->n_channels, c->cols);
	if (c->rate > 0)
		ASSERT(s->rate == c->rate);
	ASSERT_EQ_U64(count_kind(s, NZ_REC_NEURAL), c->neural);
	ASSERT_EQ_U64(count_kind(s, NZ_REC_SYNC), c->sync);
	ASSERT(s->probe && strncmp(s->probe, "Imec", 4) == 0);
	for (size_t i = 0; i < s->n_channels; i++) {
		const nz_rec_channel *ch = &s->channels[i];
		ASSERT_EQ_U64(ch->column, i);
		if (ch->kind != NZ_REC_NEURAL) {
			ASSERT(ch->volts_per_count == 0);
			continue;
		}
		if (!n0)
			n0 = ch;
		/* every neural channel has a gain and a place on the probe */
		ASSERT(ch->volts_per_count > 0 && !isnan(ch->x) && !isnan(ch->y) && ch->shank >= 0);
	}
	ASSERT(n0 != NULL);
	if (fabs(n0->volts_per_count - c->range / c->maxint / c->gain) > 1e-15) {
		fprintf(stderr, "%s: %g V/count, expected %g\n", c->file, n0->volts_per_count,
			c->range / c->maxint / c->gain);
		exit(1);
	}
	if (c->contact0)
		ASSERT(strcmp(n0->contact, c->contact0) == 0);
	if (!isnan(c->x0))
		ASSERT(n0->x == c->x0 && n0->y == c->y0);
	nz_rec_free(r);
	free(text);
}

/* A file with both ~snsGeomMap and a known type: the built-in geometry
 * (from ~imroTbl alone) must place every channel where SpikeGLX did. */
static void check_builtin_geometry(const char *file)
{
	char rel[256];
	size_t len;
	char *text = NULL;
	nz_rec *with = NULL, *without = NULL;
	const nz_rec_stream *a, *b;
	snprintf(rel, sizeof rel, "spikeglx/%s", file);
	text = slurp(rel, &len);
	ASSERT_OK(nz_rec_parse_meta(&with, text, len, "g_g0_t0.imec0.ap.meta"));
	len = drop_line(text, len, "~snsGeomMap=");
	ASSERT(strstr(text, "~snsGeomMap") == NULL);
	ASSERT_OK(nz_rec_parse_meta(&without, text, len, "g_g0_t0.imec0.ap.meta"));
	a = nz_rec_get(with, 0);
	b = nz_rec_get(without, 0);
	for (size_t i = 0; i < a->n_channels; i++) {
		if (a->channels[i].kind != NZ_REC_NEURAL)
			continue;
		if (a->channels[i].x != b->channels[i].x || a->channels[i].y != b->channels[i].y ||
		    a->channels[i].shank != b->channels[i].shank) {
			fprintf(stderr, "%s channel %zu: geomMap (%d: %g, %g), built-in (%d: %g, %g)\n",
				file, i, a->channels[i].shank, a->channels[i].x, a->channels[i].y,
				b->channels[i].shank, b->channels[i].x, b->channels[i].y);
			exit(1);
		}
	}
	nz_rec_free(with);
	nz_rec_free(without);
	free(text);
}

static void check_nidq(void)
{
	size_t len;
	char *text = slurp("spikeglx/sample3B_g0_t0.nidq.meta", &len);
	nz_rec *r;
	const nz_rec_stream *s;
	ASSERT_OK(nz_rec_parse_meta(&r, text, len, "sample3B_g0_t0.nidq.meta"));
	s = nz_rec_get(r, 0);
	ASSERT(strcmp(s->id, "nidq") == 0 && s->probe == NULL);
	ASSERT(s->rate == 30003.0003);
	ASSERT_EQ_U64(s->n_channels, 2);
	ASSERT(s->channels[0].kind == NZ_REC_ANALOG && strcmp(s->channels[0].name, "XA0") == 0);
	/* niAiRangeMax=5, no niMaxInt: 32768; XA has gain 1 */
	ASSERT(s->channels[0].volts_per_count == 5.0 / 32768);
	ASSERT(s->channels[1].kind == NZ_REC_DIGITAL && s->channels[1].volts_per_count == 0);
	nz_rec_free(r);
	free(text);
}

/* Broken fields: NZ_EFORMAT naming the file and the field. */
static void check_bad_meta(void)
{
	static const struct {
		const char *text, *field;
	} bad[] = {
		{"nSavedChans=2\n", "imSampRate"},
		{"imSampRate=30000\n", "nSavedChans"},
		{"nSavedChans=2\nimSampRate=30000\n", "~snsChanMap"},
		{"nSavedChans=2\nimSampRate=3e4\n~snsChanMap=(1,0,1)(AP0;0:0)\n", "nSavedChans"},
		{"nSavedChans=2\nimSampRate=3e4\n~snsChanMap=(1,0,1)(AP0;0:0)(QQ1;1:1)\n", "QQ1"},
		{"nSavedChans=1\nimSampRate=3e4\nimDatPrb_type=0\nimAiRangeMax=0.6\n"
		 "~snsChanMap=(1,0,0)(AP0;0:0)\n", "~imroTbl"},
		{"nSavedChans=1\nimSampRate=3e4\nimDatPrb_type=4242\nimAiRangeMax=0.6\nimMaxInt=512\n"
		 "~imroTbl=(4242,1)(0 0 0 0 0)\n~snsChanMap=(1,0,0)(AP0;0:0)\n", "4242"},
		{"nSavedChans=1\nimSampRate=3e4\nimDatPrb_type=0\nimAiRangeMax=0.6\n"
		 "~imroTbl=(0,1)(0 0 0 500 250)\n~snsChanMap=(1,0,0)(AP0;0:0)\n", "entries of 6"},
		{"nSavedChans=1\nimSampRate=fast\n", "imSampRate"},
		{"garbage line\n", ":1:"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		nz_rec *r = NULL;
		int rc = nz_rec_parse_meta(&r, bad[i].text, strlen(bad[i].text), "bad_g0_t0.imec0.ap.meta");
		if (rc != NZ_EFORMAT || !strstr(nz_error_last()->message, "bad_g0_t0.imec0.ap.meta") ||
		    !strstr(nz_error_last()->message, bad[i].field)) {
			fprintf(stderr, "bad meta %zu: rc %d, message '%s' (want '%s')\n", i, rc,
				nz_error_last()->message, bad[i].field);
			exit(1);
		}
		ASSERT(r == NULL);
	}
}

static void check_oebin(const char *rel, const char *id0, size_t n_streams, uint64_t cols0,
			size_t neural0, size_t sync0, double vpc0)
{
	size_t len;
	char *text = slurp(rel, &len);
	nz_rec *r;
	const nz_rec_stream *s;
	ASSERT_OK(nz_rec_parse_oebin(&r, text, len, rel, NULL));
	ASSERT_EQ_U64(nz_rec_count(r), n_streams);
	s = nz_rec_find(r, id0);
	if (!s) {
		fprintf(stderr, "%s: no stream '%s' (first is '%s')\n", rel, id0, nz_rec_get(r, 0)->id);
		exit(1);
	}
	ASSERT_EQ_U64(s->columns, cols0);
	ASSERT_EQ_U64(count_kind(s, NZ_REC_NEURAL), neural0);
	ASSERT_EQ_U64(count_kind(s, NZ_REC_SYNC), sync0);
	for (size_t i = 0; i < s->n_channels; i++)
		if (s->channels[i].kind == NZ_REC_NEURAL) {
			ASSERT(fabs(s->channels[i].volts_per_count - vpc0) < 1e-15);
			break;
		}
	nz_rec_free(r);
	free(text);
}

int main(void)
{
	for (size_t i = 0; i < sizeof metas / sizeof *metas; i++)
		check_meta(&metas[i]);
	check_builtin_geometry("sample3B_version202304.ap.meta");
	check_builtin_geometry("NP2_2013_all_channels.imec0.ap.meta");
	check_builtin_geometry("NP2_2013_subset_channels.imec0.ap.meta");
	check_builtin_geometry("sampleNP2.4_4shanks_appVersion20230905.ap.meta");
	check_builtin_geometry("NP2020_sample_g0_t0.imec0.ap.meta");
	check_nidq();
	check_bad_meta();
	check_oebin("openephys/probeinterface-OE_Neuropix-PXI-NP1-binary/Record_Node_101/"
		    "experiment1/recording1/structure.oebin", "Record Node 101/ProbeA", 1, 384,
		    384, 0, 0.1949999928e-6);
	check_oebin("openephys/probeinterface-OE_Neuropix-PXI-NP2-multishank-binary/Record_Node_109/"
		    "experiment1/recording1/structure.oebin", "Record Node 109/ProbeA", 1, 385,
		    384, 1, 0.1949999928474426e-6);
	check_oebin("openephys/probeinterface-OE_OneBox-NP2014-binary/Record_Node_101/experiment1/"
		    "recording1/structure.oebin", "Record Node 101/OneBox-ADC", 2, 12, 0, 0, 0);
	check_oebin("openephys/open-ephys-python-tools-v0.6.7_Binary/Record Node 105/experiment1/"
		    "recording1/structure.oebin", "Record Node 105/example_data", 1, 16, 16, 0,
		    0.05000000074505806e-6);
	puts("ok");
	return 0;
}
