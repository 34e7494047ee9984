/* Internal: JSON text exactly as Python's json.dumps writes it, and parsing
 * with messages that say where the text is broken.
 *
 * Zarr-python writes every metadata document with
 *   json.dumps(o, indent=4, sort_keys=True, ensure_ascii=True, separators=(',', ': '))
 * and numcodecs' json2 codec writes chunks with
 *   json.dumps(o, sort_keys=True, ensure_ascii=True, separators=(',', ':'))
 * We reproduce both byte for byte so our stores compare equal to theirs:
 * keys sorted by code point, non-ASCII and control characters escaped as
 * \uXXXX (surrogate pairs above U+FFFF), floats in Python's repr (shortest
 * round-trip digits, "1.0", "1e-05", "1e+16").
 *
 * Non-finite floats: jansson cannot hold NaN/Infinity, but Python writes them
 * bare (NaN, Infinity, -Infinity). nz__json_nonfinite() makes a marker value
 * (a jansson string with a private prefix) that the emitter writes bare, and
 * nz__json_is_nonfinite() recognises it; nz__json_parse turns the bare
 * tokens into markers, so documents holding them round-trip. Zarr's fill
 * values are plain strings ("NaN") and need no marker.
 *
 * All functions are thread-safe (no shared state); call nz__alloc_init()
 * once before using jansson so its allocations go through nz__malloc. */
#ifndef NZ_UTIL_JSON_H
#define NZ_UTIL_JSON_H

#include <jansson.h>

#include "util/buf.h"

typedef enum nz_json_style {
	NZ_JSON_ZARR = 0, /**< indent=4, separators (',', ': '), sorted, ASCII */
	NZ_JSON_COMPACT,  /**< separators (',', ':'), sorted, ASCII */
	/** Zarr v3 (zarr-python 3: json.dumps(o, indent=2)): indent 2,
	 *  separators (',', ': '), keys in insertion order, ASCII. */
	NZ_JSON_ZARR3
} nz_json_style;

/** Append the text of `value` to `out` (not NUL-terminated; out->len grows).
 *  NZ_EINVAL for a value jansson cannot describe, NZ_ENOMEM. */
int nz__json_emit(nz_buf *out, const json_t *value, nz_json_style style);

/** Like nz__json_emit but returns a NUL-terminated string the caller frees
 *  with nz__free. */
int nz__json_dumps(char **out, const json_t *value, nz_json_style style);

/** Append Python's repr() of a double ("0.1", "1e-07", "nan" is not valid:
 *  non-finite values are written NaN/Infinity/-Infinity as json.dumps does). */
int nz__json_emit_double(nz_buf *out, double v);

/** A value that nz__json_emit writes as the bare token NaN, Infinity or
 *  -Infinity (for a non-finite v) or as a float (finite v). New reference;
 *  NULL when out of memory. */
json_t *nz__json_nonfinite(double v);

/** 1 and *v set if `value` is a marker made by nz__json_nonfinite. */
int nz__json_is_nonfinite(const json_t *value, double *v);

/** Parse `len` bytes of JSON text as Python's json.loads does: the bare
 *  tokens NaN, Infinity and -Infinity are accepted and become
 *  nz__json_nonfinite markers. `what` names the document in messages
 *  (e.g. "data/.zarray"): "data/.zarray: invalid JSON at line 3 column 7:
 *  ...". Flags are jansson's decode flags (JSON_DECODE_ANY etc.). On failure
 *  NZ_EFORMAT and *out is NULL. */
int nz__json_parse(json_t **out, const void *text, size_t len, const char *what, size_t flags);

/** Type name for messages ("object", "array", "string", "integer", ...). */
const char *nz__json_type_name(const json_t *value);

#endif
