/* Command-line parsing for `nwbzarr`: a pure function of argv (no I/O, no
 * globals, no exit), so tests and a fuzz target can drive it directly. */
#ifndef NZ_CLI_ARGS_H
#define NZ_CLI_ARGS_H

#include <stddef.h>
#include <stdint.h>

typedef enum nzc_cmd {
	NZC_NONE = 0, /**< no command: print usage, exit 2 */
	NZC_HELP,     /**< `nwbzarr --help` */
	NZC_VERSION,  /**< `nwbzarr --version` */
	NZC_CONVERT,
	NZC_INFO,
	NZC_REPAIR
} nzc_cmd;

/** Parsed arguments. Strings point into argv. Numbers are 0 when not given
 *  (have_* says whether a flag was present where 0 is meaningful). */
typedef struct nzc_args {
	nzc_cmd cmd;
	int help;                 /**< `<command> --help` */
	const char *input;        /**< convert: RECORDING ("-" = stdin); info, repair: FILE */
	const char *output;       /**< -o */
	const char *meta;         /**< --meta session.json */
	const char *spec_from;    /**< --spec-from FILE */
	const char *dtype;        /**< --dtype (numpy "<i2" or a name "int16") */
	const char *compressor;   /**< --compressor: blosc-lz4, blosc-zstd, zstd, lz4, zlib, gzip, none */
	uint64_t channels;        /**< --channels */
	double rate;              /**< --rate (Hz) */
	uint64_t offset;          /**< --offset bytes of header */
	int jobs;                 /**< -j/--jobs; 0 = all cores */
	uint64_t chunks[2];       /**< --chunks R,C */
	int have_chunks;
	int zarr_format;          /**< --zarr-format 2|3; 0 = not given (2) */
	uint64_t shards[2];       /**< --shards R,C (Zarr v3 shard shape) */
	int have_shards;
	int clevel;               /**< --clevel; -1 = codec default */
	int overwrite, quiet, json;
	int resume;               /**< --resume: finish an interrupted convert */
	int fsync;                /**< --fsync: make the output durable (fsync all) */
	double flush_interval;    /**< --flush-interval seconds (streaming); 0 = not given */
	int have_flush_interval;
	uint64_t seed;            /**< --seed (hidden; tests): object-id seed */
	/* session metadata from flags (they override the --meta JSON) */
	const char *identifier, *session_description, *session_start_time, *create_date;
	const char *experimenter, *lab, *institution;
	const char *subject_id, *species, *sex, *age;
	const char *location;     /**< electrodes' location when no JSON gives one */
	const char *streams;      /**< convert: comma-separated stream ids of a session */
	double conversion;        /**< --conversion volts per count; 0 = not given */
} nzc_args;

/** Parse argv[1..argc-1]. Returns 0, or -1 with a one-line message in
 *  err (no "nwbzarr: " prefix) for unknown flags, missing, empty or
 *  malformed values (each value is checked as it comes; of a flag given
 *  twice the last counts), a --clevel outside the
 *  compressor's range (or given for one without levels), an unknown
 *  --dtype or --compressor, conflicting flags and missing operands: every
 *  usage error, which the program reports with exit status 2. */
int nzc_parse_args(nzc_args *out, int argc, char *const *argv, char *err, size_t errlen);

/** The most worker threads any command takes (the engine's
 *  NZ_WRITE_MAX_JOBS; convert.c checks that they agree). */
#define NZC_MAX_JOBS 256

/** Parse a -j/--jobs value: 0 (all cores) to NZC_MAX_JOBS. Returns 0, or
 *  -1 with a message in err. Shared by every command. */
int nzc_parse_jobs(int *out, const char *v, char *err, size_t errlen);

/** A --compressor choice: numcodecs id, blosc cname, default level and the
 *  accepted --clevel range (lo > hi: the codec has no level). */
typedef struct nzc_codec_choice {
	const char *name, *id, *cname;
	int clevel, lo, hi, shuffle;
} nzc_codec_choice;

/** The choice named `name` (blosc-lz4, blosc-zstd, zstd, lz4, zlib, gzip,
 *  none) with `clevel` (-1 = its default) checked against its range:
 *  the choice, or NULL with a message in err. */
const nzc_codec_choice *nzc_codec_choose(const char *name, int clevel, char *err, size_t errlen);

/** For the parsers of export and verify: when argv[*i] is `flag` or
 *  `alias` (may be NULL), as "FLAG V", "--flag=V" or "-jN", store V in
 *  *val (advancing *i past it) and return 1; return 0 when argv[*i] is
 *  something else; -1 with a message in err when the value is missing or
 *  empty. A flag given twice: the last value counts. */
int nzc_take_value(const char **val, int argc, char *const *argv, int *i, const char *flag,
		   const char *alias, char *err, size_t errlen);

/** The end of a two-operand command's option loop (export, verify,
 *  upgrade), for an argument `a` that is none of its options: an option
 *  (a leading '-' and more) is unknown, else `a` fills the first empty one
 *  of *first, *second. Returns 0, or -1 with a message in err for an
 *  unknown option or a third operand. */
int nzc_take_operand(const char **first, const char **second, const char *a, char *err,
		     size_t errlen);

/** Parse a count for --max-diffs and the like: a decimal integer >= min
 *  that fits in 64 bits. Returns 0, or -1 with a message naming `flag`. */
int nzc_parse_count(uint64_t *out, const char *v, uint64_t min, const char *flag, char *err,
		    size_t errlen);

/** numpy's dtype string for a --dtype value ("int16" or "<i2", ...), or
 *  NULL when it is not one a recording can hold. */
const char *nzc_numpy_dtype(const char *name);

/** Parse "ROWS,COLS" (two positive integers) into out; -1 if malformed. */
int nzc_parse_pair(uint64_t out[2], const char *s);

/** Check the storage-format flags shared by convert and export:
 *  zarr_format 2 or 3 (the command's default resolved); shards (NULL =
 *  not given) need format 3 and, with chunks (NULL = not given), a
 *  multiple of them in each dimension. 0, or -1 with a one-line message in
 *  err. */
int nzc_check_layout(int zarr_format, const uint64_t *shards, const uint64_t *chunks, char *err,
		     size_t errlen);

/** The usage text of a command (NZC_NONE/NZC_HELP: the top-level one). */
const char *nzc_usage(nzc_cmd cmd);

#endif
