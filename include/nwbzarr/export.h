/* nwbzarr: export an NWB HDF5 file to NWB Zarr (hdmf-zarr's layout), in
 * parallel, and verify that two NWB files (HDF5 or Zarr) hold the same
 * content.
 *
 * Export walks the whole HDF5 file: groups, datasets, attributes, soft and
 * external links, object references (in datasets, attributes and compound
 * fields), strings (fixed/variable, ASCII/UTF-8), compounds, enums and
 * booleans, scalars, empty datasets and the cached /specifications, and
 * writes each in hdmf-zarr's conventions (docs/format.md, "Export from
 * HDF5"). Object ids and attributes are kept exactly. Anything it cannot
 * represent (region references, array or opaque types, ...) makes the
 * export fail with a message naming the object: nothing is dropped.
 *
 * Large datasets stream through the parallel engine (nz_write_array). libhdf5
 * is not thread-safe, so every libhdf5 call runs under one process-wide lock;
 * chunks filtered only by deflate/shuffle/fletcher32 are read raw under the
 * lock and decoded by the worker threads, other filters are decoded by
 * libhdf5 under the lock. Where the Zarr codecs are the HDF5 filters
 * (keep_filters, or an array made so: hdmf-zarr's export) and the chunks
 * the HDF5 chunks, a chunk moves as stored, without deflate (inflated once
 * to check it: a corrupt chunk fails the export as a decoded one does).
 *
 * Thread safety: the functions may be called from any thread; concurrent
 * exports serialise their HDF5 reads on the shared lock.
 */
#ifndef NWBZARR_EXPORT_H
#define NWBZARR_EXPORT_H

#include <signal.h>

#include "nwbzarr/common.h"
#include "nwbzarr/engine.h"
#include "nwbzarr/zarr.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Called once per difference found by nz_verify: `path` is the object
 *  ("/acquisition/x/data", "/ attribute 'nwb_version'"), `what` says how it
 *  differs. Called on the thread that called nz_verify. */
typedef void (*nz_verify_cb)(const char *path, const char *what, void *ctx);

/** How Zarr chunks are chosen. */
typedef enum nz_export_chunks {
	/** HDF5 chunk shapes are kept (what hdmf-zarr does); a contiguous
	 *  dataset becomes one chunk unless it is larger than 64 MiB, where
	 *  AUTO's rule applies. */
	NZ_EXPORT_CHUNKS_KEEP = 0,
	/** Chunks of about 4 MiB: whole HDF5 chunks stacked along the first
	 *  dimension when the source is chunked, else the shape halved along
	 *  its largest dimension until small enough. */
	NZ_EXPORT_CHUNKS_AUTO = 1
} nz_export_chunks;

/** nz_export_opts.phase: which part of an export this call writes, for
 *  several processes sharing one export (MPI; docs/mpi.md). */
typedef enum nz_export_phase {
	NZ_EXPORT_ALL = 0,      /**< everything: an ordinary export */
	/** Every group, attribute, link and small dataset, and the metadata of
	 *  the large datasets (those streamed through the engine) without any
	 *  of their chunks; no .zmetadata (finish with nz_nwb_finalise). */
	NZ_EXPORT_METADATA = 1,
	/** Only part `part` of `nparts` of every large dataset's chunks, into
	 *  the existing store a METADATA export wrote; nothing else. The plan
	 *  does not depend on `jobs`: every process may use its own. */
	NZ_EXPORT_DATA = 2
} nz_export_phase;

/** What an export did. */
typedef struct nz_export_stats {
	uint64_t groups, datasets, links, attributes;
	uint64_t bytes;       /**< uncompressed bytes of dataset values written */
	uint64_t raw_chunks;  /**< HDF5 chunks read raw and decoded by workers */
	uint64_t hdf5_reads;  /**< regions decoded by libhdf5 under the lock */
	double elapsed_s;
	/* with nz_export_opts.resume (docs/reliability.md) */
	uint64_t chunks_kept;     /**< chunks already stored whole: kept */
	uint64_t chunks_repaired; /**< stored but corrupt: written again */
	uint64_t temp_removed;    /**< a dead writer's temporary files removed */
	/* options version 2 */
	int jobs; /**< most worker threads the engine actually used for a dataset */
	/* options version 4 */
	/** HDF5 chunks moved into the output as HDF5 stored them (no deflate,
	 *  one inflate to check them): where a dataset's Zarr codecs are its
	 *  HDF5 filters */
	uint64_t stored_chunks;
	uint64_t keep_fallbacks; /**< keep_filters: datasets given the default codec instead */
} nz_export_stats;

typedef struct nz_export_opts {
	unsigned int version;            /**< NZ_EXPORT_OPTS_VERSION */
	int jobs;                        /**< worker threads; 0 = one per core; at most NZ_WRITE_MAX_JOBS */
	const nz_compressor *compressor; /**< NULL = the layout's default: zstd level 0 (v3, hdmf-zarr
					      0.14's), Blosc lz4 (v2, hdmf-zarr <= 0.13's) */
	nz_export_chunks chunks;
	int overwrite;                   /**< 1 = replace an existing output */
	/** 1 = let libhdf5 decode every chunk (under the lock) instead of
	 *  decoding raw chunks in the workers: for measuring both paths. */
	int hdf5_decode;
	size_t buffer_size;              /**< engine budget; 0 = its default */
	nz_progress_cb progress;         /**< per large dataset; may be NULL */
	void *progress_ctx;
	const volatile sig_atomic_t *cancel_flag; /**< may be NULL */
	nz_export_stats *stats;          /**< out; may be NULL */
	nz_export_phase phase;           /**< NZ_EXPORT_ALL unless several processes */
	uint64_t part, nparts;           /**< NZ_EXPORT_DATA: this process's part */
	/** 1 = fsync every file and directory written (durable against power
	 *  loss); 0 = one sync of the output's filesystem at the end. */
	int fsync;
	/** 1 = finish an interrupted export of the same file into `dst` with
	 *  the same options (docs/reliability.md): documents must come out the
	 *  same (else NZ_EMISMATCH naming the first that differs), chunks
	 *  already stored whole are kept. A missing `dst` is written afresh; a
	 *  complete one is NZ_EEXISTS. Not with overwrite. */
	int resume;
	/* options version 3 */
	/** 3 (hdmf-zarr 0.14's layout, the default when 0) or 2 (hdmf-zarr
	 *  <= 0.13's, what versions 1 and 2 of these options always write). */
	int zarr_format;
	/** v3: the shard shape of 2-D datasets (a multiple of their chunks in
	 *  each dimension, else NZ_EINVAL naming the dataset); NULL = the
	 *  default: datasets over 64 MiB are sharded, all of each other
	 *  dimension x about 256 MiB along the first, so that no stored object
	 *  passes DANDI's 5 GiB upload limit. NZ_EINVAL with zarr_format 2. */
	const uint64_t *shards;
	/* options version 4 */
	/** 1 = every dataset keeps its HDF5 filters as Zarr codecs, in their
	 *  order, as hdmf-zarr 0.14's export does (`compressor` must then be
	 *  NULL, else NZ_EINVAL): shuffle -> numcodecs shuffle by the itemsize
	 *  (not for text, references or other values written as objects),
	 *  deflate -> numcodecs zlib at the dataset's level; fletcher32, a
	 *  checksum, is dropped. A dataset without filters takes the default
	 *  codec (hdmf-zarr's too); one with a filter Zarr has no codec for
	 *  here (szip, nbit, scaleoffset, a plugin's) takes the default codec
	 *  and `note` is told. With chunks KEEP the Zarr (inner) chunks are the
	 *  HDF5 chunks, so each chunk moves as stored (stats->stored_chunks). */
	int keep_filters;
	/** keep_filters: called on the calling thread with a dataset's path
	 *  and why it took the default codec; may be NULL. */
	nz_verify_cb note;
	void *note_ctx;
	/* options version 5 */
	/** HDF5 external links (docs/format.md, "External links"). 0: each
	 *  file a link leads into is exported too, beside `dst`, and the link
	 *  names that store. 1: what each link leads to (a group with all below
	 *  it, or a dataset: attributes, values, object ids) is copied into
	 *  `dst` at the link's path instead, so `dst` is one self-contained
	 *  store; a second link to an object already copied (or to one of
	 *  `src`) becomes a soft link to it. A linked file that cannot be
	 *  opened, a missing target, a circle of links, or a reference inside a
	 *  copy to an object no copy holds is NZ_EFORMAT naming both files,
	 *  before `dst` is touched. */
	int copy_links;
} nz_export_opts;

/* Versions 1 and 2 are still accepted (they write Zarr v2), version 3
 * (without keep_filters), 4 (without copy_links); version 1's
 * nz_export_stats ends before `jobs`, 1 to 3's before stored_chunks. */
#define NZ_EXPORT_OPTS_VERSION 5
#define NZ_EXPORT_OPTS_INIT { NZ_EXPORT_OPTS_VERSION, 0, NULL, NZ_EXPORT_CHUNKS_KEEP, 0, 0, 0, NULL, NULL, NULL, NULL, \
			     NZ_EXPORT_ALL, 0, 0, /* fsync, resume */ 0, 0, /* zarr_format, shards */ 0, NULL, \
			     /* keep_filters, note */ 0, NULL, NULL, /* copy_links */ 0 }

/** Export the NWB HDF5 file `src` into a new Zarr directory store `dst`
 *  (opts NULL = defaults). An existing `dst` is NZ_EEXISTS unless
 *  opts->overwrite or opts->resume. overwrite replaces only what
 *  nz_nwb_create's does (a Zarr store, or a folder that is empty or holds
 *  only temporary files; never a symbolic link, a store holding one or
 *  holding `src`); `src`, the options and the compressor are checked first,
 *  and the old store is kept aside until the export is complete and put
 *  back if it fails (docs/reliability.md). jobs above NZ_WRITE_MAX_JOBS is
 *  NZ_EINVAL. Errors name the file and the object.
 *  `dst` carries the incomplete marker (NZ_INCOMPLETE_MARKER, nwb.h) until
 *  .zmetadata is written and synced: a failed export never looks complete. */
NZ_EXTERN int nz_export_hdf5(const char *src, const char *dst, const nz_export_opts *opts);

typedef struct nz_verify_opts {
	unsigned int version; /**< NZ_VERIFY_OPTS_VERSION */
	int jobs;             /**< threads comparing chunks; 0 = one per core; at most NZ_WRITE_MAX_JOBS */
	/** Bytes of values held at once over all threads (a target); 0 = 64 MiB. */
	size_t buffer_size;
	uint64_t max_diffs;   /**< stop reporting after this many; 0 = 1000 */
	nz_verify_cb report;  /**< may be NULL */
	void *report_ctx;
	/* version 2 */
	/** Called on the calling thread after each object compared: bytes_done
	 *  / bytes_total are dataset value bytes of the first file, chunks_done
	 *  / chunks_total count objects. Non-zero cancels (NZ_ECANCELED). May
	 *  be NULL. */
	nz_progress_cb progress;
	void *progress_ctx;
} nz_verify_opts;

/* Version 1 (without progress) is still accepted. */
#define NZ_VERIFY_OPTS_VERSION 2
#define NZ_VERIFY_OPTS_INIT { NZ_VERIFY_OPTS_VERSION, 0, 0, 0, NULL, NULL, NULL, NULL }

/** Compare two NWB files, each an HDF5 file or a Zarr directory store, under
 *  hdmf-zarr's conventions (a Zarr scalar is shape [1] + zarr_dtype scalar,
 *  zarr_link entries are links, reference dicts are their targets, strings
 *  compare as text whatever their codec; chunking and codecs are ignored):
 *  every group, dataset (shape, type, values), attribute, link and
 *  reference target. Returns 0 when they match, NZ_EMISMATCH when they
 *  differ (*ndiff differences, each reported), another negative code when
 *  a file cannot be read. ndiff may be NULL. */
NZ_EXTERN int nz_verify(uint64_t *ndiff, const char *a, const char *b, const nz_verify_opts *opts);

#ifdef __cplusplus
}
#endif
#endif
