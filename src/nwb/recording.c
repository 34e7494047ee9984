/* A whole session (src/recording) as NWB objects, laid out as neuroconv
 * does: devices, shank groups and one electrodes row per electrode, then
 * one series per stream (docs/recordings.md names them). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nwb/nwb_impl.h"
#include "util/alloc.h"
#include "util/error.h"

/* One electrode of a probe: a row of the table. */
typedef struct erow {
	size_t probe;
	int64_t electrode;
	int shank;
	double x, y;
	char contact[24];
	char name[64]; /* "AP3,LF3" */
} erow;

typedef struct probe_info {
	const char *id;   /* nz_rec_stream.probe */
	char device[128];
	int multi_shank;
	int sync_done;    /* its sync channels are written once, from its first stream */
} probe_info;

typedef struct plan {
	const nz_rec_stream **st; /* the selected streams, in id order */
	size_t n;
	probe_info *probes;
	size_t n_probes;
	erow *rows;
	size_t n_rows;
	int spikeglx_probes;      /* SpikeGLX probes selected: names carry the probe when > 1 */
	double t0;                /* the earliest first_time: starting_time 0 */
	nz_source **srcs;         /* the series' sources, kept until the batch is written */
	size_t n_srcs;
} plan;

/* Series one stream can give: neural, sync, three analog groups, digital. */
#define SERIES_PER_STREAM 6

static void plan_free(plan *p)
{
	for (size_t i = 0; i < p->n_srcs; i++)
		nz_source_free(p->srcs[i]);
	nz__free(p->srcs);
	nz__free(p->st);
	nz__free(p->probes);
	nz__free(p->rows);
}

/* "Record Node 101/ProbeA" -> "ProbeA"; "-" dropped ("OneBox-ADC" -> "OneBoxADC"). */
static void suffix_of(char *out, size_t cap, const char *id)
{
	const char *s = strrchr(id, '/');
	size_t k = 0;
	for (s = s ? s + 1 : id; *s && k + 1 < cap; s++)
		if (isalnum((unsigned char)*s) || *s == '_')
			out[k++] = *s;
	out[k] = '\0';
}

/* The suffix of an Open Ephys id, with the record node appended
 * ("exampledataRecordNode105") when another selected stream (probes: 1 =
 * another probe) has the same suffix. */
static void oe_name(char *out, size_t cap, const plan *p, const char *id, int probes)
{
	char sfx[96], node[96] = "";
	suffix_of(sfx, sizeof sfx, id);
	for (size_t k = 0; k < p->n; k++) {
		const char *other_id = probes ? p->st[k]->probe : p->st[k]->id;
		char other[96];
		if (!other_id || strcmp(other_id, id) == 0)
			continue;
		suffix_of(other, sizeof other, other_id);
		if (strcmp(other, sfx) == 0) {
			/* "Record Node 105/x" -> "RecordNode105" */
			size_t m = 0;
			for (const char *c = id; *c && *c != '/' && m + 1 < sizeof node; c++)
				if (isalnum((unsigned char)*c))
					node[m++] = *c;
			node[m] = '\0';
		}
	}
	snprintf(out, cap, "%s%s", sfx, node);
}

static int select_streams(plan *p, const nz_rec *r, const nz_nwb_recording_opts *o)
{
	size_t n = o && o->streams ? o->n_streams : nz_rec_count(r);
	if (!n)
		return nz__error_set(NZ_EINVAL, "add_recording: no streams to write");
	if (!(p->st = nz__calloc(n, sizeof *p->st)) ||
	    !(p->srcs = nz__calloc(n, SERIES_PER_STREAM * sizeof *p->srcs)))
		return nz__error_set(NZ_ENOMEM, "out of memory selecting streams");
	for (size_t i = 0; i < n; i++) {
		const nz_rec_stream *s = o && o->streams ? nz_rec_find(r, o->streams[i])
							  : nz_rec_get(r, i);
		if (!s) {
			char have[512] = "";
			for (size_t k = 0; k < nz_rec_count(r); k++)
				snprintf(have + strlen(have), sizeof have - strlen(have), "%s'%s'",
					 k ? ", " : "", nz_rec_get(r, k)->id);
			return nz__error_set(NZ_ENOTFOUND, "no stream '%s' in the recording (it has "
					     "%s)", o->streams[i] ? o->streams[i] : "(null)", have);
		}
		for (size_t k = 0; k < p->n; k++)
			if (p->st[k] == s)
				return nz__error_set(NZ_EINVAL, "stream '%s' is named twice", s->id);
		p->st[p->n++] = s;
	}
	return 0;
}

static long find_probe(const plan *p, const char *id)
{
	for (size_t i = 0; i < p->n_probes; i++)
		if (strcmp(p->probes[i].id, id) == 0)
			return (long)i;
	return -1;
}

static long find_row(const plan *p, size_t probe, int64_t electrode)
{
	for (size_t i = 0; i < p->n_rows; i++)
		if (p->rows[i].probe == probe && p->rows[i].electrode == electrode)
			return (long)i;
	return -1;
}

/* Probes and their electrodes, in stream order (a probe's AP before LF). */
static int plan_rows(plan *p)
{
	size_t max_rows = 0;
	double t0 = INFINITY;
	for (size_t i = 0; i < p->n; i++) {
		max_rows += p->st[i]->n_channels;
		if (p->st[i]->first_time < t0)
			t0 = p->st[i]->first_time;
	}
	p->t0 = t0;
	if (!(p->probes = nz__calloc(p->n, sizeof *p->probes)) ||
	    !(p->rows = nz__calloc(max_rows ? max_rows : 1, sizeof *p->rows)))
		return nz__error_set(NZ_ENOMEM, "out of memory planning the electrodes");
	for (size_t i = 0; i < p->n; i++) {
		const nz_rec_stream *s = p->st[i];
		long pi;
		if (!s->probe)
			continue;
		if ((pi = find_probe(p, s->probe)) < 0) {
			probe_info *pr = &p->probes[p->n_probes];
			char sfx[96];
			pr->id = s->probe;
			if (strcmp(s->format, "spikeglx") == 0) {
				suffix_of(sfx, sizeof sfx, s->probe);
				snprintf(pr->device, sizeof pr->device, "Neuropixels%s", sfx);
				p->spikeglx_probes++;
			} else {
				oe_name(pr->device, sizeof pr->device, p, s->probe, 1);
			}
			pi = (long)p->n_probes++;
		}
		for (size_t c = 0; c < s->n_channels; c++) {
			const nz_rec_channel *ch = &s->channels[c];
			long ri;
			erow *row;
			if (ch->kind != NZ_REC_NEURAL)
				continue;
			if ((ri = find_row(p, (size_t)pi, ch->electrode)) >= 0) {
				row = &p->rows[ri];
				if (strlen(row->name) + strlen(ch->name) + 2 < sizeof row->name)
					strcat(strcat(row->name, ","), ch->name);
				continue;
			}
			row = &p->rows[p->n_rows++];
			row->probe = (size_t)pi;
			row->electrode = ch->electrode;
			row->shank = ch->shank;
			row->x = ch->x;
			row->y = ch->y;
			snprintf(row->contact, sizeof row->contact, "%s", ch->contact);
			snprintf(row->name, sizeof row->name, "%s", ch->name);
			if (ch->shank > 0)
				p->probes[pi].multi_shank = 1;
		}
	}
	return 0;
}

static void group_of(char *out, size_t cap, const plan *p, const erow *row)
{
	const probe_info *pr = &p->probes[row->probe];
	if (pr->multi_shank)
		snprintf(out, cap, "%sShank%d", pr->device, row->shank < 0 ? 0 : row->shank);
	else
		snprintf(out, cap, "%s", pr->device);
}

static int write_devices(nz_nwb *f, const plan *p, const char *location)
{
	char desc[400], group[160];
	int err;
	for (size_t i = 0; i < p->n_probes; i++) {
		const nz_rec_stream *s = NULL;
		for (size_t k = 0; k < p->n && !s; k++)
			if (p->st[k]->probe && strcmp(p->st[k]->probe, p->probes[i].id) == 0)
				s = p->st[k];
		snprintf(desc, sizeof desc, "%s%s%s%s%s", strcmp(s->format, "spikeglx") == 0 ||
			 strncmp(s->probe_part, "NP", 2) == 0 ? "IMEC Neuropixels " : "",
			 *s->probe_part ? s->probe_part : "probe",
			 *s->serial ? ", serial number " : "", s->serial,
			 strcmp(s->format, "spikeglx") == 0 ? ", recorded with SpikeGLX"
							    : ", recorded with Open Ephys");
		/* Device.manufacturer is deprecated in pynwb 4.2: the maker is in
		 * the description. */
		if ((err = nz_nwb_add_device(f, p->probes[i].device, desc, NULL)) < 0)
			return err;
	}
	for (size_t i = 0; i < p->n_rows; i++) {
		const probe_info *pr = &p->probes[p->rows[i].probe];
		int seen = 0;
		group_of(group, sizeof group, p, &p->rows[i]);
		for (size_t k = 0; k < f->n_groups && !seen; k++)
			seen = strcmp(f->groups[k].name, group) == 0;
		snprintf(desc, sizeof desc, "%s of %s", pr->multi_shank ? "a shank" : "the electrodes",
			 pr->device);
		if (!seen && (err = nz_nwb_add_electrode_group(f, group, desc, location,
							       pr->device)) < 0)
			return err;
	}
	return 0;
}

static int write_rows(nz_nwb *f, const plan *p)
{
	nz_nwb_electrode e = NZ_NWB_ELECTRODE_INIT;
	const char **text = nz__calloc(p->n_rows ? p->n_rows : 1, sizeof *text);
	double *num = nz__calloc(p->n_rows ? p->n_rows : 1, sizeof *num);
	char (*names)[160] = nz__calloc(p->n_rows ? p->n_rows : 1, sizeof *names);
	int err = 0, any_contact = 0;
	if (!text || !num || !names) {
		err = nz__error_set(NZ_ENOMEM, "out of memory writing the electrodes");
		goto done;
	}
	for (size_t i = 0; i < p->n_rows && !err; i++) {
		group_of(names[i], sizeof names[i], p, &p->rows[i]);
		e.group = names[i];
		err = nz_nwb_add_electrodes(f, &e, 1, 0);
	}
	if (err < 0)
		goto done;
	for (size_t i = 0; i < p->n_rows; i++)
		text[i] = p->rows[i].name;
	if ((err = nz_nwb_add_electrode_column(f, "channel_name", "unique channel reference",
					       "text", text, p->n_rows)) < 0)
		goto done;
	for (size_t i = 0; i < p->n_rows; i++)
		num[i] = p->rows[i].x;
	if ((err = nz_nwb_add_electrode_column(f, "rel_x", "x position of the contact on the "
					       "probe, in um", "<f8", num, p->n_rows)) < 0)
		goto done;
	for (size_t i = 0; i < p->n_rows; i++)
		num[i] = p->rows[i].y;
	if ((err = nz_nwb_add_electrode_column(f, "rel_y", "y position of the contact on the "
					       "probe, in um", "<f8", num, p->n_rows)) < 0)
		goto done;
	for (size_t i = 0; i < p->n_rows; i++) {
		snprintf(names[i], sizeof names[i], "%d", p->rows[i].shank < 0 ? 0 : p->rows[i].shank);
		text[i] = names[i];
	}
	if ((err = nz_nwb_add_electrode_column(f, "shank_ids", "shank of the contact", "text", text,
					       p->n_rows)) < 0)
		goto done;
	for (size_t i = 0; i < p->n_rows; i++) {
		text[i] = p->rows[i].contact;
		any_contact |= p->rows[i].contact[0] != '\0';
	}
	if (any_contact)
		err = nz_nwb_add_electrode_column(f, "electrode_name", "contact id on the probe "
						  "(probeinterface's contact_ids)", "text", text,
						  p->n_rows);
done:
	nz__free(text);
	nz__free(num);
	nz__free(names);
	return err;
}

/* The channels of `s` whose kind is `kind` (and, for analog channels,
 * whose group is `group`, NULL = any) into chan; returns their count. */
static size_t channels_of(size_t *chan, const nz_rec_stream *s, int kind, const char *group)
{
	size_t n = 0;
	for (size_t c = 0; c < s->n_channels; c++)
		if (s->channels[c].kind == kind && (!group || strcmp(s->channels[c].group, group) == 0))
			chan[n++] = c;
	return n;
}

/* A series a stream gives: its channels' kind and analog group, its name. */
typedef struct series_spec {
	int kind;
	const char *group;
	char name[256];
} series_spec;

/* The series of spec `sp`, whose data are `src` (the batch writes them). */
static int write_one(nz_nwb *f, plan *p, const nz_rec_stream *s, const series_spec *sp,
		     nz_source *src, const nz_nwb_recording_opts *o)
{
	nz_nwb_series_opts so = NZ_NWB_SERIES_OPTS_INIT;
	size_t *chan = nz__calloc(s->n_channels, sizeof *chan);
	int64_t *rows = nz__calloc(s->n_channels, sizeof *rows);
	float *conv = nz__calloc(s->n_channels, sizeof *conv);
	char desc[600];
	size_t n;
	int err = 0, same = 1, kind = sp->kind;
	long pi = s->probe ? find_probe(p, s->probe) : -1;
	if (!chan || !rows || !conv) {
		err = nz__error_set(NZ_ENOMEM, "out of memory writing '%s'", sp->name);
		goto done;
	}
	n = channels_of(chan, s, kind, sp->group);
	for (size_t i = 0; i < n; i++) {
		const nz_rec_channel *ch = &s->channels[chan[i]];
		conv[i] = (float)ch->volts_per_count;
		same &= ch->volts_per_count == s->channels[chan[0]].volts_per_count;
		if (kind == NZ_REC_NEURAL)
			rows[i] = find_row(p, (size_t)pi, ch->electrode);
	}
	snprintf(desc, sizeof desc, "%s%s%s stream '%s' (%s)",
		 kind == NZ_REC_NEURAL ? "neural channels" : kind == NZ_REC_SYNC ? "sync channels"
		 : kind == NZ_REC_ANALOG ? "analog inputs" : "digital words",
		 sp->group ? " " : "", sp->group ? sp->group : "", s->id, s->meta_path);
	so.name = sp->name;
	so.description = desc;
	so.rate = s->rate;
	so.starting_time = s->first_time - p->t0;
	so.chunks = o ? o->chunks : NULL;
	so.compressor = o ? o->compressor : NULL;
	if (kind == NZ_REC_NEURAL || kind == NZ_REC_ANALOG) {
		so.conversion = s->channels[chan[0]].volts_per_count;
		if (kind == NZ_REC_NEURAL && !same) {
			so.conversion = 1.0;
			so.channel_conversion = conv;
		}
	}
	so.unit = kind == NZ_REC_ANALOG ? "volts" : "n.a.";
	so.electrodes = kind == NZ_REC_NEURAL ? rows : NULL;
	err = kind == NZ_REC_NEURAL ? nz_nwb_add_electrical_series(f, &so, src)
				    : nz_nwb_add_timeseries(f, &so, src);
done:
	nz__free(chan);
	nz__free(rows);
	nz__free(conv);
	return err;
}

/* The series sp[0..n) of stream s, their sources made together so that
 * one read of the file feeds them all (nz_rec_sources: the first series,
 * the widest, reads; the others take their columns from its reads). */
static int write_stream(nz_nwb *f, plan *p, const nz_rec_stream *s, const series_spec *sp,
			size_t n, const nz_nwb_recording_opts *o)
{
	size_t *chan = nz__calloc(s->n_channels, sizeof *chan), nc[SERIES_PER_STREAM];
	uint64_t *cols[SERIES_PER_STREAM] = {NULL};
	nz_source **src = p->srcs + p->n_srcs;
	int err = 0;
	if (!chan) {
		err = nz__error_set(NZ_ENOMEM, "out of memory writing stream '%s'", s->id);
		goto done;
	}
	for (size_t k = 0; k < n; k++) {
		if (!(cols[k] = nz__calloc(s->n_channels, sizeof *cols[k]))) {
			err = nz__error_set(NZ_ENOMEM, "out of memory writing stream '%s'", s->id);
			goto done;
		}
		nc[k] = channels_of(chan, s, sp[k].kind, sp[k].group);
		for (size_t i = 0; i < nc[k]; i++)
			cols[k][i] = s->channels[chan[i]].column;
	}
	if ((err = nz_rec_sources(src, s, (const uint64_t *const *)cols, nc, n)) < 0)
		goto done;
	/* kept until the batch is written */
	p->n_srcs += n;
	for (size_t k = 0; k < n && err == 0; k++)
		err = write_one(f, p, s, &sp[k], src[k], o);
done:
	nz__free(chan);
	for (size_t k = 0; k < n; k++)
		nz__free(cols[k]);
	return err;
}

static int has_kind(const nz_rec_stream *s, int kind, const char *group)
{
	for (size_t c = 0; c < s->n_channels; c++)
		if (s->channels[c].kind == kind && (!group || !strcmp(s->channels[c].group, group)))
			return 1;
	return 0;
}

/* The series name of stream i: neuroconv's, made unique when two Open
 * Ephys record nodes hold a stream of the same name. */
static void series_base(char *out, size_t cap, const plan *p, size_t i)
{
	const nz_rec_stream *s = p->st[i];
	if (strcmp(s->format, "spikeglx") == 0) {
		if (s->probe)
			snprintf(out, cap, "%s%s", strcmp(s->band, "lf") == 0 ? "LF" : "AP",
				 p->spikeglx_probes > 1 ? s->probe : "");
		else
			snprintf(out, cap, "NIDQ");
		return;
	}
	oe_name(out, cap, p, s->id, 0);
}

static int write_series(nz_nwb *f, plan *p, const nz_nwb_recording_opts *o)
{
	static const char *const groups[] = {"MN", "MA", "XA"};
	series_spec sp[SERIES_PER_STREAM];
	char base[200];
	int err = 0;
	for (size_t i = 0; i < p->n && !err; i++) {
		const nz_rec_stream *s = p->st[i];
		long pi = s->probe ? find_probe(p, s->probe) : -1;
		int sglx = strcmp(s->format, "spikeglx") == 0, ngroups = 0;
		size_t n = 0;
		memset(sp, 0, sizeof sp);
		series_base(base, sizeof base, p, i);
		if (has_kind(s, NZ_REC_NEURAL, NULL)) {
			sp[n].kind = NZ_REC_NEURAL;
			snprintf(sp[n++].name, sizeof sp->name, "ElectricalSeries%s", base);
		}
		if (has_kind(s, NZ_REC_SYNC, NULL) && (pi < 0 || !p->probes[pi].sync_done)) {
			sp[n].kind = NZ_REC_SYNC;
			if (sglx && s->probe)
				snprintf(sp[n++].name, sizeof sp->name, "TimeSeries%sSync", s->probe);
			else
				snprintf(sp[n++].name, sizeof sp->name, "TimeSeries%sSync", base);
			if (pi >= 0)
				p->probes[pi].sync_done = 1;
		}
		for (size_t g = 0; g < 3; g++)
			ngroups += has_kind(s, NZ_REC_ANALOG, groups[g]);
		if (sglx && ngroups > 1) {
			/* MN, MA and XA have different gains: one series each */
			for (size_t g = 0; g < 3; g++)
				if (has_kind(s, NZ_REC_ANALOG, groups[g])) {
					sp[n].kind = NZ_REC_ANALOG;
					sp[n].group = groups[g];
					snprintf(sp[n++].name, sizeof sp->name, "TimeSeriesNIDQ%s",
						 groups[g]);
				}
		} else if (has_kind(s, NZ_REC_ANALOG, NULL)) {
			sp[n].kind = NZ_REC_ANALOG;
			snprintf(sp[n++].name, sizeof sp->name, "TimeSeries%s", base);
		}
		if (has_kind(s, NZ_REC_DIGITAL, NULL)) {
			sp[n].kind = NZ_REC_DIGITAL;
			snprintf(sp[n++].name, sizeof sp->name, "TimeSeries%sDigital", base);
		}
		if (n)
			err = write_stream(f, p, s, sp, n, o);
	}
	return err;
}

int nz_nwb_add_recording(nz_nwb *f, const nz_rec *r, const nz_nwb_recording_opts *o)
{
	plan p;
	int err;
	memset(&p, 0, sizeof p);
	if ((err = nz__nwb_check_open(f, "add_recording")) < 0)
		return err;
	if (!r || (o && o->version != NZ_NWB_RECORDING_OPTS_VERSION))
		return nz__error_set(NZ_EINVAL, "add_recording: no recording, or options of another "
				     "version");
	if (f->n_rows)
		return nz__error_set(NZ_EINVAL, "add_recording: the electrodes table already has "
				     "%zu rows", f->n_rows);
	if ((err = select_streams(&p, r, o)) < 0 || (err = plan_rows(&p)) < 0 ||
	    (err = write_devices(f, &p, o && o->location ? o->location : "unknown")) < 0 ||
	    (err = write_rows(f, &p)) < 0)
		goto done;
	/* Every stream's series in one parallel write: the small streams'
	 * tasks share the workers with the big ones' instead of following them. */
	nz__nwb_batch_begin(f);
	if ((err = write_series(f, &p, o)) < 0)
		goto done;
	err = nz__nwb_batch_write(f);
done:
	nz__nwb_batch_end(f);
	plan_free(&p);
	if (err < 0)
		nz__error_wrap("recording");
	return err;
}
