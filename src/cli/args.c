/* See args.h. Flags take their value as the next argument or after '='
 * (--rate=30000); -j also accepts -j4. */
#include "args.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_top[] =
	"usage: nwbzarr [--version] [--help] <command> [<args>]\n"
	"\n"
	"commands:\n"
	"  convert   convert a raw recording into an NWB file stored as Zarr\n"
	"  info      print the tree of an NWB Zarr file\n"
	"  repair    finalise a recording that was killed or lost power\n"
	"  export    convert an NWB HDF5 file into NWB Zarr\n"
	"  verify    compare an NWB HDF5 file with its NWB Zarr export\n"
	"  upgrade   rewrite a Zarr v2 NWB file (hdmf-zarr <= 0.13) as Zarr v3\n"
	"\n"
	"`nwbzarr <command> --help` describes a command.\n"
	"\n"
	"options:\n"
	"  --version   print the versions of nwbzarr and its compression libraries\n"
	"  -h, --help  this text\n"
	"\n"
	"exit status: 0 success, 1 failure (the message on stderr names the file and\n"
	"the problem), 2 usage error, 3 `info` found the file incomplete.\n";

static const char usage_convert[] =
	"usage: nwbzarr convert RECORDING -o OUT.nwb.zarr [options]\n"
	"       nwbzarr convert SESSION -o OUT.nwb.zarr [--streams IDS] [options]\n"
	"\n"
	"Convert a headerless row-major recording (frames x channels) into an NWB\n"
	"2.6 file in Zarr (hdmf-zarr layout) with one ElectricalSeries, written in\n"
	"parallel. A SpikeGLX <name>.meta or an Open Ephys structure.oebin beside\n"
	"the recording supplies channels, rate and conversion when present.\n"
	"A SESSION (a SpikeGLX run folder or any .meta of the run; an Open Ephys\n"
	"folder or structure.oebin) becomes one file with a series per stream,\n"
	"the probes' electrodes, geometry and gains (docs/recordings.md).\n"
	"RECORDING `-` (standard input) or a FIFO is a stream: frames are written as\n"
	"they come and readable after each flush; end of stream or Ctrl-C finalises\n"
	"(--channels and --rate are then required; a killed run: `nwbzarr repair`).\n"
	"\n"
	"data:\n"
	"  -o, --output DIR        output directory (required)\n"
	"  --channels C            channels per frame\n"
	"  --rate HZ               sampling rate\n"
	"  --dtype T               sample type: int16 (default), uint16, int32, float32,\n"
	"                          ... or a numpy string such as <i2\n"
	"  --offset B              bytes of header to skip\n"
	"  --conversion V          volts per count (default: side-car, else 1.0)\n"
	"metadata:\n"
	"  --meta FILE             session JSON (schema in docs/cli.md)\n"
	"  --identifier ID, --session-description TEXT, --session-start-time ISO8601\n"
	"  --create-date ISO8601, --experimenter NAME, --lab NAME, --institution NAME\n"
	"  --subject-id ID, --species NAME, --sex S, --age ISO8601-DURATION\n"
	"  --location AREA         location of the electrodes (default \"unknown\"; for DANDI an\n"
	"                          Allen CCF area such as CA1 or VISp)\n"
	"  --streams IDS           a session's streams to write, comma-separated\n"
	"                          (imec0.ap,imec0.lf,nidq; default: all)\n"
	"  --spec-from FILE        v3: add this NWB file's extension namespaces to the\n"
	"                          cached schema (core 2.11.0, hdmf-common: always);\n"
	"                          v2: copy its whole schema (default: none)\n"
	"writing:\n"
	"  -j, --jobs N            worker threads, 0..256 (default 0: all cores)\n"
	"  --chunks R,C            chunk shape (default: all channels x ~4 MiB)\n"
	"  --zarr-format 2|3       Zarr format of the output: 3 (default) in hdmf-zarr\n"
	"                          0.14's layout, 2 in hdmf-zarr 0.13's (older readers)\n"
	"  --shards R,C            Zarr v3 shard shape, a multiple of the chunks\n"
	"                          (default: all channels x ~256 MiB of rows; a\n"
	"                          stream: ~1 s of rows)\n"
	"  --compressor NAME       blosc-lz4 (default), blosc-zstd, zstd, gzip, none;\n"
	"                          lz4 and zlib with --zarr-format 2 only\n"
	"  --clevel L              compression level: blosc-* and zlib, gzip 0..9,\n"
	"                          zstd 1..22; refused for lz4 and none (no level)\n"
	"  --overwrite             replace an existing output (Zarr store only; kept\n"
	"                          until the new one is complete, given back on failure)\n"
	"  --resume                finish an interrupted conversion of the same input\n"
	"                          with the same options (keeps chunks stored whole)\n"
	"  --fsync                 fsync every file and directory (durable on power\n"
	"                          loss); default: one sync() at the end\n"
	"  --flush-interval S      streaming: seconds between flushes (default 1)\n"
	"  -q, --quiet             no progress bar\n"
	"  --json                  print a JSON summary on stdout\n"
	"  -h, --help              this text\n"
	"\n"
	"exit status: 0 success, 1 failure, 2 usage error.\n";

static const char usage_info[] =
	"usage: nwbzarr info FILE [--json]\n"
	"\n"
	"Print the tree of an NWB Zarr file: groups with their neurodata types,\n"
	"arrays with shape, dtype, chunks, codecs, stored size and ratio.\n"
	"\n"
	"  --json       one JSON object per node, one per line\n"
	"  -h, --help   this text\n"
	"\n"
	"exit status: 0 complete, 3 the file is incomplete (interrupted write), 1 error,\n"
	"2 usage error.\n";

static const char usage_repair[] =
	"usage: nwbzarr repair FILE [--fsync] [--json]\n"
	"\n"
	"Finalise a recording that stopped without finishing (killed, crashed, power\n"
	"lost with --fsync): every series keeps the frames of its last flush, then\n"
	"the file is completed. Says how many frames it kept. An interrupted\n"
	"conversion of a file is finished with `convert --resume` instead.\n"
	"\n"
	"  --fsync      fsync what it writes (durable on power loss)\n"
	"  --json       print a JSON summary on stdout\n"
	"  -h, --help   this text\n"
	"\n"
	"exit status: 0 repaired, 1 failure (a complete file: nothing to repair),\n"
	"2 usage error.\n";

const char *nzc_usage(nzc_cmd cmd)
{
	switch (cmd) {
	case NZC_CONVERT: return usage_convert;
	case NZC_INFO: return usage_info;
	case NZC_REPAIR: return usage_repair;
	default: return usage_top;
	}
}

static const nzc_codec_choice codecs[] = {
	/* blosc's clevel is 0..9, zstd's 1..22 (level 0, which only the
	 * default codec of v3 writes as hdmf-zarr 0.14 does, means libzstd's
	 * default level 3, as numcodecs reads it), zlib's and gzip's 0..9; LZ4 has acceleration, not a level, and
	 * nwbzarr writes acceleration 1: --clevel is refused, not ignored. */
	{"blosc-lz4", "blosc", "lz4", 5, 0, 9, 1},  {"blosc-zstd", "blosc", "zstd", 5, 0, 9, 1},
	{"zstd", "zstd", NULL, 1, 1, 22, 0},        {"lz4", "lz4", NULL, 1, 1, 0, 0},
	{"zlib", "zlib", NULL, 1, 0, 9, 0},         {"gzip", "gzip", NULL, 1, 0, 9, 0},
	{"none", "none", NULL, 0, 1, 0, 0},
};

static int fail(char *err, size_t errlen, const char *fmt, ...);

const nzc_codec_choice *nzc_codec_choose(const char *name, int clevel, char *err, size_t errlen)
{
	for (size_t i = 0; i < sizeof codecs / sizeof *codecs; i++) {
		const nzc_codec_choice *c = &codecs[i];
		if (strcmp(name, c->name) != 0)
			continue;
		if (clevel >= 0 && c->lo > c->hi) {
			fail(err, errlen, "--clevel does not apply to --compressor %s (it has no "
			     "compression level)", name);
			return NULL;
		}
		if (clevel >= 0 && (clevel < c->lo || clevel > c->hi)) {
			fail(err, errlen, "--clevel %d is outside %s's levels %d..%d", clevel, name,
			     c->lo, c->hi);
			return NULL;
		}
		return c;
	}
	fail(err, errlen, "unknown --compressor '%s' (blosc-lz4, blosc-zstd, zstd, lz4, zlib, "
	     "gzip, none)", name);
	return NULL;
}

const char *nzc_numpy_dtype(const char *name)
{
	static const char *const map[][2] = {
		{"int8", "|i1"},   {"uint8", "|u1"},   {"int16", "<i2"},   {"uint16", "<u2"},
		{"int32", "<i4"},  {"uint32", "<u4"},  {"int64", "<i8"},   {"uint64", "<u8"},
		{"float32", "<f4"}, {"float64", "<f8"},
	};
	for (size_t i = 0; i < sizeof map / sizeof *map; i++)
		if (strcmp(name, map[i][0]) == 0 || strcmp(name, map[i][1]) == 0)
			return map[i][1];
	return NULL;
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static int parse_u64(uint64_t *out, const char *s, uint64_t min)
{
	char *end;
	unsigned long long v;
	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min)
		return -1;
	*out = v;
	return 0;
}

static int parse_pos_double(double *out, const char *s)
{
	char *end;
	double v;
	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !(v > 0) || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

int nzc_parse_jobs(int *out, const char *v, char *err, size_t errlen)
{
	uint64_t u;
	if (parse_u64(&u, v, 0) < 0 || u > NZC_MAX_JOBS)
		return fail(err, errlen, "-j needs a thread count 0..%d (0 = all cores), not '%s'",
			    NZC_MAX_JOBS, v ? v : "");
	*out = (int)u;
	return 0;
}

int nzc_take_value(const char **val, int argc, char *const *argv, int *i, const char *flag,
		   const char *alias, char *err, size_t errlen)
{
	const char *arg = argv[*i], *v = NULL;
	size_t n = strlen(flag);
	if (strcmp(arg, flag) == 0 || (alias && strcmp(arg, alias) == 0)) {
		if (*i + 1 >= argc)
			return fail(err, errlen, "option '%s' needs a value", arg);
		v = argv[++*i];
	} else if (strncmp(arg, flag, n) == 0 && arg[n] == '=') {
		v = arg + n + 1;
	} else if (alias && alias[1] != '-' && strncmp(arg, alias, 2) == 0 && arg[2]) {
		v = arg + 2; /* -j4 */
	} else {
		return 0;
	}
	if (!*v)
		return fail(err, errlen, "option '%s' needs a non-empty value", flag);
	*val = v; /* given twice: the last one counts, as in convert */
	return 1;
}

int nzc_take_operand(const char **first, const char **second, const char *a, char *err,
		     size_t errlen)
{
	if (a[0] == '-' && a[1])
		return fail(err, errlen, "unknown option '%s'", a);
	if (!*first)
		*first = a;
	else if (!*second)
		*second = a;
	else
		return fail(err, errlen, "unexpected argument '%s'", a);
	return 0;
}

int nzc_parse_count(uint64_t *out, const char *v, uint64_t min, const char *flag, char *err,
		    size_t errlen)
{
	if (parse_u64(out, v, min) < 0)
		return fail(err, errlen, "%s needs a whole number >= %llu, not '%s'", flag,
			    (unsigned long long)min, v ? v : "");
	return 0;
}

/* Flags that take a string value, and where it goes. */
typedef struct str_flag {
	const char *name;
	size_t offset;
	int cmds; /* bit mask of commands accepting it */
} str_flag;

#define C (1 << NZC_CONVERT)
#define F(field) offsetof(nzc_args, field)
static const str_flag str_flags[] = {
	{"--output", F(output), C},           {"--meta", F(meta), C},
	{"--spec-from", F(spec_from), C},     {"--dtype", F(dtype), C},
	{"--compressor", F(compressor), C},   {"--identifier", F(identifier), C},
	{"--session-description", F(session_description), C},
	{"--session-start-time", F(session_start_time), C},
	{"--create-date", F(create_date), C}, {"--experimenter", F(experimenter), C},
	{"--lab", F(lab), C},                 {"--institution", F(institution), C},
	{"--subject-id", F(subject_id), C},   {"--species", F(species), C},
	{"--sex", F(sex), C},                 {"--age", F(age), C},
	{"--location", F(location), C},       {"--streams", F(streams), C},
};
#undef F

/* Numeric flags of convert. */
static int numeric(nzc_args *a, const char *name, const char *v, char *err, size_t errlen)
{
	uint64_t u;
	if (strcmp(name, "--channels") == 0) {
		if (parse_u64(&a->channels, v, 1) < 0)
			return fail(err, errlen, "--channels needs a positive integer, not '%s'", v);
	} else if (strcmp(name, "--rate") == 0) {
		if (parse_pos_double(&a->rate, v) < 0)
			return fail(err, errlen, "--rate needs a positive number of Hz, not '%s'", v);
	} else if (strcmp(name, "--conversion") == 0) {
		if (parse_pos_double(&a->conversion, v) < 0)
			return fail(err, errlen, "--conversion needs a positive number, not '%s'", v);
	} else if (strcmp(name, "--offset") == 0) {
		if (parse_u64(&a->offset, v, 0) < 0)
			return fail(err, errlen, "--offset needs a byte count, not '%s'", v);
	} else if (strcmp(name, "--jobs") == 0 || strcmp(name, "-j") == 0) {
		return nzc_parse_jobs(&a->jobs, v, err, errlen);
	} else if (strcmp(name, "--clevel") == 0) {
		if (parse_u64(&u, v, 0) < 0 || u > 22)
			return fail(err, errlen, "--clevel needs a level (0..22, by compressor), "
				    "not '%s'", v);
		a->clevel = (int)u;
	} else if (strcmp(name, "--seed") == 0) {
		if (parse_u64(&a->seed, v, 1) < 0)
			return fail(err, errlen, "--seed needs a positive integer, not '%s'", v);
	} else if (strcmp(name, "--chunks") == 0) {
		if (nzc_parse_pair(a->chunks, v) < 0)
			return fail(err, errlen, "--chunks needs ROWS,COLS (positive), not '%s'", v);
		a->have_chunks = 1;
	} else if (strcmp(name, "--shards") == 0) {
		if (nzc_parse_pair(a->shards, v) < 0)
			return fail(err, errlen, "--shards needs ROWS,COLS (positive), not '%s'", v);
		a->have_shards = 1;
	} else if (strcmp(name, "--flush-interval") == 0) {
		if (parse_pos_double(&a->flush_interval, v) < 0 || a->flush_interval > 86400)
			return fail(err, errlen, "--flush-interval needs a positive number of seconds "
				    "(at most 86400), not '%s'", v);
		a->have_flush_interval = 1;
	} else if (strcmp(name, "--zarr-format") == 0) {
		if (!v || (strcmp(v, "2") != 0 && strcmp(v, "3") != 0))
			return fail(err, errlen, "--zarr-format needs 2 or 3, not '%s'", v ? v : "");
		a->zarr_format = v[0] - '0';
	} else {
		return 1; /* not numeric */
	}
	return 0;
}

int nzc_parse_pair(uint64_t out[2], const char *s)
{
	char buf[64], *comma;
	if (!s || strlen(s) >= sizeof buf)
		return -1;
	memcpy(buf, s, strlen(s) + 1);
	if (!(comma = strchr(buf, ',')))
		return -1;
	*comma = '\0';
	return parse_u64(&out[0], buf, 1) < 0 || parse_u64(&out[1], comma + 1, 1) < 0 ? -1 : 0;
}

int nzc_check_layout(int zarr_format, const uint64_t *shards, const uint64_t *chunks, char *err,
		     size_t errlen)
{
	if (shards && zarr_format != 3)
		return fail(err, errlen, "--shards needs --zarr-format 3 (Zarr v2 has no shards)");
	if (shards && chunks && (shards[0] % chunks[0] || shards[1] % chunks[1]))
		return fail(err, errlen,
			    "--shards %llu,%llu is not a multiple of --chunks %llu,%llu in each "
			    "dimension",
			    (unsigned long long)shards[0], (unsigned long long)shards[1],
			    (unsigned long long)chunks[0], (unsigned long long)chunks[1]);
	return 0;
}

int nzc_parse_args(nzc_args *a, int argc, char *const *argv, char *err, size_t errlen)
{
	int i = 1;
	memset(a, 0, sizeof *a);
	a->clevel = -1;
	if (errlen)
		err[0] = '\0';
	if (argc < 2)
		return fail(err, errlen, "no command given");
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		a->cmd = NZC_VERSION;
		return 0;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		a->cmd = NZC_HELP;
		return 0;
	}
	if (strcmp(argv[1], "convert") == 0)
		a->cmd = NZC_CONVERT;
	else if (strcmp(argv[1], "info") == 0)
		a->cmd = NZC_INFO;
	else if (strcmp(argv[1], "repair") == 0)
		a->cmd = NZC_REPAIR;
	else
		return fail(err, errlen, "unknown command '%s'", argv[1]);

	for (i = 2; i < argc; i++) {
		const char *arg = argv[i], *val = NULL;
		char name[64];
		const char *eq = strncmp(arg, "--", 2) == 0 ? strchr(arg, '=') : NULL;
		size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
		int rc;
		if (arg[0] != '-' || strcmp(arg, "-") == 0) {
			if (a->input)
				return fail(err, errlen, "unexpected argument '%s'", arg);
			a->input = arg;
			continue;
		}
		if (n >= sizeof name)
			return fail(err, errlen, "unknown option '%.40s...'", arg);
		memcpy(name, arg, n);
		name[n] = '\0';
		if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0) {
			a->help = 1;
			continue;
		}
		if (strcmp(name, "--json") == 0) {
			a->json = 1;
			continue;
		}
		if (a->cmd == NZC_CONVERT && (strcmp(name, "--overwrite") == 0)) {
			a->overwrite = 1;
			continue;
		}
		if (a->cmd == NZC_CONVERT && strcmp(name, "--resume") == 0) {
			a->resume = 1;
			continue;
		}
		if ((a->cmd == NZC_CONVERT || a->cmd == NZC_REPAIR) && strcmp(name, "--fsync") == 0) {
			a->fsync = 1;
			continue;
		}
		if (a->cmd == NZC_CONVERT && (strcmp(name, "-q") == 0 || strcmp(name, "--quiet") == 0)) {
			a->quiet = 1;
			continue;
		}
		if (strcmp(name, "-o") == 0)
			strcpy(name, "--output");
		if (strncmp(name, "-j", 2) == 0 && name[2] && name[1] != '-') {
			val = arg + 2; /* -j4 */
			name[2] = '\0';
		}
		if (!val) {
			if (eq)
				val = eq + 1;
			else if (i + 1 < argc)
				val = argv[++i];
		}
		if (a->cmd == NZC_CONVERT) {
			if ((strcmp(name, "-j") == 0 || strncmp(name, "--", 2) == 0) && !val)
				return fail(err, errlen, "option '%s' needs a value", name);
			if (val && !*val)
				return fail(err, errlen, "option '%s' needs a non-empty value", name);
			for (size_t k = 0; k < sizeof str_flags / sizeof *str_flags; k++)
				if (strcmp(name, str_flags[k].name) == 0) {
					*(const char **)((char *)a + str_flags[k].offset) = val;
					goto next;
				}
			rc = numeric(a, name, val, err, errlen);
			if (rc < 0)
				return rc;
			if (rc == 0)
				continue;
		}
		return fail(err, errlen, "unknown option '%s' for %s", name, argv[1]);
next:;
	}
	if (a->help)
		return 0;
	if (a->compressor || a->clevel >= 0) {
		if (!nzc_codec_choose(a->compressor ? a->compressor : "blosc-lz4", a->clevel, err,
				      errlen))
			return -1;
	}
	if (a->dtype && !nzc_numpy_dtype(a->dtype))
		return fail(err, errlen, "unknown --dtype '%s' (int8, uint8, int16, uint16, int32, "
			    "uint32, int64, uint64, float32, float64 or numpy's <i2, ...)", a->dtype);
	if (!a->input || !*a->input)
		return fail(err, errlen, "%s needs %s", argv[1],
			    a->cmd == NZC_CONVERT ? "a RECORDING" : "a FILE");
	if (a->cmd == NZC_CONVERT && !a->output)
		return fail(err, errlen, "convert needs -o OUT.nwb.zarr");
	if (a->resume && a->overwrite)
		return fail(err, errlen, "--resume and --overwrite exclude each other");
	if (a->cmd == NZC_CONVERT && a->zarr_format != 2 && a->compressor &&
	    (strcmp(a->compressor, "lz4") == 0 || strcmp(a->compressor, "zlib") == 0))
		return fail(err, errlen, "--compressor %s needs --zarr-format 2 (Zarr v3 has no %s "
			    "codec; blosc-lz4 is its lz4)", a->compressor, a->compressor);
	if (a->cmd == NZC_CONVERT) /* convert writes Zarr v3 unless told otherwise */
		return nzc_check_layout(a->zarr_format ? a->zarr_format : 3,
					a->have_shards ? a->shards : NULL,
					a->have_chunks ? a->chunks : NULL, err, errlen);
	return 0;
}
