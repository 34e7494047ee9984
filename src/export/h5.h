/* Internal: the HDF5 side of export and verify.
 *
 * Thread safety: Debian's libhdf5 is a serial build and is not thread-safe,
 * so every call into libhdf5 made by this library happens between
 * nz__h5_lock() and nz__h5_unlock() (one process-wide mutex, in
 * util/h5lock.h so that hdmf's schema copy takes it too; functions marked
 * NZ__H5_HELD expect it held). Everything else here
 * (decoding raw chunks, copying, converting) runs outside the lock, on as
 * many threads as the caller uses. nz__h5ds_read is thread-safe; the other
 * functions take the lock themselves and may be called from any thread.
 *
 * Reading a region of a chunked dataset whose filters are only deflate,
 * shuffle and fletcher32 and whose type is a little-endian number: each HDF5
 * chunk it touches is read raw with H5Dread_chunk under the lock and decoded
 * (inflate with libdeflate, unshuffle) by the calling thread. Anything else
 * (other filters such as blosc/zstd/lz4 plugins, big-endian or converted
 * types, strings, references, contiguous layout, missing chunks) is read
 * with H5Dread of the hyperslab under the lock: libhdf5 decodes it. */
#ifndef NZ_EXPORT_H5_H
#define NZ_EXPORT_H5_H

#include <hdf5.h>

#include "export/model.h"
#include "util/h5lock.h"
#include "util/error.h"

/** Set an error whose message ends with libhdf5's own explanation (its
 *  innermost error-stack entry). Call with the lock held. */
int nz__h5_error(int code, const char *fmt, ...) NZ__PRINTF(2, 3) NZ__H5_HELD;

typedef struct nz__h5file {
	hid_t fid;
	char *path;
} nz__h5file;

/** Open an HDF5 file read-only. A missing, truncated or corrupt file gives
 *  NZ_ENOTFOUND / NZ_EFORMAT with a message naming the file. */
int nz__h5_open(nz__h5file **out, const char *path);
void nz__h5_close(nz__h5file *f);

/** Walk every group, dataset, attribute and link into `out` (sorted).
 *  Fails with NZ_EUNSUPPORTED naming the object for anything the model
 *  cannot represent (region references, array/vlen-sequence/opaque types). */
int nz__h5_walk(nz__xmodel *out, nz__h5file *f);

/** The dataset at absolute `path` of `f` as a node (kind, shape, chunks,
 *  type; no attributes), links followed. NZ_ENOTFOUND / NZ_EINVAL (not a
 *  dataset) / NZ_EUNSUPPORTED (a type the model lacks) naming the dataset
 *  and the file. The caller clears *out (nz__xnode_clear). */
int nz__h5_dataset_node(nz__xnode *out, nz__h5file *f, const char *path);

/* ---- type conversion (h5type.c), lock held ---- */

/** How to read an HDF5 type and turn it into the normalised form. */
typedef struct nz__h5conv {
	hid_t mtype;       /**< memory type handed to H5Dread/H5Aread */
	size_t msize;      /**< bytes per element as read */
	nz__xtype type;    /**< normalised type */
	size_t nfields;
	struct nz__h5conv *fields;
	size_t *moffsets;  /**< COMPOUND: field offsets in the read layout */
	int vlen_str;      /**< STRING read as char* by libhdf5 */
	int raw_le;        /**< fixed-size number whose file bytes are the normalised bytes */
} nz__h5conv;

/** Build the conversion of file type `ftype`; `what` names the object for
 *  messages ("/a/b" or "/a/b attribute 'x'"). */
int nz__h5conv_init(nz__h5conv *c, hid_t ftype, const char *what) NZ__H5_HELD;
void nz__h5conv_clear(nz__h5conv *c) NZ__H5_HELD;
/** 1 if libhdf5 allocates memory when reading (vlen strings anywhere). */
int nz__h5conv_has_vlen(const nz__h5conv *c);
/** Convert n read elements at `src` (as libhdf5 filled them) into the
 *  normalised form at `dst`. `loc` resolves references. */
int nz__h5conv_apply(const nz__h5conv *c, hid_t loc, const void *src, void *dst, size_t n,
		     const char *what) NZ__H5_HELD;

/** Read a whole attribute as JSON in hdmf-zarr's form (see model.h).
 *  `root_oid` is the file's root object_id (for references). */
int nz__h5_attr_json(json_t **out, hid_t attr, hid_t loc, const char *root_oid,
		     const char *what) NZ__H5_HELD;

/** The object_id attribute of the object at `path` or NULL (new string). */
char *nz__h5_object_id(hid_t loc, const char *path) NZ__H5_HELD;

/* ---- reading dataset values (h5read.c) ---- */

typedef struct nz__h5ds nz__h5ds;

/** Counters for the benchmark and tests. */
typedef struct nz__h5stats {
	uint64_t raw_chunks;   /**< chunks read raw and decoded outside the lock */
	uint64_t hdf5_reads;   /**< regions read by H5Dread under the lock */
} nz__h5stats;

/** Open the dataset of `node` (which must outlive the handle). force_hdf5=1
 *  disables the raw-chunk path (for measuring and testing both). */
int nz__h5ds_open(nz__h5ds **out, nz__h5file *f, const nz__xnode *node, int force_hdf5);
void nz__h5ds_close(nz__h5ds *ds);
/** The node the handle reads. */
const nz__xnode *nz__h5ds_node(const nz__h5ds *ds);
/** 1 if regions will use the raw-chunk path. */
int nz__h5ds_raw_path(const nz__h5ds *ds);
/** Read [start, start+count) into `out`, dense C order, normalised form
 *  (len = elements x type.size). Scalars: ndim 0, start/count ignored.
 *  Thread-safe. */
int nz__h5ds_read(nz__h5ds *ds, const uint64_t *start, const uint64_t *count, void *out,
		  size_t len);
void nz__h5ds_stats(const nz__h5ds *ds, nz__h5stats *out);

#endif
