/* nwbzarr: build an NWB 2.6 file stored as Zarr (hdmf-zarr conventions).
 *
 * An acquisition program creates a file, adds metadata objects and series,
 * and closes it:
 *
 *   nz_nwb_opts o = NZ_NWB_OPTS_INIT;
 *   o.identifier = "rec-42"; o.session_description = "...";
 *   o.session_start_time = "2024-01-02T03:04:05-08:00";
 *   nz_nwb *f;
 *   nz_nwb_create(&f, "out.nwb.zarr", &o);
 *   nz_nwb_add_device(f, "probe0", "Neuropixels 1.0", "IMEC");
 *   nz_nwb_add_electrode_group(f, "shank0", "shank 0", "CA1", "probe0");
 *   nz_nwb_add_electrodes(f, &electrode, 384);   // one row per channel
 *   nz_nwb_add_electrical_series(f, &series_opts, source);  // parallel
 *   nz_nwb_close(f);   // electrodes table, schema, .zmetadata last
 *   nz_nwb_free(f);
 *
 * The file is complete only when nz_nwb_close succeeded: .zmetadata (the
 * consolidated metadata) is written last and only then, so an interrupted
 * or failed write leaves a directory without .zmetadata (see docs/format.md).
 *
 * Strings passed in are copied or written before the call returns unless a
 * field says otherwise. Times are ISO-8601 with a time zone
 * ("2024-01-02T03:04:05-08:00" or "...Z"); a time without one is NZ_EINVAL.
 *
 * Thread safety: an nz_nwb is used by one thread at a time; large series are
 * written by the engine's workers inside nz_nwb_add_electrical_series /
 * nz_nwb_add_timeseries. Different nz_nwb handles are independent.
 */
#ifndef NWBZARR_NWB_H
#define NWBZARR_NWB_H

#include <math.h> /* NAN in NZ_NWB_ELECTRODE_INIT */

#include "nwbzarr/common.h"
#include "nwbzarr/engine.h"
#include "nwbzarr/recording.h"
#include "nwbzarr/zarr.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nz_nwb nz_nwb;

/** The NWB version written into the root's nwb_version attribute. */
#define NZ_NWB_VERSION "2.6.0"

/** Options of nz_nwb_create: the NWBFile's own fields and how to write. */
/** What nz_nwb_opts.resume found, summed over the series written (for a
 *  sharded Zarr v3 array the counts count shards, each checked whole). */
typedef struct nz_nwb_resume_info {
	uint64_t chunks_kept;     /**< data chunks already stored whole: kept */
	uint64_t chunks_repaired; /**< stored but corrupt (not decodable or wrong
				     data): written again */
	uint64_t chunks_written;  /**< missing: written */
	uint64_t temp_removed;    /**< temporary files of the dead writer removed */
} nz_nwb_resume_info;

typedef struct nz_nwb_opts {
	unsigned int version; /**< NZ_NWB_OPTS_VERSION */
	/* required */
	const char *identifier;
	const char *session_description;
	const char *session_start_time;        /**< ISO-8601 with time zone */
	/* optional (NULL / 0 = absent) */
	const char *timestamps_reference_time; /**< NULL = session_start_time */
	const char *file_create_date;          /**< NULL = now, local time zone */
	const char *const *experimenter;       /**< n_experimenter names */
	size_t n_experimenter;
	const char *const *keywords;
	size_t n_keywords;
	const char *const *related_publications;
	size_t n_related_publications;
	const char *lab;
	const char *institution;
	const char *experiment_description;
	const char *session_id;
	const char *notes;
	/* writing */
	int overwrite;         /**< 1 = replace an existing output directory */
	int jobs;              /**< worker threads for large series; 0 = all cores; at most NZ_WRITE_MAX_JOBS */
	/** Copy the cached schema (/specifications) from this NWB file (HDF5 or
	 *  Zarr); NULL = write no schema (readers then use their bundled one).
	 *  An HDF5 file is read under the library's one libhdf5 lock, so this is
	 *  safe beside exports and verifies on other threads. */
	const char *spec_from;
	/** Object ids are a function of this seed, so the same input gives
	 *  the same bytes (tests, reproducibility); 0 = a random seed, kept in
	 *  the incomplete marker so that a resume draws the same ids. */
	uint64_t object_id_seed;
	/** Compressor of every dataset unless a series says otherwise;
	 *  NULL = hdmf-zarr's default, Blosc lz4 clevel 5 byte-shuffle. */
	const nz_compressor *compressor;
	/** Progress of each large series write (may be NULL); see engine.h.
	 *  Called on the thread that called the nz_nwb function. */
	nz_progress_cb progress;
	void *progress_ctx;
	/** When non-NULL and set to non-zero (e.g. by a SIGINT handler), the
	 *  current series write stops with NZ_ECANCELED. */
	const volatile sig_atomic_t *cancel_flag;
	/* Several processes writing one file (MPI; docs/mpi.md). One process
	 * writes the metadata with both set, every process then writes its
	 * part of each series' data with nz_write_array (nz_write_opts.part),
	 * and one calls nz_nwb_finalise. Both 0 = an ordinary write. */
	/** 1 = series data arrays are created (.zarray, .zattrs) but none of
	 *  their chunks is written. */
	int skip_series_data;
	/** 1 = nz_nwb_close writes everything but .zmetadata: the file stays
	 *  incomplete until nz_nwb_finalise. */
	int skip_finalise;
	/* Crash safety (docs/reliability.md). */
	/** 1 = fsync every file and directory written, so the finished file
	 *  survives a power loss; 0 = one sync() of the system at close. */
	int fsync;
	/** 1 = continue an interrupted write of `path`: options and calls must
	 *  be those of the interrupted run; every metadata document must come
	 *  out the same (else NZ_EMISMATCH naming it), chunks already stored
	 *  whole are kept, others (missing or corrupt) are written. The object
	 *  ids and default create date come from the store's marker. A `path`
	 *  that does not exist is written from scratch; a complete one is
	 *  NZ_EEXISTS. Not with overwrite. */
	int resume;
	/** Out, may be NULL: what a resume found (all 0 otherwise). */
	nz_nwb_resume_info *resume_info;
	/* version 2 */
	/** Out, may be NULL: the engine's statistics of the last series data
	 *  written (jobs = worker threads actually used). */
	nz_write_stats *write_stats;
	/* version 3 */
	/** 3 (or 0, the default) = Zarr v3 in hdmf-zarr 0.14's layout, series
	 *  data sharded (nz_nwb_default_shards); 2 = Zarr v2 in hdmf-zarr 0.6's
	 *  layout (what hdmf-zarr <= 0.13 reads). Version 1 and 2 structs get 2.
	 *  docs/format.md maps every object to both. */
	int zarr_format;
} nz_nwb_opts;

/* Versions 1 (without write_stats) and 2 (without zarr_format: Zarr v2)
 * are still accepted. */
#define NZ_NWB_OPTS_VERSION 3
#define NZ_NWB_OPTS_INIT { NZ_NWB_OPTS_VERSION, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL, 0, \
			   NULL, 0, NULL, NULL, NULL, NULL, NULL, 0, 0, NULL, 0, NULL, NULL, \
			   NULL, NULL, /* skip_series_data, skip_finalise */ 0, 0, \
			   /* fsync, resume, resume_info, write_stats */ 0, 0, NULL, NULL, \
			   /* zarr_format */ 0 }

/** Create `path` (a directory) and start a file. An existing path is
 *  NZ_EEXISTS unless opts->overwrite, which replaces only a Zarr store
 *  (complete or not) or a directory that is empty or holds only temporary
 *  files; never a symbolic link, a store holding one, or a store holding
 *  opts->spec_from. The old store is moved aside, removed by a successful
 *  nz_nwb_close and put back by nz_nwb_free after a failure
 *  (docs/reliability.md, "Replacing an output"). Everything that can be
 *  checked is checked before the output is touched: options, text (UTF-8),
 *  the compressor, opts->spec_from (read once). Missing required fields
 *  are NZ_EINVAL. The caller owns *out: nz_nwb_close it, then nz_nwb_free
 *  it (freeing without a successful close abandons the file, which stays
 *  marked incomplete, or gives back the store it was to replace).
 *  opts and its strings are copied, except opts->resume_info, which is
 *  zeroed here and updated as series are written: it must stay valid until
 *  nz_nwb_close returns. */
NZ_EXTERN int nz_nwb_create(nz_nwb **out, const char *path, const nz_nwb_opts *opts);

/** 0 if `t` is an ISO-8601 date-time with a time zone as NWB requires
 *  (2024-01-02T03:04:05-08:00, ...Z, optional fraction); NZ_EINVAL with a
 *  message naming `what` otherwise. For callers that check values before
 *  starting a write. */
NZ_EXTERN int nz_nwb_check_time(const char *t, const char *what);

/** The subject (/general/subject). Every field optional. */
typedef struct nz_nwb_subject {
	unsigned int version; /**< NZ_NWB_SUBJECT_VERSION */
	const char *subject_id;
	const char *species;
	const char *sex;
	const char *age;          /**< ISO-8601 duration, e.g. "P90D" */
	const char *age_reference;/**< "birth" (default when age is set) or "gestational" */
	const char *date_of_birth;/**< ISO-8601 with time zone */
	const char *description;
	const char *genotype;
	const char *strain;
	const char *weight;
} nz_nwb_subject;

#define NZ_NWB_SUBJECT_VERSION 1
#define NZ_NWB_SUBJECT_INIT { NZ_NWB_SUBJECT_VERSION, NULL, NULL, NULL, NULL, NULL, NULL, NULL, \
			      NULL, NULL, NULL }

/* The nz_nwb_set_* / nz_nwb_add_* functions below copy their strings; a
 * required argument that is missing, a name that is not usable as a Zarr key
 * (empty, containing '/', leading '.') or a handle already closed is
 * NZ_EINVAL; adding a name twice is NZ_EEXISTS; a name that refers to an
 * object not added is NZ_ENOTFOUND. Each message names the object. After a
 * failure the handle stays usable for nz_nwb_free (the file is incomplete). */

/** Set the subject (at most once: NZ_EEXISTS). */
NZ_EXTERN int nz_nwb_set_subject(nz_nwb *f, const nz_nwb_subject *subject);

/** A Device under /general/devices. description/manufacturer may be NULL. */
NZ_EXTERN int nz_nwb_add_device(nz_nwb *f, const char *name, const char *description,
				const char *manufacturer);

/** An ElectrodeGroup under /general/extracellular_ephys linked to the
 *  device `device` (which must have been added). */
NZ_EXTERN int nz_nwb_add_electrode_group(nz_nwb *f, const char *name, const char *description,
					 const char *location, const char *device);

/** One row of the electrodes table. */
typedef struct nz_nwb_electrode {
	unsigned int version; /**< NZ_NWB_ELECTRODE_VERSION */
	const char *group;    /**< name of an added ElectrodeGroup (required) */
	const char *location; /**< NULL = the group's location */
	double x, y, z;       /**< NAN = unknown */
	double imp;           /**< impedance in ohms; NAN = unknown */
	const char *filtering;/**< NULL = "" */
} nz_nwb_electrode;

#define NZ_NWB_ELECTRODE_VERSION 1
#define NZ_NWB_ELECTRODE_INIT { NZ_NWB_ELECTRODE_VERSION, NULL, NULL, NAN, NAN, NAN, NAN, NULL }

/** Append `n` rows, each a copy of e[i] (stride 1), or, with `repeat`,
 *  n copies of e[0]; all or none (a row naming an unknown group is
 *  NZ_ENOTFOUND and adds nothing). Row numbers are 0.. in order of addition. The columns
 *  x/y/z/imp/filtering are written only when some row sets them. The table
 *  is written by nz_nwb_close. */
NZ_EXTERN int nz_nwb_add_electrodes(nz_nwb *f, const nz_nwb_electrode *e, size_t n, int repeat);

/** Number of electrode rows added so far (no error; 0 for NULL). */
NZ_EXTERN size_t nz_nwb_electrode_count(const nz_nwb *f);

/** An extra column of the electrodes table, one value per row added so
 *  far (n must equal nz_nwb_electrode_count; adding rows afterwards makes
 *  nz_nwb_close fail). dtype "text" (values: const char *const *, UTF-8) or
 *  "<f8" (const double *). The names the library writes itself (location,
 *  group, group_name, x, y, z, imp, filtering, id) are NZ_EINVAL. Values
 *  are copied; all or nothing. */
NZ_EXTERN int nz_nwb_add_electrode_column(nz_nwb *f, const char *name, const char *description,
					  const char *dtype, const void *values, size_t n);

/** A ProcessingModule /processing/<name>. */
NZ_EXTERN int nz_nwb_add_processing_module(nz_nwb *f, const char *name, const char *description);

/** Timing and scaling shared by TimeSeries and ElectricalSeries. */
typedef struct nz_nwb_series_opts {
	unsigned int version;     /**< NZ_NWB_SERIES_OPTS_VERSION */
	const char *name;         /**< required */
	const char *module;       /**< NULL = /acquisition; else an added processing module */
	const char *description;  /**< NULL = "no description" */
	const char *comments;     /**< NULL = "no comments" */
	const char *unit;         /**< TimeSeries only (ElectricalSeries: "volts") */
	/* timing: rate > 0 (with starting_time), or n_timestamps == frames */
	double rate;
	double starting_time;
	const double *timestamps;
	size_t n_timestamps;
	/* scaling: value in unit = data * conversion (* channel_conversion) + offset */
	double conversion;        /**< 0 = 1.0 */
	double offset;
	double resolution;        /**< NAN or 0 = -1.0 (unknown) */
	/* ElectricalSeries only */
	const char *filtering;    /**< NULL = absent */
	const int64_t *electrodes;/**< rows of the electrodes table, one per
				     channel; NULL = 0..channels-1 */
	const char *electrodes_description; /**< NULL = "all electrodes" */
	const float *channel_conversion;    /**< channels values; NULL = absent */
	/* storage of data */
	const uint64_t *chunks;   /**< ndim entries; NULL = nz_nwb_default_chunks */
	const nz_compressor *compressor; /**< NULL = the file's (its data: Blosc lz4 by default) */
	/* version 2 */
	/** Zarr v3 only: ndim shard sizes, each a multiple of chunks; NULL =
	 *  nz_nwb_default_shards. Ignored for Zarr v2. */
	const uint64_t *shards;
} nz_nwb_series_opts;

/* Version 1 (without shards) is still accepted. */
#define NZ_NWB_SERIES_OPTS_VERSION 2
#define NZ_NWB_SERIES_OPTS_INIT { NZ_NWB_SERIES_OPTS_VERSION, NULL, NULL, NULL, NULL, NULL, 0.0, \
				  0.0, NULL, 0, 0.0, 0.0, 0.0, NULL, NULL, NULL, NULL, NULL, NULL, NULL }

/** DANDI's limit on one stored object (its single-part upload): no chunk
 *  or shard of a series may hold more bytes uncompressed (NZ_EINVAL). */
#define NZ_NWB_MAX_OBJECT_BYTES ((uint64_t)5 << 30)

/** The documented default chunk shape of a series' data (ndim 1 or 2,
 *  `shape` frames [x channels], elements of `itemsize` bytes): every
 *  channel, and as many frames as make about 4 MiB (at least 1, at most the
 *  frame count). Time-major chunks keep each chunk one contiguous run of a
 *  row-major recording, so the engine reads the input once, sequentially. */
NZ_EXTERN void nz_nwb_default_chunks(uint64_t *chunks, int ndim, const uint64_t *shape,
				     size_t itemsize);

/** The documented default shard shape of a Zarr v3 series' data with
 *  inner `chunks`: every channel, and whole chunks of frames making about
 *  256 MiB (at least one chunk, at most the frames rounded up to a whole
 *  chunk). Returns 0 when the data fits in one chunk: such an array is not
 *  sharded (hdmf-zarr 0.14 does not shard small arrays either). */
NZ_EXTERN int nz_nwb_default_shards(uint64_t *shards, int ndim, const uint64_t *shape,
				    const uint64_t *chunks, size_t itemsize);

/** An ElectricalSeries whose (frames, channels) data come from `source`
 *  (its shape and dtype; read through the engine and written in parallel
 *  with the file's jobs). The channel count must equal the number of
 *  electrodes given (or the electrode rows added so far when electrodes is
 *  NULL); timing needs rate > 0 or one timestamp per frame. */
NZ_EXTERN int nz_nwb_add_electrical_series(nz_nwb *f, const nz_nwb_series_opts *opts,
					   nz_source *source);

/** A TimeSeries (unit required) with 1-D or 2-D data from `source`. */
NZ_EXTERN int nz_nwb_add_timeseries(nz_nwb *f, const nz_nwb_series_opts *opts,
				    nz_source *source);

/** Options of nz_nwb_add_recording. */
typedef struct nz_nwb_recording_opts {
	unsigned int version;        /**< NZ_NWB_RECORDING_OPTS_VERSION */
	const char *const *streams;  /**< stream ids to write (recording.h); NULL = all */
	size_t n_streams;
	const char *location;        /**< electrode location; NULL = "unknown" */
	const uint64_t *chunks;      /**< 2 entries for every series; NULL = default */
	const nz_compressor *compressor; /**< NULL = the file's */
} nz_nwb_recording_opts;

#define NZ_NWB_RECORDING_OPTS_VERSION 1
#define NZ_NWB_RECORDING_OPTS_INIT { NZ_NWB_RECORDING_OPTS_VERSION, NULL, 0, NULL, NULL, NULL }

/** Write a whole session (recording.h) as neuroconv lays it out: per probe
 *  a Device, an ElectrodeGroup per shank and one electrodes row per
 *  recorded electrode (shared by its AP and LF streams; columns
 *  channel_name, rel_x, rel_y, shank_ids, electrode_name); per stream an
 *  ElectricalSeries of its neural channels in volts (conversion, or
 *  channel_conversion when gains differ), a TimeSeries of a probe's sync
 *  channels, of NIDQ / ADC analog inputs (volts) and of NIDQ digital words.
 *  Names and rules: docs/recordings.md. The electrodes table must be empty
 *  before (NZ_EINVAL); an unknown stream id is NZ_ENOTFOUND naming it and
 *  the ids there are. Each series' data are written by the engine with
 *  the file's jobs. */
NZ_EXTERN int nz_nwb_add_recording(nz_nwb *f, const nz_rec *r, const nz_nwb_recording_opts *o);

/** Finish the file: electrodes table, root datasets and attributes, the
 *  cached schema, then .zmetadata (last). After a failure the directory
 *  has no .zmetadata. Calling anything but nz_nwb_free afterwards is
 *  NZ_EINVAL. */
NZ_EXTERN int nz_nwb_close(nz_nwb *f);

/** Complete a file closed with skip_finalise once every process has
 *  written its data: consolidated metadata (.zmetadata) last, then a sync.
 *  Errors name `path`. */
NZ_EXTERN int nz_nwb_finalise(const char *path);

/** One process's share of a series' data in a multi-process write: part
 *  wopts->part of wopts->nparts of the chunks of the data array
 *  `array_path` (e.g. "acquisition/ElectricalSeries/data") of the file at
 *  `path`, created with skip_series_data, from `src` (the array's shape and
 *  dtype). Every process must pass the same wopts->task_chunks (or the same
 *  jobs and buffer_size: engine.h). `resume` 1 = keep the chunks already
 *  stored whole, as nz_nwb_opts.resume does (what it found in *info, may be
 *  NULL); `fsync` 1 = fsync every chunk. Synced before it returns. Errors
 *  name the path and the array. */
NZ_EXTERN int nz_nwb_write_series_part(const char *path, const char *array_path,
				       nz_source *src, const nz_write_opts *wopts, int resume,
				       int fsync, nz_nwb_resume_info *info);

/** The root key that marks a store under construction: written first by
 *  nz_nwb_create (and nz_export_hdf5), removed only after .zmetadata is
 *  written and synced. It holds JSON (tool, version, object-id seed,
 *  create date) used by a resume. */
#define NZ_INCOMPLETE_MARKER ".nwbzarr-incomplete"

/** 0 when `store` holds a complete file: consolidated metadata present
 *  (v2 .zmetadata, v3 the root zarr.json's consolidated_metadata) and no
 *  NZ_INCOMPLETE_MARKER. NZ_EINCOMPLETE otherwise, with a message naming
 *  the store and saying why; another negative code when it cannot be read.
 *  Any reader should call it before trusting a store (zarr-python cannot
 *  open it as consolidated either: it has no .zmetadata until complete). */
NZ_EXTERN int nz_nwb_check_complete(nz_store *store);

/** Release the handle and everything it owns. A file not closed stays
 *  incomplete on disk. NULL ok. */
NZ_EXTERN void nz_nwb_free(nz_nwb *f);

/* ---- metadata readers (used by `nwbzarr convert`) ------------------- */

/** What a recording's side-car metadata says. Unknown values are 0/NULL. */
typedef struct nz_recording_info {
	unsigned int version;  /**< NZ_RECORDING_INFO_VERSION */
	const char *format;    /**< "spikeglx", "openephys" or NULL (static string) */
	uint64_t channels;
	double rate;           /**< Hz */
	double conversion;     /**< volts per count (from gain and range) */
	char dtype[8];         /**< e.g. "<i2"; "" = unknown */
	char source_path[4096];/**< the side-car file read */
} nz_recording_info;

#define NZ_RECORDING_INFO_VERSION 1

/** Parse a SpikeGLX .meta text (key=value lines): nSavedChans, imSampRate
 *  or niSampRate, imAiRangeMax/imAiRangeMin/imMaxInt and the gain (imroTbl
 *  first entry or niMNGain) give the conversion. `what` names the text in
 *  messages. Malformed lines / missing keys are NZ_EFORMAT. */
NZ_EXTERN int nz_spikeglx_meta_parse(nz_recording_info *out, const char *text, size_t len,
				     const char *what);

/** Parse an Open Ephys structure.oebin (JSON): the continuous stream whose
 *  folder matches `stream` (NULL = the first) gives num_channels,
 *  sample_rate and channels[0].bit_volts (x 1e-6 when units are uV). */
NZ_EXTERN int nz_oebin_parse(nz_recording_info *out, const char *text, size_t len,
			     const char *what, const char *stream);

/** Look beside `recording` for its side-car: "<stem>.meta" (SpikeGLX) or a
 *  structure.oebin in the recording's directory or up to two levels above
 *  (Open Ephys). Returns 1 and fills *out when one was read, 0 when none
 *  exists, negative on a read or parse error (the message names the file). */
NZ_EXTERN int nz_recording_info_probe(nz_recording_info *out, const char *recording);

/** Session metadata from a JSON document (schema in docs/cli.md):
 *  NWBFile fields, subject, devices, electrode groups, electrodes and the
 *  series' description/scaling. All pointers point into storage owned by
 *  the nz_session and live until nz_session_free. */
typedef struct nz_session {
	nz_nwb_opts file;            /**< only the NWBFile fields are set */
	int has_subject;
	nz_nwb_subject subject;
	struct nz_session_device {
		const char *name, *description, *manufacturer;
	} *devices;
	size_t n_devices;
	struct nz_session_group {
		const char *name, *description, *location, *device;
	} *groups;
	size_t n_groups;
	nz_nwb_electrode *electrodes;
	size_t n_electrodes;
	nz_nwb_series_opts series;   /**< name/description/comments/filtering/
					conversion/offset/resolution/starting_time */
	float *channel_conversion;   /**< n_channel_conversion values or NULL */
	size_t n_channel_conversion;
	void *priv;
} nz_session;

/** Parse `len` bytes of session JSON. Unknown keys and wrong types are
 *  NZ_EFORMAT naming `what` and the key. */
NZ_EXTERN int nz_session_parse(nz_session **out, const char *text, size_t len, const char *what);

/** Read and parse the session JSON file at `path`. */
NZ_EXTERN int nz_session_load(nz_session **out, const char *path);

/** Release a session and every string it points to. NULL ok. */
NZ_EXTERN void nz_session_free(nz_session *s);

#ifdef __cplusplus
}
#endif
#endif
