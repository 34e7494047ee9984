/* Growing an array: a handle of another shape, and publishing a shape.
 *
 * Both go through the array's own document (nz__array_to_meta{,3}) and its
 * own validation (nz__array_from_meta), so a reshaped handle is exactly
 * what opening the store after the resize gives. */
#include "zarr/resize.h"

#include "util/alloc.h"
#include "util/error.h"
#include "zarr/zarr_impl.h"

int nz__array_reshaped(nz_array **out, const nz_array *a, const uint64_t *shape)
{
	json_t *doc = NULL, *v = NULL;
	int err;
	*out = NULL;
	if (a->format == 3 ? (err = nz__array_to_meta3(&doc, a, NULL)) < 0
			   : (err = nz__array_to_meta(&doc, a)) < 0)
		return err;
	if (!(v = nz__dims_json(shape, a->ndim)) || nz__json_take(doc, "shape", &v) < 0) {
		err = nz__error_set(NZ_ENOMEM, "out of memory resizing array '%s'", a->path);
		goto done;
	}
	if ((err = nz__array_from_meta(out, a->store, a->path, doc, a->format)) < 0) {
		nz__error_wrap("array '%s': cannot take the new shape", a->path);
		goto done;
	}
	(*out)->skip_empty = a->skip_empty;
done:
	json_decref(v);
	json_decref(doc);
	return err;
}

int nz__array_resize(nz_array **out, const nz_array *a, const uint64_t *shape)
{
	nz_array *b = NULL;
	json_t *doc = NULL, *attrs = NULL;
	char *key = NULL;
	int err;
	if (out)
		*out = NULL;
	if ((err = nz__array_reshaped(&b, a, shape)) < 0 ||
	    (err = nz__zarr_key(&key, a->path, a->format == 3 ? "zarr.json" : ".zarray")) < 0)
		goto done;
	if (a->format == 3 ? (err = nz__attrs3_read(&attrs, a->store, key)) < 0 ||
				     (err = nz__array_to_meta3(&doc, b, attrs)) < 0
			   : (err = nz__array_to_meta(&doc, b)) < 0)
		goto done;
	if ((err = nz__zarr_put_doc(a->store, key, doc)) < 0)
		goto done;
	if (out) {
		*out = b;
		b = NULL;
	}
done:
	if (err < 0)
		nz__error_wrap("resizing array '%s'", a->path);
	nz_array_free(b);
	json_decref(doc);
	json_decref(attrs);
	nz__free(key);
	return err;
}
