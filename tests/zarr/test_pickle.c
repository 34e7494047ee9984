/* The restricted pickle decoder (src/zarr/pickle.h) over the fuzz corpus
 * (fuzz/corpus/pickle: real pickles made by Python's pickle module at
 * protocols 2..5, three chunks hdmf-zarr 0.13 itself wrote, and hostile
 * ones): each good seed decodes to exactly the JSON expected, each hostile
 * one fails with its code and a message naming the array and the opcode.
 * Then pickle-coded arrays opened from .zarray documents as hdmf-zarr 0.13
 * writes them (compound rows included), the codec refused for writing, and
 * an allocation-failure sweep over a real chunk. */
#include <stdio.h>

#include "oom.h"
#include "util/buf.h"
#include "util/json.h"
#include "zarr/pickle.h"

/* The reference dict gen_pickle_seeds.py's ref(path) pickles, as compact JSON. */
static const char *ref_json(char *buf, size_t n, const char *path)
{
	snprintf(buf, n, "{\"object_id\":\"6a4e3b0e-0f3c-4b5e-9b1a-0c1d2e3f4a5b\",\"path\":\"%s\",\"source\":\".\","
		 "\"source_object_id\":\"ea34dce6-4033-47b9-927e-723505d9fb31\"}", path);
	return buf;
}

/* A seed: <ndim><dims><pickle>. */
static unsigned char *load(size_t *len, const char *name)
{
	char path[1024];
	FILE *f;
	unsigned char *b = malloc(1 << 16);
	snprintf(path, sizeof path, "%s/%s", NZ_PICKLE_CORPUS, name);
	ASSERT((f = fopen(path, "rb")) != NULL && b);
	*len = fread(b, 1, 1 << 16, f);
	fclose(f);
	return b;
}

static int decode_seed(json_t **out, const unsigned char *b, size_t len)
{
	uint64_t shape[3];
	int d, nd = b[0];
	for (d = 0; d < nd; d++)
		shape[d] = b[1 + d];
	return nz__pickle_decode(out, b + 1 + nd, len - 1 - (size_t)nd, shape, nd, "array 'seed'");
}

static char *text_of(const json_t *v)
{
	char *s = NULL;
	ASSERT_OK(nz__json_dumps(&s, v, NZ_JSON_COMPACT));
	return s;
}

static void good(const char *name, const char *want)
{
	size_t len;
	unsigned char *b = load(&len, name);
	json_t *out = NULL;
	char *got;
	if (decode_seed(&out, b, len) != 0)
		NZ__FAIL("%s: %s", name, nz_error_last()->message);
	got = text_of(out);
	if (strcmp(got, want) != 0)
		NZ__FAIL("%s: got %s\n  want %s", name, got, want);
	nz__free(got);
	json_decref(out);
	free(b);
}

static void bad(const char *name, int code, const char *needle)
{
	size_t len;
	unsigned char *b = load(&len, name);
	json_t *out = (json_t *)1;
	int rc = decode_seed(&out, b, len);
	if (rc != code)
		NZ__FAIL("%s: returned %d, expected %d (%s)", name, rc, code, nz_error_last()->message);
	ASSERT(out == NULL);
	ASSERT_CONTAINS(nz_error_last()->message, "array 'seed'");
	ASSERT_CONTAINS(nz_error_last()->message, needle);
	free(b);
}

static void corpus(void)
{
	char want[2048], name[32], ra[256], rb[256], xs[301];
	int p;
	memset(xs, 'x', 300);
	xs[300] = '\0';
	for (p = 2; p <= 5; p++) {
		snprintf(name, sizeof name, "refs_p%d", p);
		snprintf(want, sizeof want, "[%s,%s,%s]", ref_json(ra, sizeof ra, "/a"), ref_json(rb, sizeof rb, "/b"), ra);
		good(name, want);
		snprintf(name, sizeof name, "text_p%d", p);
		snprintf(want, sizeof want, "[\"\",\"ascii\",\"\\u03c0 \\u00fc \\ud83d\\ude00\",\"%s\"]", xs);
		good(name, want);
		snprintf(name, sizeof name, "bytes_p%d", p);
		good(name, "[\"raw\",\"\"]");
		snprintf(name, sizeof name, "scalars_p%d", p);
		good(name, "[0,-1,1099511627776,-9223372036854775808,1.5,null,true]");
		snprintf(name, sizeof name, "compound_p%d", p);
		good(name, "[[0,10,{\"object_id\":\"6a4e3b0e-0f3c-4b5e-9b1a-0c1d2e3f4a5b\",\"path\":\"/acquisition/ts\","
			   "\"source\":\".\",\"source_object_id\":\"ea34dce6-4033-47b9-927e-723505d9fb31\"}],"
			   "[10,5,{\"object_id\":\"6a4e3b0e-0f3c-4b5e-9b1a-0c1d2e3f4a5b\",\"path\":\"/acquisition/ts\","
			   "\"source\":\".\",\"source_object_id\":\"ea34dce6-4033-47b9-927e-723505d9fb31\"}]]");
	}
	good("scalar_0d", "[\"only\"]");
	good("nested", "[[1,[2.5,\"x\"]],[\"y\",[null,false]]]");
	good("nonfinite", "[NaN,-Infinity]");
	/* What hdmf-zarr 0.13 wrote (numpy 2: numpy._core.multiarray). */
	good("hdmf013_image_references",
	     "[{\"object_id\":null,\"path\":\"/acquisition/images/img1\",\"source\":\".\",\"source_object_id\":"
	     "\"5a53b09a-2b78-4b11-b7d9-73ad890cf6f5\"},{\"object_id\":null,\"path\":\"/acquisition/images/img0\","
	     "\"source\":\".\",\"source_object_id\":\"5a53b09a-2b78-4b11-b7d9-73ad890cf6f5\"}]");
	good("hdmf013_trials_timeseries",
	     "[[0,10,{\"object_id\":\"d91005c2-0bd5-4e84-b834-f125578ac38a\",\"path\":\"/acquisition/ts\",\"source\":"
	     "\".\",\"source_object_id\":\"5a53b09a-2b78-4b11-b7d9-73ad890cf6f5\"}],[10,10,{\"object_id\":"
	     "\"d91005c2-0bd5-4e84-b834-f125578ac38a\",\"path\":\"/acquisition/ts\",\"source\":\".\","
	     "\"source_object_id\":\"5a53b09a-2b78-4b11-b7d9-73ad890cf6f5\"}]]");

	bad("os_system", NZ_EUNSUPPORTED, "STACK_GLOBAL at offset 16: global 'os.system' is not");
	bad("global_posix", NZ_EUNSUPPORTED, "GLOBAL at offset 2: global 'posix.system'");
	bad("numpy_int_array", NZ_EUNSUPPORTED, "_frombuffer");
	bad("reduce_ndarray", NZ_EUNSUPPORTED, "REDUCE at offset 20");
	bad("huge_unicode8", NZ_EFORMAT, "BINUNICODE8 at offset 2: a length of 4611686018427387904 bytes, 4 left");
	bad("huge_binbytes", NZ_EFORMAT, "BINBYTES at offset 2: a length of 2147483648 bytes");
	bad("huge_frame", NZ_EFORMAT, "FRAME at offset 2: a frame longer than the chunk");
	bad("deep_tuples", NZ_EUNSUPPORTED, "nested deeper than 32");
	bad("deep_lists", NZ_EUNSUPPORTED, "nested deeper than 32");
	bad("memo_doubling", NZ_EUNSUPPORTED, "expand to more than");
	bad("memo_sparse_put", NZ_EUNSUPPORTED, "LONG_BINPUT at offset 3: memo index 2147483647 out of order");
	bad("memo_get_unset", NZ_EFORMAT, "BINGET at offset 2: memo index 5 was never put");
	bad("self_append", NZ_EFORMAT, "APPEND at offset 6: a container put into itself");
	bad("truncated", NZ_EFORMAT, "ends without STOP");
	bad("truncated_frame", NZ_EFORMAT, "frame longer than the chunk");
	bad("no_stop", NZ_EFORMAT, "ends without STOP");
	bad("trailing", NZ_EFORMAT, "2 bytes after the end");
	bad("protocol_0", NZ_EFORMAT, "not a pickle");
	bad("wrong_shape", NZ_EFORMAT, "dimension 0 is 2, the chunk's 5");
}

/* Hostile pickles built here: each opcode outside the list is named. */
static void refused_opcodes(void)
{
	/* The literal and its length (pickles hold NUL bytes). */
#define PK(lit) lit, sizeof(lit) - 1
	static const struct { const char *p; size_t n; int code; const char *needle; } cases[] = {
		{ PK("\x80\x05N0."), NZ_EUNSUPPORTED, "POP at offset 3" },
		{ PK("\x80\x05N2."), NZ_EUNSUPPORTED, "DUP at offset 3" },
		{ PK("\x80\x05\x8f."), NZ_EUNSUPPORTED, "EMPTY_SET at offset 2" },
		{ PK("\x80\x05\x97."), NZ_EUNSUPPORTED, "NEXT_BUFFER at offset 2" },
		{ PK("\x80\x05Q."), NZ_EUNSUPPORTED, "BINPERSID at offset 2" },
		{ PK("\x80\x05\x82\x01."), NZ_EUNSUPPORTED, "EXT1 at offset 2" },
		{ PK("\x80\x06N."), NZ_EUNSUPPORTED, "protocol 6" },
		{ PK("\x80\x05\x80\x05N."), NZ_EUNSUPPORTED, "not at the start" },
		{ PK("\x80\x05\x8a\x09\x01\x02\x03\x04\x05\x06\x07\x08\x09."), NZ_EUNSUPPORTED, "integer of 9 bytes" },
		{ PK("\x80\x05\x8c\x02\xc3\x28."), NZ_EFORMAT, "not valid UTF-8" },
		{ PK("\x80\x05}K\x01N\x86s."), NZ_EFORMAT, "SETITEM at offset" },
		{ PK("\x80\x05}K\x01Ns."), NZ_EUNSUPPORTED, "dict key that is not a str" },
		{ PK("\x80\x05" "e."), NZ_EFORMAT, "no MARK to close" },
		{ PK("\x80\x05(N."), NZ_EFORMAT, "1 values and 1 marks left" },
		{ PK("\x80\x05(R."), NZ_EFORMAT, "the stack is empty above the mark" },
		{ PK("\x80\x05\x8c\x05numpy\x8c\x05" "dtype\x93\x8c\x02O8\x89\x88\x87R\x8c\x01xb."), NZ_EUNSUPPORTED,
		  "BUILD other than of a new numpy dtype" },
		{ PK("\x80\x05\x8c\x0fhdmf_zarr.utils\x8c\x0dZarrReference\x93K\x01\x85\x81."), NZ_EUNSUPPORTED,
		  "NEWOBJ of something other than" },
		{ PK("\x80\x05N."), NZ_EUNSUPPORTED, "does not hold a numpy object array" },
	};
#undef PK
	size_t i;
	uint64_t one = 1;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		json_t *out = NULL;
		int rc = nz__pickle_decode(&out, cases[i].p, cases[i].n, &one, 1, "array 'x'");
		if (rc != cases[i].code)
			NZ__FAIL("case %zu: returned %d (%s)", i, rc, nz_error_last()->message);
		ASSERT(out == NULL);
		ASSERT_CONTAINS(nz_error_last()->message, "array 'x': ");
		ASSERT_CONTAINS(nz_error_last()->message, cases[i].needle);
	}
}

/* A .zarray as hdmf-zarr 0.13 writes it, with the seed's pickle as chunk 0. */
static void put_array(nz_store *st, const char *path, const char *dtype, const char *seed)
{
	char doc[1024], key[256];
	size_t len;
	unsigned char *b = load(&len, seed);
	snprintf(doc, sizeof doc, "{\"chunks\": [%u], \"compressor\": null, \"dtype\": %s, \"fill_value\": 0, "
		 "\"filters\": [{\"id\": \"pickle\", \"protocol\": 5}], \"order\": \"C\", \"shape\": [%u], "
		 "\"zarr_format\": 2}", b[1], dtype, b[1]);
	snprintf(key, sizeof key, "%s/.zarray", path);
	ASSERT_OK(nz_store_put(st, key, doc, strlen(doc)));
	snprintf(key, sizeof key, "%s/0", path);
	ASSERT_OK(nz_store_put(st, key, b + 2, len - 2));
	free(b);
}

static void arrays(void)
{
	nz_store *st = NULL;
	nz_array *a = NULL;
	nz_vlen *v = NULL;
	uint64_t zero = 0, shape = 2;
	nz_array_opts o = NZ_ARRAY_OPTS_INIT;
	ASSERT_OK(nz_store_new_memory(&st));
	put_array(st, "group", "\"|O\"", "hdmf013_electrodes_group");
	ASSERT_OK(nz_array_open(&a, st, "group"));
	ASSERT_EQ_INT(nz_array_object_codec(a), NZ_OBJECT_PICKLE);
	ASSERT_OK(nz_array_read_chunk_vlen(&v, a, &zero));
	ASSERT_EQ_U64(v->count, 4);
	ASSERT_CONTAINS(v->items[3], "\"path\":\"/general/extracellular_ephys/shank0\"");
	nz_vlen_free(v);
	nz_array_free(a);

	/* A compound holding a reference: read as rows of JSON. */
	put_array(st, "ts", "[[\"idx_start\", \"<i4\"], [\"count\", \"<i4\"], [\"timeseries\", \"|O\"]]",
		  "hdmf013_trials_timeseries");
	ASSERT_OK(nz_array_open(&a, st, "ts"));
	ASSERT_EQ_STR(nz_array_dtype(a), "|O");
	ASSERT_OK(nz_array_read_chunk_vlen(&v, a, &zero));
	ASSERT_EQ_U64(v->count, 2);
	ASSERT(strncmp(v->items[1], "[10,10,{", 8) == 0);
	nz_vlen_free(v);
	ASSERT_ERR(NZ_EUNSUPPORTED, nz_array_write_chunk_vlen(a, NULL, &zero, (const char *const[]){ "1", "2" },
							  (const size_t[]){ 1, 1 }, 2));
	ASSERT_CONTAINS(nz_error_last()->message, "read only");
	nz_array_free(a);

	/* A hostile chunk in a real array: the message names the array and chunk. */
	static const char evil[] = "\x80\x05\x8c\x02os\x8c\x06system\x93.";
	ASSERT_OK(nz_store_put(st, "group/0", evil, sizeof evil - 1));
	ASSERT_OK(nz_array_open(&a, st, "group"));
	ASSERT_ERR(NZ_EUNSUPPORTED, nz_array_read_chunk_vlen(&v, a, &zero));
	ASSERT_CONTAINS(nz_error_last()->message, "array 'group': pickle opcode STACK_GLOBAL");
	ASSERT_CONTAINS(nz_error_last()->message, "group/0");
	nz_array_free(a);

	/* Writing pickle is refused before anything is stored. */
	o.dtype = "|O", o.object_codec = NZ_OBJECT_PICKLE, o.ndim = 1, o.shape = &shape;
	ASSERT_ERR(NZ_EUNSUPPORTED, nz_array_create(&a, st, "new", &o));
	ASSERT_CONTAINS(nz_error_last()->message, "read only");
	ASSERT(nz_store_exists(st, "new/.zarray") == 0);
	nz_store_free(st);
}

typedef struct oom_ctx {
	unsigned char *b;
	size_t len;
} oom_ctx;

static int oom_run(void *p)
{
	oom_ctx *c = p;
	json_t *out = NULL;
	int err = decode_seed(&out, c->b, c->len);
	json_decref(out);
	return err;
}

int main(void)
{
	oom_ctx c;
	nz_oom_sweep s = { "pickle decode", oom_run, NULL, NULL, &c, 200, 0, 0, 0 };
	nz__alloc_init();
	corpus();
	refused_opcodes();
	arrays();
	c.b = load(&c.len, "hdmf013_trials_timeseries");
	ASSERT(nz_oom_run_sweep(&s) > 50);
	free(c.b);
	printf("ok\n");
	return 0;
}
