/* Open Ephys binary format: structure.oebin (JSON) lists the continuous
 * streams of one recording of one record node; each stream's samples are
 * in continuous/<folder_name>continuous.dat, int16, interleaved. The probe
 * positions are not in the oebin: the record node's settings.xml has them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recording/rec_impl.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"
#include "util/file.h"

/* Volts per count from bit_volts and units. The GUI writes "" for units
 * often (0.6): neural channels are then uV, ADC channels V. */
static int scale_of(double *scale, const char *units, int analog)
{
	if (!units || !*units)
		*scale = analog ? 1 : 1e-6;
	else if (strcmp(units, "uV") == 0 || strcmp(units, "\xc2\xb5V") == 0)
		*scale = 1e-6;
	else if (strcmp(units, "mV") == 0)
		*scale = 1e-3;
	else if (strcmp(units, "V") == 0)
		*scale = 1;
	else
		return -1;
	return 0;
}

static int electrode_index(const json_t *c, long *idx)
{
	const json_t *m = json_object_get(c, "channel_metadata"), *e;
	size_t i;
	json_array_foreach(m, i, e) {
		const char *name = json_string_value(json_object_get(e, "name"));
		const json_t *v = json_array_get(json_object_get(e, "value"), 0);
		if (name && strcmp(name, "electrode_index") == 0 && json_is_integer(v) &&
		    json_integer_value(v) >= 0 && json_integer_value(v) < 100000) {
			*idx = (long)json_integer_value(v);
			return 1;
		}
	}
	return 0;
}

static int one_channel(nz_rec_channel *ch, const json_t *c, size_t i, int analog, size_t *neural,
		       const char *what, size_t si)
{
	const char *name = json_string_value(json_object_get(c, "channel_name"));
	const char *units = json_string_value(json_object_get(c, "units"));
	const json_t *bv = json_object_get(c, "bit_volts");
	double scale;
	long idx;
	if (!name || !*name || strlen(name) >= sizeof ch->name)
		return nz__error_set(NZ_EFORMAT, "%s: continuous[%zu].channels[%zu].channel_name "
				     "missing or longer than %zu", what, si, i, sizeof ch->name - 1);
	if (!json_is_number(bv) || !(json_number_value(bv) >= 0) ||
	    !isfinite(json_number_value(bv)))
		return nz__error_set(NZ_EFORMAT, "%s: continuous[%zu].channels[%zu].bit_volts "
				     "missing or negative", what, si, i);
	snprintf(ch->name, sizeof ch->name, "%s", name);
	if (strstr(name, "SYNC")) {
		ch->kind = NZ_REC_SYNC;
		return 0;
	}
	ch->kind = analog ? NZ_REC_ANALOG : NZ_REC_NEURAL;
	if (scale_of(&scale, units, analog) < 0)
		return nz__error_set(NZ_EFORMAT, "%s: continuous[%zu].channels[%zu].units '%s' is "
				     "not uV, mV or V", what, si, i, units);
	ch->volts_per_count = json_number_value(bv) * scale;
	if (analog)
		return 0;
	if (electrode_index(c, &idx)) {
		ch->electrode = idx;
		snprintf(ch->contact, sizeof ch->contact, "e%ld", idx);
	} else {
		ch->electrode = (int64_t)*neural;
	}
	(*neural)++;
	return 0;
}

static int one_stream(nz_rec *r, const json_t *st, size_t si, const char *what, const char *node,
		      const char *recdir)
{
	const char *folder = json_string_value(json_object_get(st, "folder_name"));
	const char *sname = json_string_value(json_object_get(st, "stream_name"));
	const json_t *rate = json_object_get(st, "sample_rate"), *nch = json_object_get(st, "num_channels");
	const json_t *chans = json_object_get(st, "channels"), *c;
	const json_t *rid = json_object_get(st, "recorded_processor_id");
	nz_rec_stream *s;
	char name[256], id[600], nodebuf[64], *path = NULL;
	size_t flen, i, neural = 0;
	int err, analog;
	if (!folder || (flen = strlen(folder)) < 2 || folder[flen - 1] != '/' || folder[0] == '/' ||
	    strstr(folder, "..") || flen > 200)
		return nz__error_set(NZ_EFORMAT, "%s: continuous[%zu].folder_name missing or not "
				     "a relative folder ending in '/'", what, si);
	if (!json_is_number(rate) || !(json_number_value(rate) > 0) ||
	    !(json_number_value(rate) < 1e7))
		return nz__error_set(NZ_EFORMAT, "%s: continuous[%zu].sample_rate missing or not "
				     "positive", what, si);
	if (!json_is_integer(nch) || json_integer_value(nch) < 1 || json_integer_value(nch) > 100000)
		return nz__error_set(NZ_EFORMAT, "%s: continuous[%zu].num_channels missing or not "
				     "1 to 100000", what, si);
	if (!json_is_array(chans) || json_array_size(chans) != (size_t)json_integer_value(nch))
		return nz__error_set(NZ_EFORMAT, "%s: continuous[%zu].channels has %zu entries for "
				     "num_channels=%lld", what, si, json_array_size(chans),
				     (long long)json_integer_value(nch));
	snprintf(name, sizeof name, "%s", sname && *sname && strlen(sname) < 200 ? sname : folder);
	if (!sname || !*sname) {
		char *dot;
		name[flen - 1] = '\0';
		if ((dot = strrchr(name, '.')))
			memmove(name, dot + 1, strlen(dot));
	}
	if (strchr(name, '/') || !*name)
		return nz__error_set(NZ_EFORMAT, "%s: continuous[%zu]: stream name '%s' is not "
				     "usable", what, si, name);
	if (!node) {
		snprintf(nodebuf, sizeof nodebuf, "Record Node %lld",
			 json_is_integer(rid) ? (long long)json_integer_value(rid) : 0LL);
		node = nodebuf;
	}
	snprintf(id, sizeof id, "%s/%s", node, name);
	analog = strstr(name, "ADC") || strstr(name, "NI-DAQ");
	if ((err = nz__rec_push(r, &s)) < 0)
		return err;
	s->format = "openephys";
	s->rate = json_number_value(rate);
	s->columns = (uint64_t)json_integer_value(nch);
	if ((err = nz__rec_set(&s->id, id)) < 0 || (err = nz__rec_set(&s->meta_path, what)) < 0 ||
	    (err = nz__rec_channels(s, (size_t)s->columns)) < 0)
		return err;
	json_array_foreach(chans, i, c)
		if ((err = one_channel((nz_rec_channel *)&s->channels[i], c, i, analog, &neural,
				       what, si)) < 0)
			return err;
	if (neural) {
		/* A probe's AP and LFP streams (ProbeA-AP, ProbeA-LFP) share electrodes. */
		size_t n = strlen(name);
		if (n > 3 && strcmp(name + n - 3, "-AP") == 0)
			name[n - 3] = '\0';
		else if (n > 4 && strcmp(name + n - 4, "-LFP") == 0)
			name[n - 4] = '\0';
		snprintf(id, sizeof id, "%s/%s", node, name);
		if ((err = nz__rec_set(&s->probe, id)) < 0)
			return err;
	}
	if (recdir) {
		size_t plen = strlen(recdir) + flen + 32;
		if (!(path = nz__malloc(plen)))
			return nz__error_set(NZ_ENOMEM, "out of memory reading '%s'", what);
		snprintf(path, plen, "%s/continuous/%scontinuous.dat", recdir, folder);
		err = nz__rec_set(&s->data_path, path);
		nz__free(path);
	}
	return err;
}

int nz__oebin_parse(nz_rec *r, const char *text, size_t len, const char *what, const char *node,
		    const char *recdir)
{
	json_t *root = NULL, *cont, *st;
	size_t i;
	int err;
	if ((err = nz__json_parse(&root, text, len, what, 0)) < 0)
		return err;
	cont = json_object_get(root, "continuous");
	if (!json_is_object(root) || !json_is_array(cont) || json_array_size(cont) == 0) {
		err = nz__error_set(NZ_EFORMAT, "%s: no \"continuous\" streams", what);
		goto done;
	}
	json_array_foreach(cont, i, st)
		if ((err = one_stream(r, st, i, what, node, recdir)) < 0)
			goto done;
done:
	json_decref(root);
	return err;
}

/* The value of attribute `attr` ("CH12") inside the element that starts at
 * `el` and ends at `end`; NAN when absent. */
static double attr_num(const char *el, const char *end, const char *attr)
{
	size_t n = strlen(attr);
	for (const char *p = el; p && p + n + 2 < end; p++) {
		p = memchr(p, attr[0], (size_t)(end - p));
		if (!p || p + n + 2 >= end)
			break;
		if (p[-1] == ' ' && memcmp(p, attr, n) == 0 && p[n] == '=' && p[n + 1] == '"')
			return strtod(p + n + 2, NULL);
	}
	return NAN;
}

/* The one element <tag ...> of the text, or NULL when there is none or
 * more than one (several probes: which is which is not ours to guess). */
static const char *one_element(const char *text, const char *tag, const char **end)
{
	const char *a = strstr(text, tag), *b;
	if (!a || strstr(a + 1, tag) || !(b = strchr(a, '>')))
		return NULL;
	*end = b;
	return a;
}

int nz__oebin_settings(nz_rec_stream *s, nz_rec_channel *ch, const char *settings_path)
{
	const char *xe = NULL, *ye = NULL, *pe = NULL, *xs, *ys, *ps;
	char *text = NULL, val[64];
	size_t len;
	int err;
	if (!s->probe || access(settings_path, F_OK) != 0)
		return 0;
	if ((err = nz__read_file(&text, &len, settings_path, 64u << 20)) < 0)
		return err;
	xs = one_element(text, "<ELECTRODE_XPOS ", &xe);
	ys = one_element(text, "<ELECTRODE_YPOS ", &ye);
	if ((ps = one_element(text, "<NP_PROBE ", &pe))) {
		const char *pn = strstr(ps, "probe_part_number=\"");
		if (pn && pn < pe && sscanf(pn, "probe_part_number=\"%63[^\"]", val) == 1 &&
		    (err = nz__rec_set(&s->probe_part, val)) < 0)
			goto done;
		pn = strstr(ps, "probe_serial_number=\"");
		if (pn && pn < pe && sscanf(pn, "probe_serial_number=\"%63[^\"]", val) == 1 &&
		    (err = nz__rec_set(&s->serial, val)) < 0)
			goto done;
	}
	for (size_t i = 0; xs && ys && i < s->n_channels; i++)
		if (ch[i].kind == NZ_REC_NEURAL) {
			ch[i].x = attr_num(xs, xe, ch[i].name);
			ch[i].y = attr_num(ys, ye, ch[i].name);
		}
done:
	nz__free(text);
	return err;
}
