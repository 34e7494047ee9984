/* Internal: a restricted decoder for numcodecs' `pickle` object codec, as
 * hdmf-zarr <= 0.13 writes it (numcodecs.Pickle: pickle.dumps of the chunk,
 * an object ndarray, at protocol 2..5).
 *
 * It runs no code. It accepts only what such chunks hold: protocol 2..5
 * framing, MARK/TUPLE/LIST/DICT/APPEND(S)/SETITEM(S), str, bytes, ints up
 * to 64 bits, floats, None, True, False, memo put/get, and these globals,
 * each only in the call numpy's or hdmf-zarr's pickling makes:
 *   numpy[._]core.multiarray._reconstruct(numpy.ndarray, (0,), b'b')
 *   numpy.dtype(name, False, True) (+ BUILD with its state tuple)
 *   BUILD of the array with (1, shape, dtype, False, [elements])
 *   hdmf_zarr.utils.ZarrReference() by NEWOBJ (+ SETITEMS: a dict)
 *   _codecs.encode(str, 'latin1') and builtins.bytes() (protocol 2 bytes).
 * Anything else is NZ_EUNSUPPORTED naming `what`, the opcode and its offset.
 *
 * Allocation is bounded by the input: every opcode creates at most one
 * value, the memo must be filled in order, lengths are checked against the
 * bytes left before anything is allocated, nesting is at most
 * NZ__PICKLE_MAX_DEPTH, and the elements' JSON (memo gets repeat values) is
 * refused when it would exceed NZ__PICKLE_MAX_GROWTH times the input. */
#ifndef NZ_ZARR_PICKLE_H
#define NZ_ZARR_PICKLE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define NZ__PICKLE_MAX_DEPTH 32
#define NZ__PICKLE_MAX_GROWTH 64

/** Decode one pickled chunk into *out (new reference): a JSON list of the
 *  array's elements in C order, each as JSON (str and UTF-8 bytes as
 *  strings, tuples and lists as lists, ZarrReference as an object). The
 *  pickled array must have `ndim` dimensions of the sizes in `shape` (a
 *  chunk's). NZ_EFORMAT for a damaged pickle, NZ_EUNSUPPORTED for one that
 *  uses anything not listed above, NZ_ENOMEM; messages name `what`.
 *  Thread-safe (no shared state). */
int nz__pickle_decode(json_t **out, const void *data, size_t len, const uint64_t *shape, int ndim,
		      const char *what);

#endif
