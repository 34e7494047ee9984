/* Side-car metadata of raw recordings: SpikeGLX .meta and Open Ephys
 * structure.oebin. Only what a conversion needs: channel count, sampling
 * rate and the volts-per-count conversion. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nwb/nwb_impl.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/file.h"
#include "util/json.h"

int nz__nwb_read_file(char **out, size_t *len, const char *path, size_t max)
{
	return nz__read_file(out, len, path, max);
}

static void info_init(nz_recording_info *out, const char *format)
{
	memset(out, 0, sizeof *out);
	out->version = NZ_RECORDING_INFO_VERSION;
	out->format = format;
	snprintf(out->dtype, sizeof out->dtype, "<i2"); /* both formats store int16 */
}

/* A number from a .meta value; NAN when absent or not a number. */
static double meta_num(const char *text, size_t len, const char *key)
{
	size_t klen = strlen(key);
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *k = p + (*p == '~');
		if (!eol)
			eol = end;
		if ((size_t)(eol - k) > klen && memcmp(k, key, klen) == 0 && k[klen] == '=') {
			char num[64], *stop;
			size_t n = (size_t)(eol - k - klen - 1);
			double v;
			if (n >= sizeof num)
				return NAN;
			memcpy(num, k + klen + 1, n);
			num[n] = '\0';
			v = strtod(num, &stop);
			while (*stop == '\r' || *stop == ' ')
				stop++;
			return stop == num || *stop ? NAN : v;
		}
		p = eol + 1;
	}
	return NAN;
}

/* The AP gain of the first imroTbl entry of a Neuropixels 1.0 probe
 * "(type,n)(chan bank ref apgain lfgain apfilt)..."; NAN when absent. */
static double imro_gain(const char *text, size_t len)
{
	static const char key[] = "~imroTbl=";
	const char *end = text + len, *p = text, *close;
	char entry[128];
	int fields[6], n;
	size_t k = sizeof key - 1, m;
	/* `text` is not NUL-terminated: every search stays below `end`. */
	while ((size_t)(end - p) >= k && memcmp(p, key, k) != 0)
		p++;
	if ((size_t)(end - p) < k || !(close = memchr(p + k, ')', (size_t)(end - p - k))) ||
	    end - close < 3 || close[1] != '(')
		return NAN;
	p = close + 2;
	for (m = 0; m + 1 < sizeof entry && p + m < end && p[m] != ')' && p[m] != '\n'; m++)
		entry[m] = p[m];
	entry[m] = '\0';
	n = sscanf(entry, "%d %d %d %d %d %d", &fields[0], &fields[1], &fields[2], &fields[3],
		   &fields[4], &fields[5]);
	return n == 6 && fields[3] > 0 ? fields[3] : NAN;
}

int nz_spikeglx_meta_parse(nz_recording_info *out, const char *text, size_t len,
			   const char *what)
{
	const char *p = text, *end = text + len;
	double chans, rate, range, maxint, gain;
	int line = 1, nidq;
	info_init(out, "spikeglx");
	if (memchr(text, '\0', len))
		return nz__error_set(NZ_EFORMAT, "%s: binary data in a SpikeGLX .meta file", what);
	for (; p < end; line++) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		if (eol > p && !(eol == p + 1 && *p == '\r') && !memchr(p, '=', (size_t)(eol - p)))
			return nz__error_set(NZ_EFORMAT, "%s:%d: not a key=value line", what, line);
		p = eol + 1;
	}
	chans = meta_num(text, len, "nSavedChans");
	nidq = !isnan(meta_num(text, len, "niSampRate")) && isnan(meta_num(text, len, "imSampRate"));
	rate = meta_num(text, len, nidq ? "niSampRate" : "imSampRate");
	if (!(chans >= 1) || chans > 1e6 || chans != floor(chans))
		return nz__error_set(NZ_EFORMAT, "%s: nSavedChans missing or not a positive integer",
				     what);
	if (!(rate > 0) || !isfinite(rate))
		return nz__error_set(NZ_EFORMAT, "%s: imSampRate/niSampRate missing or not positive",
				     what);
	out->channels = (uint64_t)chans;
	out->rate = rate;
	if (nidq) {
		range = meta_num(text, len, "niAiRangeMax");
		maxint = meta_num(text, len, "niMaxInt");
		gain = meta_num(text, len, "niMNGain");
		if (isnan(maxint))
			maxint = 32768;
		if (isnan(gain))
			gain = 1;
	} else {
		range = meta_num(text, len, "imAiRangeMax");
		maxint = meta_num(text, len, "imMaxInt");
		gain = imro_gain(text, len);
		if (isnan(maxint))
			maxint = 512;  /* Neuropixels 1.0 (10-bit ADC) */
		if (isnan(gain))
			gain = 80;     /* Neuropixels 2.0's fixed gain */
	}
	if (range > 0 && maxint > 0 && gain > 0)
		out->conversion = range / (maxint * gain);
	return 0;
}

int nz_oebin_parse(nz_recording_info *out, const char *text, size_t len, const char *what,
		   const char *stream)
{
	json_t *root = NULL, *cont, *s = NULL, *ch0;
	size_t i;
	int err;
	info_init(out, "openephys");
	if ((err = nz__json_parse(&root, text, len, what, 0)) < 0)
		return err;
	cont = json_object_get(root, "continuous");
	if (!json_is_array(cont) || json_array_size(cont) == 0) {
		err = nz__error_set(NZ_EFORMAT, "%s: no \"continuous\" streams", what);
		goto done;
	}
	json_array_foreach(cont, i, s) {
		const char *folder = json_string_value(json_object_get(s, "folder_name"));
		size_t n = stream ? strlen(stream) : 0;
		if (!stream || (folder && strncmp(folder, stream, n) == 0 &&
				(folder[n] == '\0' || folder[n] == '/')))
			break;
	}
	if (i == json_array_size(cont)) {
		err = nz__error_set(NZ_ENOTFOUND, "%s: no continuous stream with folder_name '%s'",
				    what, stream);
		goto done;
	}
	if (!json_is_integer(json_object_get(s, "num_channels")) ||
	    json_integer_value(json_object_get(s, "num_channels")) < 1 ||
	    !json_is_number(json_object_get(s, "sample_rate")) ||
	    !(json_number_value(json_object_get(s, "sample_rate")) > 0)) {
		err = nz__error_set(NZ_EFORMAT, "%s: stream %zu needs integer num_channels >= 1 and "
				    "sample_rate > 0", what, i);
		goto done;
	}
	out->channels = (uint64_t)json_integer_value(json_object_get(s, "num_channels"));
	out->rate = json_number_value(json_object_get(s, "sample_rate"));
	ch0 = json_array_get(json_object_get(s, "channels"), 0);
	if (json_is_number(json_object_get(ch0, "bit_volts"))) {
		const char *units = json_string_value(json_object_get(ch0, "units"));
		double scale = 1e-6; /* Open Ephys reports bit_volts in uV by default */
		if (units && strcmp(units, "mV") == 0)
			scale = 1e-3;
		else if (units && strcmp(units, "V") == 0)
			scale = 1;
		out->conversion = json_number_value(json_object_get(ch0, "bit_volts")) * scale;
	}
done:
	json_decref(root);
	return err;
}

/* Parse `path` as .meta or .oebin; 1 on success. */
static int probe_file(nz_recording_info *out, const char *path, int oebin, const char *stream)
{
	char *text = NULL;
	size_t len = 0;
	int err;
	if (access(path, F_OK) != 0)
		return 0;
	if ((err = nz__nwb_read_file(&text, &len, path, 16u << 20)) < 0)
		return err;
	err = oebin ? nz_oebin_parse(out, text, len, path, stream)
		    : nz_spikeglx_meta_parse(out, text, len, path);
	nz__free(text);
	if (err < 0)
		return err;
	snprintf(out->source_path, sizeof out->source_path, "%s", path);
	return 1;
}

int nz_recording_info_probe(nz_recording_info *out, const char *recording)
{
	char path[PATH_MAX], dir[PATH_MAX], stream[256] = "";
	char *slash, *dot;
	int err;
	if (!recording || strlen(recording) + 16 >= sizeof path)
		return nz__error_set(NZ_EINVAL, "recording path missing or too long");
	/* SpikeGLX: name.ap.bin -> name.ap.meta */
	snprintf(path, sizeof path, "%s", recording);
	slash = strrchr(path, '/');
	dot = strrchr(path, '.');
	if (dot && (!slash || dot > slash))
		*dot = '\0';
	strcat(path, ".meta");
	if ((err = probe_file(out, path, 0, NULL)) != 0)
		return err;
	/* Open Ephys: <rec>/continuous/<stream>/continuous.dat with
	 * <rec>/structure.oebin; also accept the oebin right beside the file
	 * (then its first stream). The stream is the recording's folder name. */
	snprintf(dir, sizeof dir, "%s", recording);
	slash = strrchr(dir, '/');
	if (slash) {
		const char *b = slash;
		while (b > dir && b[-1] != '/')
			b--;
		snprintf(stream, sizeof stream, "%.*s", (int)(slash - b), b);
	}
	for (int up = 0; up < 3; up++) {
		if ((slash = strrchr(dir, '/')))
			*slash = '\0';
		else if (up == 0)
			snprintf(dir, sizeof dir, ".");
		else
			break;
		if ((size_t)snprintf(path, sizeof path, "%s/structure.oebin", dir) >= sizeof path)
			break;
		if ((err = probe_file(out, path, 1, up == 0 || !stream[0] ? NULL : stream)) != 0)
			return err;
	}
	return 0;
}
