/* Internal: copying boxes between dense C-order arrays, and dtype sizes. */
#ifndef NZ_ENGINE_BOX_H
#define NZ_ENGINE_BOX_H

#include <stddef.h>
#include <stdint.h>

/** Copy the box of extent `count` at `src_off` in `src` (a dense C-order
 *  array of extent `src_shape`) to `dst_off` in `dst` (extent `dst_shape`).
 *  The caller guarantees the box fits both; runs of elements that are
 *  contiguous in both arrays are copied with one memcpy. ndim 0 copies one
 *  element. */
void nz__copy_box(void *dst, const uint64_t *dst_shape, const uint64_t *dst_off,
		  const void *src, const uint64_t *src_shape, const uint64_t *src_off,
		  const uint64_t *count, int ndim, size_t itemsize);

/** Set `n` elements of `itemsize` bytes to `fill` (NULL = zero bytes). */
void nz__fill_elements(void *dst, size_t n, const void *fill, size_t itemsize);

/** Bytes per element of a fixed-size numpy dtype string ("<i2", "|b1",
 *  "|S12", "<U3", ...). NZ_EUNSUPPORTED with a message for anything else
 *  (object and structured dtypes). */
int nz__dtype_size(size_t *out, const char *dtype);

/** Overflow-checked product of n uint64 values times `scale`, as a size_t;
 *  0 on success, -1 on overflow. */
int nz__prod_size(size_t *out, const uint64_t *v, int n, size_t scale);

#endif
