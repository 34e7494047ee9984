/* nwbzarr: write an NWB-Zarr file while recording (issue 14).
 *
 * An acquisition program builds the file's metadata with nz_nwb (devices,
 * electrode groups, electrodes), hands the nz_nwb to a recorder, creates
 * series of unknown length and appends frames as they arrive:
 *
 *   nz_nwb *f;                         // nz_nwb_create + nz_nwb_add_* as usual
 *   nz_record *r;
 *   nz_record_opts ro = NZ_RECORD_OPTS_INIT;     // flush every second
 *   nz_record_begin(&r, f, &ro);                 // r owns f from here
 *   nz_record_series_opts so = NZ_RECORD_SERIES_OPTS_INIT;
 *   so.series.name = "ElectricalSeries"; so.series.rate = 30000.0;
 *   so.dtype = "<i2"; so.channels = 384;
 *   nz_record_series *s;
 *   nz_record_add_series(&s, r, &so);
 *   while (acquiring)
 *           nz_record_append(s, block, nframes, NULL); // one thread per series
 *   nz_record_close(r);                          // finalise
 *   nz_record_free(r);
 *
 * Readable while recording: from nz_record_begin on, the store opens as an
 * NWB file (zarr-python, pynwb + hdmf-zarr) whose series hold a prefix of
 * what was appended: a flush stores every frame appended before it (the
 * last, partial chunk or shard rewritten whole, one atomic put), then
 * publishes the series' new lengths (their metadata documents, each one
 * atomic put), then the consolidated metadata (kept in memory, not rebuilt
 * by listing the store). A reader never sees a
 * length whose frames are not stored.
 *
 * Crash safety: the incomplete marker stays until nz_record_close, so a
 * killed recording is a store that readers open (with every frame of the
 * last flush) and that nz_record_repair finalises. With nz_nwb_opts.fsync
 * every put is fsynced, so a power loss keeps the last flush too.
 *
 * Threads: appends to one series come from one thread at a time; different
 * series may be appended from different threads at once. Full chunks go to
 * a small pool of compression threads shared by the file; an append waits
 * only when the file's queued chunks exceed its memory budget
 * (back-pressure). nz_record_flush, nz_record_add_series and
 * nz_record_close may be called from any one thread. A failure in a worker
 * or in a periodic flush is kept and returned by the next call on the file
 * (message included); after it the recording only closes or repairs.
 */
#ifndef NWBZARR_RECORD_H
#define NWBZARR_RECORD_H

#include "nwbzarr/common.h"
#include "nwbzarr/nwb.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nz_record nz_record;
typedef struct nz_record_series nz_record_series;

/** At most this many series per recording. */
#define NZ_RECORD_MAX_SERIES 256

typedef struct nz_record_opts {
	unsigned int version;  /**< NZ_RECORD_OPTS_VERSION */
	/** Seconds between periodic flushes; 0 = 1.0; < 0 = none (only
	 *  nz_record_flush and close make frames readable). */
	double flush_interval;
	/** Bytes of appended frames that may wait for compression, summed over
	 *  the file's series; 0 = 32 MiB per series (about 1.4 s of 384 int16
	 *  channels at 30 kHz), at most 256 MiB. An append that would go past
	 *  it waits (when nothing waits, one chunk is always admitted). */
	size_t memory_budget;
	/** Compression threads shared by the file's series; 0 = 2. */
	int threads;
} nz_record_opts;

#define NZ_RECORD_OPTS_VERSION 1
#define NZ_RECORD_OPTS_INIT { NZ_RECORD_OPTS_VERSION, 0.0, 0, 0 }

/** Start recording into the file `f` (made by nz_nwb_create, metadata
 *  added; no series with data yet). Writes the electrodes table, the root's
 *  attributes, the cached schema and the consolidated metadata, so the file
 *  opens from here on. On success *out owns `f` (do not call nz_nwb_*
 *  on it any more; nz_record_free frees it); on failure the caller still
 *  owns it. NZ_EINVAL for bad options. */
NZ_EXTERN int nz_record_begin(nz_record **out, nz_nwb *f, const nz_record_opts *opts);

typedef struct nz_record_series_opts {
	unsigned int version;      /**< NZ_RECORD_SERIES_OPTS_VERSION */
	/** Name, module, description, unit (TimeSeries), rate/starting_time,
	 *  scaling, electrodes, channel_conversion, chunks, compressor, as for
	 *  nz_nwb_add_*; timestamps/n_timestamps must be NULL/0 (see below).
	 *  chunks (and shards) must span every channel. On Zarr v3 the default
	 *  shard is about one second: whole chunks (default ~4 MiB) covering
	 *  series.rate frames (30000 without a rate), e.g. 6 x 5461 frames of
	 *  384 int16 channels; unsharded when one chunk covers that;
	 *  series.shards sets another. Timestamps get the data's chunk and
	 *  shard rows. A flush rewrites the last shard, re-encoding only its
	 *  newest chunk. */
	nz_nwb_series_opts series;
	int electrical;            /**< 1 = ElectricalSeries, 0 = TimeSeries */
	const char *dtype;         /**< fixed-size numpy dtype: "<i2", "<f4", ... */
	/** Channels per frame (>= 1): data is (frames, channels). 0 = a 1-D
	 *  TimeSeries (one value per frame). */
	uint64_t channels;
	/** 1 = every append gives one timestamp per frame (a chunked timestamps
	 *  dataset; series.rate is then ignored); 0 = series.rate. */
	int timestamps;
} nz_record_series_opts;

#define NZ_RECORD_SERIES_OPTS_VERSION 1
#define NZ_RECORD_SERIES_OPTS_INIT { NZ_RECORD_SERIES_OPTS_VERSION, NZ_NWB_SERIES_OPTS_INIT, 1, NULL, 0, 0 }

/** Create a series of unknown length (0 frames until appended and
 *  flushed). *out is owned by `r` and valid until nz_record_free. Errors as
 *  nz_nwb_add_*, and NZ_EUNSUPPORTED for chunks that do not span every
 *  channel or an object dtype. */
NZ_EXTERN int nz_record_add_series(nz_record_series **out, nz_record *r,
				   const nz_record_series_opts *opts);

/** Append `nframes` frames (any number, 0 is fine), interleaved: frame i,
 *  channel c is element i * channels + c of `frames`, in the series'
 *  dtype. `timestamps` holds nframes values for a series with timestamps,
 *  and must be NULL otherwise. The data are copied before it returns;
 *  nothing is readable before the next flush. */
NZ_EXTERN int nz_record_append(nz_record_series *s, const void *frames, uint64_t nframes,
			       const double *timestamps);

/** The same with one buffer per channel: channels[c][i] is frame i of
 *  channel c (`channels` has the series' channel count entries). */
NZ_EXTERN int nz_record_append_planar(nz_record_series *s, const void *const *channels,
				      uint64_t nframes, const double *timestamps);

/** Frames appended to `s` so far (0 for NULL). */
NZ_EXTERN uint64_t nz_record_series_frames(const nz_record_series *s);

/** Make every frame appended before this call readable (see above). Waits
 *  for the compression of those frames. */
NZ_EXTERN int nz_record_flush(nz_record *r);

/** Flush, then finalise: the consolidated metadata and the removal of the
 *  incomplete marker; the file is then complete. Appends must have
 *  returned. Anything but nz_record_free afterwards is NZ_EINVAL. */
NZ_EXTERN int nz_record_close(nz_record *r);

/** Stop the threads and free everything (the nz_nwb too). Without a
 *  successful close the store stays as the last flush left it: readable,
 *  marked incomplete, for nz_record_repair. NULL ok. */
NZ_EXTERN void nz_record_free(nz_record *r);

/** What nz_record_repair found. */
typedef struct nz_record_repair_info {
	uint64_t series;        /**< recorded series */
	uint64_t frames;        /**< frames kept, summed over them */
	uint64_t temp_removed;  /**< temporary files of the dead writer removed */
} nz_record_repair_info;

/** Finalise a recording that was interrupted (killed, crashed, power loss
 *  with fsync): every series keeps the frames of its last publish (data
 *  and timestamps cut to the shorter of the two), then the consolidated
 *  metadata is rewritten and the marker removed. Shards or chunks a dead
 *  writer stored past those frames are removed, and the last one is
 *  rewritten from them: the store holds what a closed recording of those
 *  frames holds. `info` may be NULL.
 *  NZ_EEXISTS for a complete file (nothing to repair), NZ_EINVAL for a
 *  store that is not an interrupted recording (an interrupted convert is
 *  resumed, not repaired); errors name `path`. `fsync` 1 = durably. */
NZ_EXTERN int nz_record_repair(nz_record_repair_info *info, const char *path, int fsync);

#ifdef __cplusplus
}
#endif
#endif
