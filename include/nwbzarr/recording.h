/* nwbzarr: whole acquisition sessions as streams (SpikeGLX runs, Open Ephys
 * binary recordings), described from the acquisition program's own
 * metadata: the channels of every stream, what each channel is (neural,
 * sync, analog, digital), its volts per count and, for probe channels,
 * shank, position and contact.
 *
 *   nz_rec *r;
 *   nz_rec_open(&r, "run_g0");          // a run folder or any file of it
 *   for (size_t i = 0; i < nz_rec_count(r); i++)
 *           puts(nz_rec_get(r, i)->id); // "imec0.ap", "imec0.lf", "nidq"
 *   nz_nwb_add_recording(f, r, NULL);   // nwb.h: one series per stream
 *   nz_rec_free(r);
 *
 * What is read and the rules it follows (probe types, gains, geometry,
 * names, time zones) are in docs/recordings.md. Parsers are strict: a
 * missing or malformed field is NZ_EFORMAT naming the file and the field.
 *
 * Thread safety: an nz_rec is immutable once opened and may be read from
 * several threads; sources made from it are thread-safe (engine.h).
 */
#ifndef NWBZARR_RECORDING_H
#define NWBZARR_RECORDING_H

#include "nwbzarr/common.h"
#include "nwbzarr/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nz_rec nz_rec;

/** What a channel carries. */
typedef enum nz_rec_kind {
	NZ_REC_NEURAL = 0,  /**< a probe electrode (AP or LF band, Open Ephys CH) */
	NZ_REC_SYNC = 1,    /**< a sync / status word (SpikeGLX SY, Open Ephys CH_SYNC) */
	NZ_REC_ANALOG = 2,  /**< an auxiliary analog input in volts (NIDQ MN/MA/XA, ADC) */
	NZ_REC_DIGITAL = 3  /**< a word of digital lines (NIDQ XD) */
} nz_rec_kind;

/** One saved channel (one column of the stream's data file). */
typedef struct nz_rec_channel {
	char name[24];          /**< "AP12", "LF0", "SY0", "XA0", "CH5", "CH_SYNC" */
	int kind;               /**< nz_rec_kind */
	char group[8];          /**< NIDQ: "MN", "MA", "XA", "XD"; else "" */
	uint64_t column;        /**< column in the data file */
	double volts_per_count; /**< 0 for sync and digital channels */
	/** Neural channels: the probe's channel number (imroTbl index; a
	 *  probe's AP and LF channel n are one electrode), else -1. */
	int64_t electrode;
	int shank;              /**< -1 = unknown */
	double x, y;            /**< um; x includes the shank's offset; NAN = unknown */
	char contact[24];       /**< "e12", "s1e576" (probeinterface style); "" = unknown */
} nz_rec_channel;

/** One stream: a data file of interleaved int16 columns and its metadata. */
typedef struct nz_rec_stream {
	const char *id;         /**< the --streams name: "imec0.ap", "nidq",
				     "Record Node 101/ProbeA" */
	const char *format;     /**< "spikeglx" or "openephys" (static) */
	const char *band;       /**< "ap", "lf", "nidq" (SpikeGLX) or "" */
	const char *probe;      /**< "Imec0" (SpikeGLX) or the Open Ephys stream
				     name of a probe; NULL for NIDQ / ADC streams */
	const char *probe_part; /**< probe part number or type, "" = unknown */
	const char *serial;     /**< probe serial number, "" = unknown */
	const char *data_path;  /**< the .bin / continuous.dat */
	const char *meta_path;  /**< the .meta / structure.oebin */
	uint64_t columns;       /**< columns of the data file (nSavedChans, num_channels) */
	uint64_t frames;        /**< frames in the data file (its size: fileSizeBytes is ignored) */
	double rate;            /**< Hz */
	double first_time;      /**< first sample's time in s on the stream's clock
				     (firstSample / rate); 0 = unknown */
	const char *create_time;/**< local time the file was started,
				     "YYYY-MM-DDTHH:MM:SS" (no zone); "" = unknown */
	const char *utc_time;   /**< the same in UTC with "Z" when the files say
				     (Open Ephys software time); "" = unknown */
	const nz_rec_channel *channels;
	size_t n_channels;      /**< == columns */
} nz_rec_stream;

/** Find every stream of the session that `path` belongs to: a SpikeGLX run
 *  folder or any .bin/.meta of the run (its _gN_tN or CatGT _tcat name;
 *  imec probe folders beside it are searched), or an Open Ephys folder
 *  (record node, experiment, recording, or a folder above them holding one
 *  session) or any structure.oebin / continuous.dat in it. Every stream's
 *  data file must exist and hold whole frames. Errors name the file and
 *  the field; several runs in one folder is NZ_EINVAL naming two. */
NZ_EXTERN int nz_rec_open(nz_rec **out, const char *path);

/** Parse one SpikeGLX .meta text as a one-stream session. `name` is the
 *  file's name (it gives the band and probe: "x_g0_t0.imec1.lf.meta");
 *  data_path and frames stay unset. For tests and fuzzing. */
NZ_EXTERN int nz_rec_parse_meta(nz_rec **out, const char *text, size_t len, const char *name);

/** Parse one structure.oebin text (every continuous stream); `node` names
 *  the record node in stream ids (NULL = "Record Node <recorded_processor_id>").
 *  data_path and frames stay unset. For tests and fuzzing. */
NZ_EXTERN int nz_rec_parse_oebin(nz_rec **out, const char *text, size_t len, const char *what,
				 const char *node);

/** Streams found (0 for NULL). */
NZ_EXTERN size_t nz_rec_count(const nz_rec *r);
/** The i-th stream (NULL when out of range); owned by r. */
NZ_EXTERN const nz_rec_stream *nz_rec_get(const nz_rec *r, size_t i);
/** The stream whose id is `id`, else NULL. */
NZ_EXTERN const nz_rec_stream *nz_rec_find(const nz_rec *r, const char *id);

/** A (frames x n) source of the columns cols[0..n) of the stream's data
 *  file, in that order (each < s->columns). The source keeps its own copy
 *  of cols; it reads whole rows (NZ_SOURCE_ROWS). */
NZ_EXTERN int nz_rec_source(nz_source **out, const nz_rec_stream *s, const uint64_t *cols,
			    size_t n);

/** Sources out[0..nsets) of the column sets cols[k][0..n[k]) of one
 *  stream's data file, sharing its reads: out[0] reads whole rows, and
 *  keeps the columns of every other set for the rows it read (at most 256
 *  MiB of them: 74 minutes of one column at 30 kHz); out[1..] carry
 *  NZ_SOURCE_LAST and take those rows from it instead of reading the file
 *  again, so written together in one nz_write_arrays the file is read
 *  once. Rows out[0] has not read (yet, or in this process, or past the
 *  limit) they read themselves: the data are the same in any order and
 *  written by any part of the work. Each source is freed on its own; the
 *  file is closed with the last. Reads are thread-safe. On error every
 *  out[k] is NULL. */
NZ_EXTERN int nz_rec_sources(nz_source **out, const nz_rec_stream *s,
			     const uint64_t *const *cols, const size_t *n, size_t nsets);

/** The session's start time, ISO-8601 with a zone, into buf: Open Ephys'
 *  software start time (UTC, from sync_messages.txt) when a stream has it,
 *  else the earliest SpikeGLX fileCreateTime, a local time without a zone,
 *  read in this process's local time zone (TZ; docs/recordings.md).
 *  NZ_ENOTFOUND when no stream says; NZ_EINVAL when cap is too small. */
NZ_EXTERN int nz_rec_start_time(const nz_rec *r, char *buf, size_t cap);

/** NULL ok. */
NZ_EXTERN void nz_rec_free(nz_rec *r);

#ifdef __cplusplus
}
#endif
#endif
