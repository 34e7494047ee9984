/* nwbzarr: one dataset of an HDF5 file as an engine source (nz_source), read
 * the way nz_export_hdf5 reads its large datasets, so that a client that
 * has its own hierarchy writer (the Python package's NWBZarrIO.export) can
 * fill arrays from HDF5 on the engine's threads.
 *
 * Reading: a chunked dataset of little-endian numbers filtered only by
 * deflate, shuffle and fletcher32 is read chunk by chunk raw
 * (H5Dread_chunk) under the process-wide HDF5 lock and decoded (inflate,
 * unshuffle) on the reading thread, so N workers inflate N chunks at once.
 * Anything else (other filters, big-endian numbers, contiguous or compact
 * layout, unallocated chunks) is read by H5Dread of the region under the
 * lock: libhdf5 decodes and converts it.
 *
 * Stored chunks: written with nz_write_array into an array whose (inner)
 * chunks are the HDF5 chunks and whose codecs are the dataset's filters as
 * numcodecs has them (shuffle by the itemsize -> numcodecs shuffle, deflate
 * -> numcodecs zlib of any level, in the HDF5 order; no other filter), a
 * chunk every filter ran on moves as HDF5 stored it: no deflate, and one
 * inflate (libdeflate, on the writing thread) to check it. A chunk that
 * does not decode to exactly a chunk's bytes (a bad zlib stream or
 * adler32) fails the write as a decoded read fails, naming the file and
 * the chunk; under skip_empty_chunks (nz_array_set_skip_empty) a chunk
 * whose every element is the fill value is left out, as an encoded one
 * is. Such a chunk keeps the file's deflate level. Chunks not allocated,
 * or with a filter skipped, are read and encoded as above.
 *
 * Thread safety: the source may be read from many threads at once (the
 * nz_source contract); opening and freeing take the HDF5 lock themselves
 * and may run on any thread. The file is opened read-only with this
 * library's libhdf5, separately from any other handle on it in the process
 * (h5py's, for one): the file must not be written while the source is open.
 */
#ifndef NWBZARR_H5SOURCE_H
#define NWBZARR_H5SOURCE_H

#include "nwbzarr/common.h"
#include "nwbzarr/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nz_hdf5_source_opts {
	unsigned int version; /**< NZ_HDF5_SOURCE_OPTS_VERSION */
	/** 1 = let libhdf5 decode every region (under the lock) instead of
	 *  decoding raw chunks on the reading threads: for measuring both. */
	int hdf5_decode;
} nz_hdf5_source_opts;

#define NZ_HDF5_SOURCE_OPTS_VERSION 1
#define NZ_HDF5_SOURCE_OPTS_INIT { NZ_HDF5_SOURCE_OPTS_VERSION, 0 }

/** Open the dataset at absolute path `dataset` (links followed) of the HDF5
 *  file `file` as a source of its shape (a scalar has ndim 0) and its numpy
 *  dtype, little-endian ("<i2", "<f8", "|u1", "|b1" for HDF5's enum bool).
 *  opts NULL = defaults. Errors name the file and the dataset:
 *  NZ_ENOTFOUND (no such file or object), NZ_EFORMAT (not HDF5, corrupt),
 *  NZ_EINVAL (not a dataset, bad options), NZ_EUNSUPPORTED for values that
 *  are not numbers or booleans (strings, references, compounds) and for a
 *  filter this libhdf5 cannot decode (a plugin another library loaded,
 *  such as h5py's lzf or hdf5plugin's blosc). Reads of corrupt chunks fail
 *  with NZ_ECODEC / NZ_EFORMAT naming the file, the dataset and the chunk.
 *  Free with nz_source_free. */
NZ_EXTERN int nz_source_open_hdf5(nz_source **out, const char *file, const char *dataset,
				  const nz_hdf5_source_opts *opts);

/** What an HDF5 source has read so far. The caller sets `version`
 *  (NZ_HDF5_SOURCE_STATS_INIT); the library fills only the fields that
 *  version has, so a program built against an older header keeps working. */
typedef struct nz_hdf5_source_stats {
	unsigned int version; /**< NZ_HDF5_SOURCE_STATS_VERSION */
	int raw_path;         /**< 1: chunks are read raw and decoded by the readers */
	uint64_t raw_chunks;  /**< HDF5 chunks read raw and decoded outside the lock */
	uint64_t hdf5_reads;  /**< regions decoded by libhdf5 under the lock */
	/* version 2 */
	/** HDF5 chunks taken as stored: moved into the array, or left out as
	 *  empty under skip_empty_chunks */
	uint64_t stored_chunks;
} nz_hdf5_source_stats;

#define NZ_HDF5_SOURCE_STATS_VERSION 2
#define NZ_HDF5_SOURCE_STATS_INIT { NZ_HDF5_SOURCE_STATS_VERSION, 0, 0, 0, 0 }

/** Fill `out` (its version set, 1 or 2) for a source nz_source_open_hdf5
 *  made; NZ_EINVAL for any other source or version. Thread-safe. */
NZ_EXTERN int nz_source_hdf5_stats(const nz_source *src, nz_hdf5_source_stats *out);

#ifdef __cplusplus
}
#endif
#endif
