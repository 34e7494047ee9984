/* nz_write_array: the engine with nz_array_write_chunk as its sink and one
 * nz_scratch per worker. Kept apart from the core so that the core links
 * without the Zarr layer. */
#include <string.h>

#include "engine/write.h"
#include "util/error.h"

static int array_put(void *ctx, void **state, const uint64_t *chunk_index, const void *data,
		     size_t len)
{
	int err;

	if (!*state && (err = nz_scratch_new((nz_scratch **)state)) < 0)
		return err;
	return nz_array_write_chunk(ctx, *state, chunk_index, data, len);
}

static void array_state_free(void *state)
{
	nz_scratch_free(state);
}

int nz__target_from_array(nz__target *t, nz_array *a, const nz_source *src)
{
	const char *dtype = nz_array_dtype(a), *sdtype = nz_source_dtype(src);

	memset(t, 0, sizeof *t);
	t->name = nz_array_path(a);
	if (nz_array_object_codec(a) != NZ_OBJECT_NONE)
		return nz__error_set(NZ_EUNSUPPORTED, "writing '%s': object arrays are written with "
				     "nz_array_write_all_vlen, not the engine", t->name);
	/* Same size but another type ('<f4' into '<i4') would silently
	 * reinterpret the bits: refuse unless the dtypes are the same string
	 * (structured dtypes, spelled as JSON, are compared by size only). */
	if (dtype[0] != '[' && strcmp(dtype, sdtype) != 0)
		return nz__error_set(NZ_EMISMATCH, "writing '%s': the source's dtype %s differs "
				     "from the array's %s", t->name, sdtype, dtype);
	t->ndim = nz_array_ndim(a);
	t->shape = nz_array_shape(a);
	t->chunks = nz_array_chunks(a);
	t->itemsize = nz_array_itemsize(a);
	t->fill = nz_array_fill_value(a);
	return 0;
}

int nz_write_array(nz_array *dst, nz_source *src, const nz_write_opts *opts)
{
	nz__target t;
	int err;

	if ((err = nz__target_from_array(&t, dst, src)) < 0)
		return err;
	t.put = array_put;
	t.state_free = array_state_free;
	t.ctx = dst;
	return nz__write(&t, src, opts);
}
