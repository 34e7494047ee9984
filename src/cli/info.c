/* `nwbzarr info`: the tree of a Zarr store with NWB types, array shapes,
 * dtypes, chunks, codecs and stored sizes; and the convert summary. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct du_ctx {
	nz_store *store;
	int chunks_only;
	uint64_t bytes;
} du_ctx;

static int du_key(const char *key, void *payload)
{
	du_ctx *c = payload;
	const char *leaf = strrchr(key, '/');
	uint64_t size = 0;
	leaf = leaf ? leaf + 1 : key;
	if (c->chunks_only && (leaf[0] == '.' || strcmp(leaf, "zarr.json") == 0))
		return 0;
	if (nz_store_size(c->store, key, &size) == 0) /* (a key removed meanwhile counts 0) */
		c->bytes += size;
	return 0;
}

/* Through the store's listing and sizes, so it is what an object store
 * would report too; 0 when the folder cannot be opened. */
uint64_t nzc_du(const char *dir, int chunks_only)
{
	du_ctx c = { NULL, chunks_only, 0 };
	if (nz_store_open_dir(&c.store, dir, NZ_STORE_READ) == 0)
		nz_store_list(c.store, "", du_key, &c);
	nz_store_free(c.store);
	return c.bytes;
}

int nzc_json_paths(const char *a, const char *b)
{
	if (nz_text_check(a, "--json: the path") < 0 || nz_text_check(b, "--json: the path") < 0) {
		fprintf(stderr, "nwbzarr: %s\n", nz_error_last()->message);
		return -1;
	}
	return 0;
}

int nzc_print_json(json_t *j)
{
	char *text = j ? json_dumps(j, JSON_SORT_KEYS) : NULL;
	json_decref(j);
	if (!text) {
		fprintf(stderr, "nwbzarr: cannot write the JSON summary (out of memory)\n");
		return -1;
	}
	printf("%s\n", text);
	free(text);
	return 0;
}

int nzc_report(const nzc_args *a, uint64_t frames, uint64_t channels, size_t itemsize,
	       double rate, double elapsed_s, const char *sidecar, int jobs_used)
{
	double bytes = (double)frames * (double)channels * (double)itemsize;
	double stored = (double)nzc_du(a->output, 0);
	double mbps = elapsed_s > 0 ? bytes / 1e6 / elapsed_s : 0;
	if (a->json) {
		json_t *j = json_pack("{s:s, s:s, s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:i, s:o}",
				      "input", a->input, "output", a->output, "frames",
				      (json_int_t)frames, "channels", (json_int_t)channels, "rate",
				      rate, "bytes", bytes, "stored_bytes", stored, "seconds",
				      elapsed_s, "mb_per_s", mbps, "jobs", jobs_used,
				      "sidecar", sidecar ? json_string(sidecar) : json_null());
		return nzc_print_json(j);
	}
	if (a->quiet)
		return 0;
	printf("wrote %s: %llu frames x %llu channels at %g Hz; %.1f MB in %.2f s = %.1f MB/s; "
	       "stored %.1f MB (ratio %.2f)%s%s\n",
	       a->output, (unsigned long long)frames, (unsigned long long)channels, rate,
	       bytes / 1e6, elapsed_s, mbps, stored / 1e6, stored > 0 ? bytes / stored : 0,
	       sidecar ? "; metadata from " : "", sidecar ? sidecar : "");
	return 0;
}

/* ---- info ---------------------------------------------------------------- */

typedef struct nodes {
	char **paths; /* "" root, "a/b"; groups and arrays */
	size_t n, cap;
} nodes;

static int collect(const char *key, void *payload)
{
	nodes *l = payload;
	size_t n = strlen(key);
	const char *leaf = strrchr(key, '/');
	leaf = leaf ? leaf + 1 : key;
	if (strcmp(leaf, ".zgroup") != 0 && strcmp(leaf, ".zarray") != 0 && strcmp(leaf, "zarr.json") != 0)
		return 0;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		char **p = realloc(l->paths, cap * sizeof *p);
		if (!p)
			return NZ_ENOMEM;
		l->paths = p;
		l->cap = cap;
	}
	n -= strlen(leaf) + (leaf != key);
	if (!(l->paths[l->n] = malloc(n + 1)))
		return NZ_ENOMEM;
	memcpy(l->paths[l->n], key, n);
	l->paths[l->n][n] = '\0';
	l->n++;
	return 0;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static json_t *get_json(nz_store *st, const char *path, const char *leaf)
{
	char key[4096];
	void *data = NULL;
	size_t len = 0;
	json_t *j = NULL;
	snprintf(key, sizeof key, "%s%s%s", path, *path ? "/" : "", leaf);
	if (nz_store_exists(st, key) == 1 && nz_store_get(st, key, &data, &len) == 0)
		j = json_loadb(data, len, 0, NULL);
	nz_free(data);
	return j;
}

/* "blosc(lz4,5,shuffle)" / "zlib(1)" from a codec config. */
static void codec_text(char *buf, size_t cap, const json_t *c)
{
	const char *id = json_string_value(json_object_get(c, "id"));
	const char *cname = json_string_value(json_object_get(c, "cname"));
	json_t *lvl = json_object_get(c, "clevel");
	if (!lvl)
		lvl = json_object_get(c, "level");
	if (!id) {
		snprintf(buf, cap, "none");
	} else if (cname) {
		snprintf(buf, cap, "%s(%s,%lld)", id, cname, (long long)json_integer_value(lvl));
	} else if (lvl) {
		snprintf(buf, cap, "%s(%lld)", id, (long long)json_integer_value(lvl));
	} else {
		snprintf(buf, cap, "%s", id);
	}
}

/* A v3 codec list as "bytes+zstd(0)"; sharding_indexed shows its inner
 * codecs (the shard shape has a column of its own). */
static void codecs3_text(char *buf, size_t cap, const json_t *codecs)
{
	size_t i, off = 0;
	json_t *c;
	buf[0] = '\0';
	json_array_foreach(codecs, i, c) {
		const char *name = json_string_value(json_object_get(c, "name"));
		const json_t *cfg = json_object_get(c, "configuration");
		const char *cname = json_string_value(json_object_get(cfg, "cname"));
		json_t *lvl = json_object_get(cfg, "clevel");
		if (!lvl)
			lvl = json_object_get(cfg, "level");
		if (off >= cap)
			break;
		if (name && strcmp(name, "sharding_indexed") == 0) {
			codecs3_text(buf + off, cap - off, json_object_get(cfg, "codecs"));
			off += strlen(buf + off);
			continue;
		}
		if (cname)
			off += (size_t)snprintf(buf + off, cap - off, "%s%s(%s,%lld)", i ? "+" : "",
						name ? name : "?", cname, (long long)json_integer_value(lvl));
		else if (json_is_integer(lvl))
			off += (size_t)snprintf(buf + off, cap - off, "%s%s(%lld)", i ? "+" : "",
						name ? name : "?", (long long)json_integer_value(lvl));
		else
			off += (size_t)snprintf(buf + off, cap - off, "%s%s", i ? "+" : "", name ? name : "?");
	}
}

/* The sharding codec of a v3 array (NULL when it is not sharded). */
static const json_t *sharding(const json_t *meta)
{
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(meta, "codecs"), i, c) {
		const char *name = json_string_value(json_object_get(c, "name"));
		if (name && strcmp(name, "sharding_indexed") == 0)
			return json_object_get(c, "configuration");
	}
	return NULL;
}

static void shape_text(char *buf, size_t cap, const json_t *arr)
{
	size_t i, off = 0;
	json_t *v;
	off += (size_t)snprintf(buf, cap, "(");
	json_array_foreach(arr, i, v) {
		if (off < cap)
			off += (size_t)snprintf(buf + off, cap - off, "%s%lld", i ? ", " : "",
						(long long)json_integer_value(v));
	}
	if (off < cap)
		snprintf(buf + off, cap - off, ")");
}

static uint64_t stored_size(const char *root, const char *path)
{
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/%s", root, path);
	return nzc_du(dir, 1);
}

static void print_json_line(json_t *j)
{
	char *text = j ? json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
	if (text)
		printf("%s\n", text);
	free(text);
	json_decref(j);
}

/* v2: .zarray + .zattrs; v3: zarr.json (attributes inline). */
static void print_array(const nzc_args *a, nz_store *st, const char *path, int depth, int v3)
{
	json_t *meta = get_json(st, path, v3 ? "zarr.json" : ".zarray");
	json_t *attrs = v3 ? json_incref(json_object_get(meta, "attributes")) : get_json(st, path, ".zattrs");
	const json_t *shard = v3 ? sharding(meta) : NULL;
	const json_t *grid = json_object_get(json_object_get(json_object_get(meta, "chunk_grid"),
							 "configuration"), "chunk_shape");
	const json_t *chunk_list = !v3 ? json_object_get(meta, "chunks")
				   : shard ? json_object_get(shard, "chunk_shape") : grid;
	char shape[256], chunks[256], shards[256] = "", comp[256], filt[256] = "", line[1024];
	const char *type = json_string_value(json_object_get(attrs, "neurodata_type"));
	const json_t *dtj = json_object_get(meta, v3 ? "data_type" : "dtype");
	const char *dt = json_is_object(dtj) ? json_string_value(json_object_get(dtj, "name"))
					     : json_string_value(dtj);
	nz_array *arr = NULL;
	double raw = 0, stored;
	size_t i;
	json_t *f;
	shape_text(shape, sizeof shape, json_object_get(meta, "shape"));
	shape_text(chunks, sizeof chunks, chunk_list);
	if (shard) {
		shape_text(shards, sizeof shards - 8, grid);
		memmove(shards + 7, shards, strlen(shards) + 1);
		memcpy(shards, "shards ", 7);
	}
	if (v3)
		codecs3_text(comp, sizeof comp, json_object_get(meta, "codecs"));
	else
		codec_text(comp, sizeof comp, json_object_get(meta, "compressor"));
	json_array_foreach(json_object_get(meta, "filters"), i, f) {
		char one[64];
		codec_text(one, sizeof one, f);
		snprintf(filt + strlen(filt), sizeof filt - strlen(filt), "%s+", one);
	}
	if (nz_array_open(&arr, st, path) == 0) {
		raw = (double)nz_array_itemsize(arr);
		for (int d = 0; d < nz_array_ndim(arr); d++)
			raw *= (double)nz_array_shape(arr)[d];
		nz_array_free(arr);
	}
	stored = (double)stored_size(nz_store_describe(st), path);
	if (a->json && v3) {
		json_t *j = json_pack("{s:s+, s:s, s:i, s:O?, s:O?, s:O?, s:O?, s:O?, s:s?, s:f, s:f}",
				      "path", "/", path, "kind", "array", "zarr_format", 3,
				      "shape", json_object_get(meta, "shape"), "chunks", chunk_list,
				      "shards", shard ? grid : NULL, "dtype", dtj,
				      "codecs", json_object_get(meta, "codecs"), "neurodata_type", type,
				      "bytes", raw, "stored_bytes", stored);
		print_json_line(j);
	} else if (a->json) {
		json_t *j = json_pack("{s:s+, s:s, s:O?, s:O?, s:s?, s:O?, s:O?, s:s?, s:f, s:f}",
				      "path", "/", path, "kind", "array", "shape", json_object_get(meta, "shape"),
				      "chunks", json_object_get(meta, "chunks"), "dtype", dt,
				      "compressor", json_object_get(meta, "compressor"), "filters",
				      json_object_get(meta, "filters"), "neurodata_type", type,
				      "bytes", raw, "stored_bytes", stored);
		print_json_line(j);
	} else {
		const char *name = strrchr(path, '/');
		snprintf(line, sizeof line, "%*s%s%s%s%s", depth * 2, "", name ? name + 1 : path,
			 type ? " [" : "", type ? type : "", type ? "]" : "");
		printf("%-48s %-14s %-5s chunks %-14s %s%s%s%s  ", line, shape, dt ? dt : "?", chunks,
		       shards, *shards ? " " : "", filt, comp);
		if (raw > 0)
			printf("%.0f B -> ", raw);
		printf("%.0f B", stored);
		if (stored > 0 && raw > 0)
			printf(" (x%.2f)", raw / stored);
		printf("\n");
	}
	json_decref(meta);
	json_decref(attrs);
}

static void print_group(const nzc_args *a, nz_store *st, const char *p, int depth, int v3)
{
	json_t *doc = v3 ? get_json(st, p, "zarr.json") : NULL;
	json_t *attrs = v3 ? json_incref(json_object_get(doc, "attributes")) : get_json(st, p, ".zattrs");
	const char *type = json_string_value(json_object_get(attrs, "neurodata_type"));
	const char *name = strrchr(p, '/');
	if (a->json)
		print_json_line(json_pack("{s:s, s:s+, s:s?}", "kind", "group", "path", "/", p,
					  "neurodata_type", type));
	else
		printf("%*s%s/%s%s%s\n", depth * 2, "", *p ? (name ? name + 1 : p) : "",
		       type ? " [" : "", type ? type : "", type ? "]" : "");
	json_decref(attrs);
	json_decref(doc);
}

/* A node of the store is a group: v2 has a .zgroup, v3 says so in zarr.json. */
static int is_group(nz_store *st, const char *p, int v3)
{
	json_t *doc = get_json(st, p, v3 ? "zarr.json" : ".zgroup");
	const char *t = json_string_value(json_object_get(doc, "node_type"));
	int g = v3 ? t && strcmp(t, "group") == 0 : doc != NULL;
	json_decref(doc);
	return g;
}

/* Every metadata document must hold before anything is printed: a tree
 * drawn from the documents that happen to parse would pass a broken store
 * off as a smaller good one. 0, or 1 after the message naming the key. */
static int check_store(nz_store *st, const nodes *l, int v3)
{
	if (nz_metadata_check(st) < 0)
		return nzc_fail();
	for (size_t i = 0; i < l->n; i++) {
		nz_array *arr = NULL;
		if (is_group(st, l->paths[i], v3))
			continue;
		/* an array: the library's own reader judges its .zarray */
		if (nz_array_open(&arr, st, l->paths[i]) < 0) {
			fprintf(stderr, "nwbzarr: '%s': %s\n", nz_store_describe(st),
				nz_error_last()->message);
			return 1;
		}
		nz_array_free(arr);
	}
	return 0;
}

int nzc_info(const nzc_args *a)
{
	nz_store *st = NULL;
	nodes l = {0};
	int depth, complete, v3;
	if (nz_store_open_dir(&st, a->input, NZ_STORE_READ) < 0)
		return nzc_fail();
	v3 = nz_store_exists(st, "zarr.json") == 1;
	if (!v3 && nz_store_exists(st, ".zgroup") != 1) {
		/* Killed right after its marker: incomplete, not foreign. */
		int ours = nz_store_exists(st, NZ_INCOMPLETE_MARKER) == 1;
		if (ours && nz_nwb_check_complete(st) < 0)
			printf("%s\n", nz_error_last()->message);
		else
			fprintf(stderr, "nwbzarr: '%s' is not a Zarr group (no .zgroup or zarr.json)\n", a->input);
		nz_store_free(st);
		return ours ? 3 : 1;
	}
	if (nz_store_list(st, "", collect, &l) != 0) {
		nz_store_free(st);
		return nzc_fail();
	}
	qsort(l.paths, l.n, sizeof *l.paths, cmp);
	if (check_store(st, &l, v3) != 0) {
		for (size_t i = 0; i < l.n; i++)
			free(l.paths[i]);
		free(l.paths);
		nz_store_free(st);
		return 1;
	}
	/* An incomplete store is still listed (to see how far it got), flagged
	 * first, and the exit status says so (3, docs/cli.md). */
	if ((complete = nz_nwb_check_complete(st)) < 0 && complete != NZ_EINCOMPLETE) {
		nz_store_free(st);
		return nzc_fail();
	}
	if (complete < 0 && a->json)
		print_json_line(json_pack("{s:s, s:b, s:s}", "kind", "status", "complete", 0,
					  "message", nz_error_last()->message));
	else if (complete < 0)
		printf("%s\n", nz_error_last()->message);
	for (size_t i = 0; i < l.n; i++) {
		const char *p = l.paths[i];
		depth = 0;
		for (const char *c = p; *c; c++)
			depth += *c == '/';
		if (*p)
			depth++;
		if (is_group(st, p, v3))
			print_group(a, st, p, depth, v3);
		else
			print_array(a, st, p, depth, v3);
		free(l.paths[i]);
	}
	free(l.paths);
	nz_store_free(st);
	return complete < 0 ? 3 : 0;
}
