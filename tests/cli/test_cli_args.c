/* The pure argument parser of the CLI. */
#include "args.h"
#include "test.h"

static int parse(nzc_args *a, char *err, int argc, char **argv)
{
	return nzc_parse_args(a, argc, argv, err, 256);
}

#define ARGV(...) ((char *[]){"nwbzarr", __VA_ARGS__})
#define N(...) ((int)(sizeof((char *[]){"nwbzarr", __VA_ARGS__}) / sizeof(char *)))
#define PARSE(a, err, ...) parse(a, err, N(__VA_ARGS__), ARGV(__VA_ARGS__))

int main(void)
{
	nzc_args a;
	char err[256];
	char *none[] = {"nwbzarr"};

	ASSERT_EQ_INT(parse(&a, err, 1, none), -1);
	ASSERT_CONTAINS(err, "no command");
	ASSERT_EQ_INT(PARSE(&a, err, "--version"), 0);
	ASSERT_EQ_INT(a.cmd, NZC_VERSION);
	ASSERT_EQ_INT(PARSE(&a, err, "convert", "--help"), 0);
	ASSERT(a.help && a.cmd == NZC_CONVERT);
	ASSERT_CONTAINS(nzc_usage(NZC_CONVERT), "--chunks");

	ASSERT_EQ_INT(PARSE(&a, err, "convert", "rec.bin", "-o", "out.zarr", "--channels", "384",
			    "--rate=30000", "-j4", "--chunks", "1000,64", "--dtype", "int16",
			    "--offset", "8", "--overwrite", "--json", "--compressor", "zstd",
			    "--clevel", "3", "--seed", "5", "--meta", "s.json"), 0);
	ASSERT_EQ_STR(a.input, "rec.bin");
	ASSERT_EQ_STR(a.output, "out.zarr");
	ASSERT_EQ_U64(a.channels, 384);
	ASSERT(a.rate == 30000);
	ASSERT_EQ_INT(a.jobs, 4);
	ASSERT(a.have_chunks && a.chunks[0] == 1000 && a.chunks[1] == 64);
	ASSERT_EQ_U64(a.offset, 8);
	ASSERT(a.overwrite && a.json);
	ASSERT_EQ_INT(a.clevel, 3);
	ASSERT_EQ_U64(a.seed, 5);
	ASSERT_EQ_STR(a.meta, "s.json");
	ASSERT_EQ_INT(PARSE(&a, err, "convert", "r", "-o", "o", "--jobs", "2"), 0);
	ASSERT_EQ_INT(a.jobs, 2);
	ASSERT_EQ_INT(a.clevel, -1);

	ASSERT_EQ_INT(PARSE(&a, err, "convert", "r", "-o", "o", "--channels", "0"), -1);
	ASSERT_CONTAINS(err, "--channels");
	ASSERT_EQ_INT(PARSE(&a, err, "convert", "r", "-o", "o", "--rate", "-5"), -1);
	ASSERT_CONTAINS(err, "--rate");
	ASSERT_EQ_INT(PARSE(&a, err, "convert", "r", "-o", "o", "--chunks", "10"), -1);
	ASSERT_CONTAINS(err, "ROWS,COLS");
	ASSERT_EQ_INT(PARSE(&a, err, "convert", "r", "-o", "o", "-j", "x"), -1);
	ASSERT_EQ_INT(PARSE(&a, err, "convert", "r", "-o"), -1);
	ASSERT_CONTAINS(err, "needs a value");
	ASSERT_EQ_INT(PARSE(&a, err, "convert", "r"), -1);
	ASSERT_CONTAINS(err, "-o");
	ASSERT_EQ_INT(PARSE(&a, err, "convert", "-o", "o"), -1);
	ASSERT_CONTAINS(err, "RECORDING");
	ASSERT_EQ_INT(PARSE(&a, err, "convert", "r", "s", "-o", "o"), -1);
	ASSERT_CONTAINS(err, "unexpected argument 's'");
	ASSERT_EQ_INT(PARSE(&a, err, "convert", "r", "-o", "o", "--frobnicate"), -1);
	ASSERT_CONTAINS(err, "--frobnicate");
	ASSERT_EQ_INT(PARSE(&a, err, "info", "f", "--channels", "3"), -1);
	ASSERT_CONTAINS(err, "for info");
	ASSERT_EQ_INT(PARSE(&a, err, "explode"), -1);
	ASSERT_CONTAINS(err, "unknown command 'explode'");
	ASSERT_EQ_INT(PARSE(&a, err, "info", "f.zarr", "--json"), 0);
	ASSERT(a.cmd == NZC_INFO && a.json);

	/* issue 16: every usage error is found by the parser (exit 2) */
	ASSERT_EQ_INT(PARSE(&a, err, "convert", "r", "-o", "o", "-j", "256"), 0);
	ASSERT_EQ_INT(a.jobs, 256);
	ASSERT_EQ_INT(PARSE(&a, err, "convert", "r", "-o", "o", "-j", "257"), -1);
	ASSERT_CONTAINS(err, "0..256");
	ASSERT_EQ_INT(PARSE(&a, err, "convert", "r", "-o", "o", "-j", "5000000000"), -1);
	ASSERT_EQ_INT(PARSE(&a, err, "convert", "r", "-o", ""), -1);
	ASSERT_CONTAINS(err, "non-empty");
	ASSERT_EQ_INT(PARSE(&a, err, "convert", "r", "-o", "o", "--identifier="), -1);
	ASSERT_CONTAINS(err, "--identifier");
	ASSERT_EQ_INT(PARSE(&a, err, "convert", "", "-o", "o"), -1);
	ASSERT_CONTAINS(err, "RECORDING");
	ASSERT_EQ_INT(PARSE(&a, err, "convert", "r", "-o", "o", "--compressor", "gzip", "--clevel",
			    "15"), -1);
	ASSERT_CONTAINS(err, "gzip's levels 0..9");
	ASSERT_EQ_INT(PARSE(&a, err, "convert", "r", "-o", "o", "--clevel", "12"), -1);
	ASSERT_CONTAINS(err, "blosc-lz4's levels 0..9");
	ASSERT_EQ_INT(PARSE(&a, err, "convert", "r", "-o", "o", "--compressor", "lz4", "--clevel",
			    "3"), -1);
	ASSERT_CONTAINS(err, "does not apply to --compressor lz4");
	ASSERT_EQ_INT(PARSE(&a, err, "convert", "r", "-o", "o", "--compressor", "none", "--clevel",
			    "0"), -1);
	ASSERT_EQ_INT(PARSE(&a, err, "convert", "r", "-o", "o", "--compressor", "zstd", "--clevel",
			    "22"), 0);
	ASSERT_EQ_INT(PARSE(&a, err, "convert", "r", "-o", "o", "--compressor", "lzma"), -1);
	ASSERT_CONTAINS(err, "unknown --compressor 'lzma'");
	ASSERT_EQ_INT(PARSE(&a, err, "convert", "r", "-o", "o", "--dtype", "complex64"), -1);
	ASSERT_CONTAINS(err, "unknown --dtype 'complex64'");
	/* given twice: each value checked, the last counts */
	ASSERT_EQ_INT(PARSE(&a, err, "convert", "r", "-o", "o", "-j", "2", "-j", "300"), -1);
	ASSERT_EQ_INT(PARSE(&a, err, "convert", "r", "-o", "o", "-o", "p"), 0);
	ASSERT_EQ_STR(a.output, "p");

	/* the helpers of export and verify */
	{
		char *v[] = {"export", "--jobs=3", "-j7", "-j", "--chunks", ""};
		const char *val = NULL;
		int i = 1, jobs = -1;
		ASSERT_EQ_INT(nzc_take_value(&val, 6, v, &i, "--jobs", "-j", err, 256), 1);
		ASSERT_EQ_STR(val, "3");
		i = 2;
		ASSERT_EQ_INT(nzc_take_value(&val, 6, v, &i, "--jobs", "-j", err, 256), 1);
		ASSERT_EQ_STR(val, "7");
		i = 3; /* "-j" takes the next argument, whatever it is */
		ASSERT_EQ_INT(nzc_take_value(&val, 6, v, &i, "--jobs", "-j", err, 256), 1);
		ASSERT_EQ_STR(val, "--chunks");
		ASSERT_EQ_INT(i, 4);
		i = 4;
		val = NULL;
		ASSERT_EQ_INT(nzc_take_value(&val, 6, v, &i, "--chunks", NULL, err, 256), -1);
		ASSERT_CONTAINS(err, "non-empty");
		i = 4;
		ASSERT_EQ_INT(nzc_take_value(&val, 6, v, &i, "--jobs", "-j", err, 256), 0);
		ASSERT_EQ_INT(nzc_parse_jobs(&jobs, "5000000000", err, 256), -1);
		ASSERT_EQ_INT(nzc_parse_jobs(&jobs, "-1", err, 256), -1);
		ASSERT_EQ_INT(nzc_parse_jobs(&jobs, "0", err, 256), 0);
		ASSERT_EQ_INT(jobs, 0);
	}
	/* Zarr format and shards: 2 and 3 (convert's default) are accepted;
	 * shards need 3 and must be a multiple of the chunks. */
	ASSERT_EQ_INT(PARSE(&a, err, "convert", "r", "-o", "o", "--zarr-format", "2"), 0);
	ASSERT_EQ_INT(a.zarr_format, 2);
	ASSERT_EQ_INT(PARSE(&a, err, "convert", "r", "-o", "o", "--zarr-format=4"), -1);
	ASSERT_CONTAINS(err, "--zarr-format needs 2 or 3, not '4'");
	ASSERT_EQ_INT(PARSE(&a, err, "convert", "r", "-o", "o", "--zarr-format", "3"), 0);
	ASSERT_EQ_INT(a.zarr_format, 3);
	ASSERT_EQ_INT(PARSE(&a, err, "convert", "r", "-o", "o", "--shards", "1000,64"), 0);
	ASSERT_EQ_INT(a.have_shards, 1);
	ASSERT_EQ_U64(a.shards[0], 1000);
	ASSERT_EQ_INT(PARSE(&a, err, "convert", "r", "-o", "o", "--zarr-format", "2", "--shards",
			    "1000,64"), -1);
	ASSERT_CONTAINS(err, "--shards needs --zarr-format 3");
	ASSERT_EQ_INT(PARSE(&a, err, "convert", "r", "-o", "o", "--zarr-format", "3", "--chunks",
			    "100,64", "--shards", "250,64"), -1);
	ASSERT_CONTAINS(err, "--shards 250,64 is not a multiple of --chunks 100,64");
	ASSERT_EQ_INT(PARSE(&a, err, "convert", "r", "-o", "o", "--shards", "0,64"), -1);
	ASSERT_CONTAINS(err, "--shards needs ROWS,COLS");
	ASSERT_EQ_INT(PARSE(&a, err, "convert", "r", "-o", "o", "--zarr-format", "3", "--chunks",
			    "100,64", "--shards", "1000,128"), 0);
	{
		uint64_t p[2];
		ASSERT_EQ_INT(nzc_parse_pair(p, "300000,384"), 0);
		ASSERT(p[0] == 300000 && p[1] == 384);
		ASSERT_EQ_INT(nzc_parse_pair(p, "3,"), -1);
		ASSERT_EQ_INT(nzc_parse_pair(p, ",3"), -1);
		ASSERT_EQ_INT(nzc_parse_pair(p, "3"), -1);
		ASSERT_EQ_INT(nzc_parse_pair(p, "-3,4"), -1);
		ASSERT_EQ_INT(nzc_parse_pair(p, NULL), -1);
		ASSERT_EQ_INT(nzc_check_layout(3, NULL, NULL, err, sizeof err), 0);
		ASSERT_EQ_INT(nzc_check_layout(2, p, NULL, err, sizeof err), -1);
	}
	return 0;
}
