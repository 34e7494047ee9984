/* Internal: the state of an NWB file being written, shared by the files of
 * src/nwb. */
#ifndef NZ_NWB_IMPL_H
#define NZ_NWB_IMPL_H

#include <jansson.h>

#include "hdmf/hdmf.h"
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
	int table_oid_drawn;
	char table_oid[NZ_HDMF_OID_LEN]; /* the electrodes table's object id */
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

/** Write the electrodes table (nz_nwb_close). */
int nz__nwb_write_electrodes(nz_nwb *f);

#endif
