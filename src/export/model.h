/* Internal: a neutral description of an NWB file's hierarchy, built from an
 * HDF5 file (h5walk.c) or from an NWB Zarr store (zwalk.c), so that export
 * maps one form and verify compares two without knowing where each came
 * from.
 *
 * Normalised element forms (what every reader fills `out` with):
 *   INT/UINT/FLOAT   little-endian, `size` bytes each
 *   BOOL             one byte 0/1
 *   STRING           char * (UTF-8 text, NUL-terminated, owned by the buffer's
 *                    filler: release with nz__xvalues_free)
 *   REF              char * (the target's absolute path)
 *   COMPOUND         the fields packed in order, each in its own form
 *
 * Attributes are kept as JSON values in hdmf-zarr's form: numbers, strings,
 * (nested) lists, non-finite floats as nz__json_nonfinite markers, and object
 * references as {"value": {"source", "path", "object_id",
 * "source_object_id"}, "zarr_dtype": "object"}.
 *
 * A model is immutable after it is built; readers may share it. */
#ifndef NZ_EXPORT_MODEL_H
#define NZ_EXPORT_MODEL_H

#include <jansson.h>

#include "nwbzarr/zarr.h"

typedef enum nz__xclass {
	NZ__XT_INT = 1,
	NZ__XT_UINT,
	NZ__XT_FLOAT,
	NZ__XT_BOOL,
	NZ__XT_STRING,
	NZ__XT_REF,
	NZ__XT_COMPOUND
} nz__xclass;

typedef struct nz__xfield nz__xfield;

typedef struct nz__xtype {
	nz__xclass cls;
	size_t size;        /**< bytes of one element in its normalised form */
	int utf8;           /**< STRING: 1 = UTF-8 charset, 0 = ASCII */
	size_t fixed_len;   /**< STRING: HDF5 fixed length; 0 = variable */
	size_t nfields;     /**< COMPOUND */
	nz__xfield *fields; /**< COMPOUND, owned */
} nz__xtype;

struct nz__xfield {
	char *name;
	nz__xtype type;
	size_t offset; /**< in the packed normalised element */
};

typedef enum nz__xkind {
	NZ__X_GROUP = 1,
	NZ__X_DATASET,
	NZ__X_SOFTLINK, /**< a link to an object of the same file */
	NZ__X_EXTLINK   /**< a link into another file */
} nz__xkind;

typedef struct nz__xnode {
	char *path;        /**< absolute, "/" for the root */
	nz__xkind kind;
	char *link_target; /**< links: target path in the target file */
	char *link_file;   /**< EXTLINK: the other file as written in the link */
	int hard_alias;    /**< SOFTLINK standing for a second HDF5 hard link */
	/* datasets */
	int scalar;        /**< 1 = HDF5 scalar (Zarr: shape [1] + zarr_dtype scalar) */
	int ndim;
	uint64_t shape[NZ_MAX_DIMS];
	uint64_t chunks[NZ_MAX_DIMS]; /**< source chunking; all 0 = contiguous */
	nz__xtype type;
	json_t *attrs;     /**< object: name -> value; owned; never NULL */
	size_t origin;     /**< index of the graft it was copied from; 0 = the walked file's own */
} nz__xnode;

/** A subtree of a linked file copied into the model (nz__xmodel_inline):
 *  its reference paths name objects of files[file] and are placed through
 *  the grafts of that file. Graft 0 is the walked file itself ("/" at "/"). */
typedef struct nz__xgraft {
	size_t file; /**< index in nz__xmodel.files */
	char *from;  /**< the subtree's path in that file */
	char *to;    /**< its path in the model */
} nz__xgraft;

typedef struct nz__xmodel {
	nz__xnode *nodes; /**< sorted by path */
	size_t count;
	size_t cap;
	/* set by nz__xmodel_inline only; empty otherwise */
	char **files;        /**< real paths; files[0] the walked file */
	size_t nfiles;
	nz__xgraft *grafts;
	size_t ngrafts;
} nz__xmodel;

void nz__xtype_clear(nz__xtype *t);
int nz__xtype_copy(nz__xtype *dst, const nz__xtype *src);
/** 1 if the normalised form holds pointers (strings/references anywhere). */
int nz__xtype_has_pointers(const nz__xtype *t);
/** numpy dtype of a fixed-size type ("<i2", "|b1", structured list as JSON
 *  text); NULL for types stored as objects. Caller frees with nz__free. */
int nz__xtype_numpy(char **out, const nz__xtype *t);
/** hdmf-zarr's zarr_dtype name of a non-compound type ("int16", "bool_"...). */
const char *nz__xtype_zarr_name(const nz__xtype *t);
/** A short description for messages ("int16", "utf8 string", ...). */
const char *nz__xtype_describe(const nz__xtype *t);

/** Append a node (the model takes ownership of node's allocations). */
int nz__xmodel_add(nz__xmodel *m, const nz__xnode *node);
/** Sort by path; call once all nodes are added, before lookups. */
void nz__xmodel_sort(nz__xmodel *m);
/** The node at `path` or NULL. */
const nz__xnode *nz__xmodel_find(const nz__xmodel *m, const char *path);
/** What export and verify require of a walked (sorted) file before they
 *  touch anything: an NWB file (its root has an nwb_version attribute) whose
 *  soft links all lead (directly or through other links, never round a
 *  circle) to a group or dataset of the file. NZ_EFORMAT naming `file`,
 *  the object and the problem otherwise. */
int nz__xmodel_check_nwb(const nz__xmodel *m, const char *file);
/** The links part of nz__xmodel_check_nwb alone (a file an external link
 *  leads into need not be NWB). */
int nz__xmodel_check_links(const nz__xmodel *m, const char *file);
void nz__xmodel_clear(nz__xmodel *m);
void nz__xnode_clear(nz__xnode *n);

/** hdmf-zarr's reference dict {"object_id", "path", "source": ".",
 *  "source_object_id"}; a NULL id is written as null. New reference or NULL
 *  when out of memory. */
json_t *nz__xref_dict(const char *path, const char *oid, const char *root_oid);

/** How nz__xelem_json resolves references. */
typedef struct nz__xjson_ctx {
	char *(*oid)(void *ctx, const char *path); /**< object_id of a path (nz__malloc'd) or NULL */
	void *ctx;
	const char *root_oid;  /**< source_object_id of references */
	int compound_as_list;  /**< 1: compound -> [v0, v1, ...]; 0: {name: v} */
} nz__xjson_ctx;

/** One normalised element as JSON: numbers, booleans, strings, non-finite
 *  markers, reference dicts (wrapped as {"value", "zarr_dtype": "object"}
 *  when wrap_ref), compounds. NULL when out of memory or for text jansson
 *  rejects (invalid UTF-8). */
json_t *nz__xelem_json(const nz__xtype *t, const void *p, const nz__xjson_ctx *c, int wrap_ref);

/** References name an object by the path libhdf5 reports, which for an
 *  object with several hard links may be an alias exported as a link, and
 *  (for a node copied from a linked file) by its path in that file.
 *  Rewrite the reference paths held by n elements of node `node` at buf
 *  (attributes of every node, for the second) to the path of the model
 *  that holds the object; a target a copy does not hold is NZ_EFORMAT
 *  naming it. */
int nz__xvalues_canon(const nz__xmodel *m, const nz__xnode *node, void *buf, size_t n);
int nz__xmodel_canon_attrs(nz__xmodel *m);
/** Where the object at `path` of the file of graft `origin` sits in the
 *  model (nz__malloc'd into *out): below the first graft of that file whose
 *  subtree holds it. NZ_EFORMAT naming the file when no copy holds it. */
int nz__xmodel_place(char **out, const nz__xmodel *m, size_t origin, const char *path);

/** Elements of a region: prod(count) (1 for a scalar). */
int nz__xnode_count(uint64_t *out, const nz__xnode *n, const uint64_t *count);

/** Release the strings held by `n` normalised elements of type t at `buf`
 *  (no-op for types without pointers). */
void nz__xvalues_free(const nz__xtype *t, void *buf, size_t n);

/* ---- comparison (xcompare.c), used by verify ---- */

/** JSON values equal under the manifest's rules: numbers as numbers (JSON
 *  loses int/float width), references ({"value", "zarr_dtype": "object"})
 *  by target path, NaN equal to NaN. */
int nz__xjson_same(const json_t *x, const json_t *y);
/** Compact JSON of v, cut to about 200 characters, into buf. */
void nz__xjson_show(char *buf, size_t cap, const json_t *v);
/** Same class; same size for numbers; fields alike for compounds. Strings
 *  match whatever their charset or length. */
int nz__xtype_same(const nz__xtype *x, const nz__xtype *y);
/** Normalised elements equal (floats: bitwise or both NaN). */
int nz__xelem_same(const nz__xtype *t, const void *x, const void *y);
/** An element for messages ("-> /path" for references). */
void nz__xelem_show(char *buf, size_t cap, const nz__xtype *t, const void *p);

#endif
