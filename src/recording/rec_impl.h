/* Internal: the recording layer's shared pieces (src/recording). It sits
 * beside src/nwb, above the engine: it parses acquisition metadata and
 * makes sources; src/nwb/recording.c turns a session into NWB objects. */
#ifndef NZ_REC_IMPL_H
#define NZ_REC_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "nwbzarr/recording.h"

struct nz_rec {
	nz_rec_stream *streams;
	size_t n, cap;
};

/** Append a zeroed stream (strings set to "" or NULL); *s points at it. */
int nz__rec_push(nz_rec *r, nz_rec_stream **s);

/** Set a stream's owned string field (copied); value NULL = "". */
int nz__rec_set(const char **field, const char *value);

/** Allocate the stream's n channel records (zeroed, electrode -1, shank -1,
 *  x/y NAN). */
int nz__rec_channels(nz_rec_stream *s, size_t n);

/* ---- SpikeGLX .meta key=value text (sglx.c) ---- */

typedef struct nz__kv {
	char *buf;            /* a copy of the text, cut into keys and values */
	const char **key, **val;
	size_t n;
	const char *what;     /* file named in messages */
} nz__kv;

int nz__kv_parse(nz__kv *kv, const char *text, size_t len, const char *what);
const char *nz__kv_get(const nz__kv *kv, const char *key);
void nz__kv_free(nz__kv *kv);
/** A number from `key`: 0 and *v set; 1 when absent (v untouched);
 *  NZ_EFORMAT naming the file and key when present but not a number. */
int nz__kv_num(const nz__kv *kv, const char *key, double *v);

/** Parse one .meta into a new stream of r. `name` is the file's base name. */
int nz__sglx_parse(nz_rec *r, const char *text, size_t len, const char *what, const char *name);

/* ---- probe tables (sglx_probe.c) ---- */

/** The parsed ~imroTbl: header fields (text) and entries of `width` ints. */
typedef struct nz__imro {
	char hdr[8][32];
	int n_hdr;
	int width;            /* ints per entry */
	long *v;              /* n_entries * width */
	size_t n_entries;
} nz__imro;

int nz__imro_parse(nz__imro *t, const char *value, const char *what);
void nz__imro_free(nz__imro *t);

/** Gains, volts per count and geometry of a SpikeGLX imec stream's neural
 *  channels (their `electrode` already set from ~snsChanMap), from the
 *  probe type, ~imroTbl and ~snsGeomMap. `lf` selects LF gains. */
int nz__sglx_probe(nz_rec_stream *s, nz_rec_channel *ch, const nz__kv *kv, int lf);

/* ---- Open Ephys (oebin.c) ---- */

/** Parse a structure.oebin into new streams of r; `node` names the record
 *  node (NULL = from recorded_processor_id); `recdir` (may be NULL) is the
 *  recording folder the data paths are under. */
int nz__oebin_parse(nz_rec *r, const char *text, size_t len, const char *what,
		    const char *node, const char *recdir);

/** Positions of Open Ephys probe channels from the record node's
 *  settings.xml (ELECTRODE_XPOS / ELECTRODE_YPOS by channel name) when it
 *  exists and names one probe; fills x/y of the stream's neural channels.
 *  0 when applied or not applicable, negative on a read error. */
int nz__oebin_settings(nz_rec_stream *s, nz_rec_channel *ch, const char *settings_path);

#endif
