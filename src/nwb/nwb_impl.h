/* Internal: the state of an NWB file being written, shared by the files of
 * src/nwb. */
#ifndef NZ_NWB_IMPL_H
#define NZ_NWB_IMPL_H

#include <jansson.h>

#include "hdmf/hdmf.h"
#include "store/replace.h"
#include "nwbzarr/nwb.h"

/** One added ElectrodeGroup (for refs and the group_name column). */
typedef struct nz__nwb_group {
	char *name;
	char *location;
	char oid[NZ_HDMF_OID_LEN];
} nz__nwb_group;

/** One electrodes-table row; group is an index into groups. */
typedef struct nz__nwb_row {
	size_t group;
	char *location;
	double x, y, z, imp;
	char *filtering; /* NULL = "" */
} nz__nwb_row;

/** An extra electrodes column (nz_nwb_add_electrode_column): text or num. */
typedef struct nz__nwb_col {
	char *name, *description;
	char **text;  /* n strings, or NULL */
	double *num;  /* n values, or NULL */
	size_t n;
} nz__nwb_col;

struct nz_nwb {
	char *path;
	nz_store *store;
	nz__hdmf h;
	nz_write_opts wopts;
	char *spec_from;
	int closed;   /* nz_nwb_close ran (successfully or not) */
	int subject;  /* set once */
	char **devices;
	size_t n_devices;
	char **modules;
	size_t n_modules;
	nz__nwb_group *groups;
	size_t n_groups;
	nz__nwb_row *rows;
	size_t n_rows, cap_rows;
	nz__nwb_col *cols; /* extra electrodes columns (columns.c) */
	size_t n_cols;
	int table_oid_drawn;
	char table_oid[NZ_HDMF_OID_LEN]; /* the electrodes table's object id */
	int skip_series_data, skip_finalise; /* nz_nwb_opts: multi-process writes */
	/* crash safety (resume.c) */
	int resume;                    /* resuming: store compares metadata */
	char create_date[64];          /* file_create_date written (from the marker on resume) */
	nz_nwb_resume_info resumed;    /* what the resume found so far */
	nz_nwb_resume_info *resume_info; /* caller's copy, may be NULL */
	nz__replace replace;           /* an --overwrite'n old store, kept until close */
	/* recording (record.c): series get an empty timestamps dataset of
	 * chunks of this many values instead of their rate; 0 = not recording */
	uint64_t grow_timestamps;
	uint64_t grow_ts_shards;       /* and shards of this many (v3); 0 = none */
	int zarr_format;               /* 2 or 3 (nz_nwb_opts.zarr_format) */
	nz_compressor data_compressor; /* series data's unless a series says otherwise */
	/* a batch (nz__nwb_batch_begin): series data waiting to be written in
	 * one write; the arrays are the batch's, the sources the caller's */
	int batching;
	nz_array **batch_a;
	nz_source **batch_src;
	size_t batch_n, batch_cap;
};

#define NZ__NWB_ELECTRODES "general/extracellular_ephys/electrodes"

/** NZ_EINVAL unless `name` is a usable object name (non-empty, no '/', not
 *  starting with '.'); `what` says which object for the message. */
int nz__nwb_check_name(const char *name, const char *what);

/** NZ_EINVAL unless `t` is ISO-8601 date-time with a time zone. */
int nz__nwb_check_time(const char *t, const char *what);

/** NZ_EINVAL if the file is closed. */
int nz__nwb_check_open(const nz_nwb *f, const char *what);

/** Draw the electrodes table's object id the first time it is needed. */
int nz__nwb_table_oid(nz_nwb *f);

/** Index of `name` in list, or -1. */
long nz__nwb_find(char *const *list, size_t n, const char *name);

/** Set a string attribute (value NULL = leave out). */
int nz__nwb_set_str(json_t *attrs, const char *key, const char *value);

/** Set a float attribute. */
int nz__nwb_set_real(json_t *attrs, const char *key, double v);

/** Read a whole regular file of at most `max` bytes (NUL-terminated; len
 *  excludes the NUL). Errors name the path. */
int nz__nwb_read_file(char **out, size_t *len, const char *path, size_t max);

/** Open (or, resuming, reopen) f->path as f->store with the incomplete
 *  marker; *seed receives the object-id seed to use (resume.c). The caller
 *  has replaced or refused an existing path unless opts->resume. */
int nz__nwb_open_output(nz_nwb *f, const nz_nwb_opts *o, uint64_t *seed);

/** Write a series' data array from `src`: nz_write_array, or when resuming
 *  the engine with a sink that keeps chunks already stored whole. In a
 *  batch the write waits for nz__nwb_batch_write: the batch takes *a (set
 *  to NULL) and src must live until then. */
int nz__nwb_write_data(nz_nwb *f, nz_array **a, nz_source *src);

/** Start a batch: the series data added from now on are written together,
 *  in one write on f's workers, by nz__nwb_batch_write. Output is what
 *  writing each at its add gives (the data arrays' files depend on their
 *  data only). */
void nz__nwb_batch_begin(nz_nwb *f);

/** Write the batch's data in one write (resuming if f resumes) and end the
 *  batch. The batch ends, its arrays freed, also on failure. */
int nz__nwb_batch_write(nz_nwb *f);

/** End a batch without writing (after a failure; nz_nwb_free does it). */
void nz__nwb_batch_end(nz_nwb *f);

/** The electrodes table, root attributes and cached schema: what
 *  nz_nwb_close writes before finishing (a recording writes them first). */
int nz__nwb_write_static(nz_nwb *f);

/** The end of nz_nwb_close: consolidated metadata, marker removed, an old
 *  store replaced. */
int nz__nwb_finish(nz_nwb *f);

/** Write the extra electrodes columns into the table being written. */
int nz__nwb_write_cols(nz_nwb *f, nz__hdmf_table *t);

/** Free the extra electrodes columns. */
void nz__nwb_cols_free(nz_nwb *f);

/** Write the electrodes table (nz_nwb_close). */
int nz__nwb_write_electrodes(nz_nwb *f);

#endif
