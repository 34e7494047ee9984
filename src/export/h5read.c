/* Reading regions of an HDF5 dataset from many threads. libhdf5 runs under
 * the one lock; for chunked little-endian numbers filtered only by deflate,
 * shuffle and fletcher32 the lock covers just H5Dread_chunk (a raw read) and
 * the decoding runs on the caller's thread with our own codecs, so that with
 * N workers N chunks inflate at once. Where the array written stores its
 * chunks exactly as HDF5 filtered them (shuffle and deflate are numcodecs'
 * shuffle and zlib), the stored chunks are handed over unchanged instead
 * (nz__h5ds_stored_ops), each still decoded once: a corrupt chunk fails as
 * it fails a decoded read, and the engine sees its elements (the empty
 * chunk rule). */
#include <libdeflate.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "codec/codec.h"
#include "engine/source.h"
#include "export/h5.h"
#include "util/alloc.h"
#include "zarr/zarr_impl.h"

#define MAX_FILTERS 8

/* Decoding buffers and an inflater, reused across reads: fresh
 * multi-megabyte buffers per chunk cost page faults (mmap'd by malloc)
 * comparable to the inflate. */
typedef struct scratch {
	nz_buf raw, dec[2];
	struct libdeflate_decompressor *inflater;
	struct scratch *next;
} scratch;

struct nz__h5ds {
	nz__h5file *file;
	const nz__xnode *node;
	hid_t dset;
	nz__h5conv conv;
	int raw;                    /* the raw-chunk path applies */
	int storable;               /* raw, and only shuffle (by the itemsize) and deflate */
	int dont_filter_partial;    /* H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS */
	int nfilters;
	H5Z_filter_t filters[MAX_FILTERS];
	nz_codec *shuffle;          /* the decoder for shuffle */
	size_t chunk_nbytes;
	atomic_uint_least64_t raw_chunks, hdf5_reads, stored_chunks;
	pthread_mutex_t pool_mu;
	scratch *pool; /* idle scratch sets, at most one per concurrent reader */
};

static scratch *scratch_get(nz__h5ds *ds)
{
	scratch *s;
	pthread_mutex_lock(&ds->pool_mu);
	if ((s = ds->pool))
		ds->pool = s->next;
	pthread_mutex_unlock(&ds->pool_mu);
	if (s)
		return s;
	return nz__calloc(1, sizeof *s);
}

static void scratch_put(nz__h5ds *ds, scratch *s)
{
	pthread_mutex_lock(&ds->pool_mu);
	s->next = ds->pool;
	ds->pool = s;
	pthread_mutex_unlock(&ds->pool_mu);
}

static int make_codec(nz_codec **out, const char *json_text)
{
	json_t *cfg = json_loads(json_text, 0, NULL);
	int err;
	if (!cfg)
		return nz__error_set(NZ_ENOMEM, "out of memory");
	err = nz__codec_from_json(out, cfg);
	json_decref(cfg);
	return err;
}

/* Decide whether raw chunks can be decoded here; with the lock held. */
NZ__H5_HELD static int plan_raw(nz__h5ds *ds, hid_t dcpl)
{
	const nz__xnode *n = ds->node;
	int i, nf, storable = 1;
	unsigned opts = 0;
	char cfg[64];

	if (n->scalar || !n->chunks[0] || !ds->conv.raw_le || ds->conv.type.cls == NZ__XT_COMPOUND ||
	    ds->conv.type.cls == NZ__XT_STRING || ds->conv.type.cls == NZ__XT_REF)
		return 0;
	if (nz__mul_size(&ds->chunk_nbytes, ds->conv.type.size, 1) < 0)
		return 0;
	for (i = 0; i < n->ndim; i++)
		if (nz__mul_size(&ds->chunk_nbytes, ds->chunk_nbytes, (size_t)n->chunks[i]) < 0)
			return 0;
	nf = H5Pget_nfilters(dcpl);
	if (nf < 0 || nf > MAX_FILTERS)
		return 0;
	for (i = 0; i < nf; i++) {
		unsigned flags, cd[8];
		size_t ncd = 8;
		H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, 0, NULL, NULL);
		if (id != H5Z_FILTER_DEFLATE && id != H5Z_FILTER_SHUFFLE && id != H5Z_FILTER_FLETCHER32)
			return 0;
		/* fletcher32 appends a checksum no Zarr reader strips; a shuffle
		 * by another size than the element's is not numcodecs' */
		if (id == H5Z_FILTER_FLETCHER32 || (id == H5Z_FILTER_SHUFFLE && ncd >= 1 && cd[0] != ds->conv.type.size))
			storable = 0;
		ds->filters[i] = id;
	}
	ds->nfilters = nf;
	if (H5Pget_chunk_opts(dcpl, &opts) >= 0)
		ds->dont_filter_partial = (opts & H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS) != 0;
	snprintf(cfg, sizeof cfg, "{\"id\": \"shuffle\", \"elementsize\": %zu}", ds->conv.type.size);
	if (make_codec(&ds->shuffle, cfg) < 0)
		return -1;
	ds->storable = storable;
	return 1;
}

int nz__h5ds_open(nz__h5ds **out, nz__h5file *f, const nz__xnode *node, int force_hdf5)
{
	nz__h5ds *ds;
	hid_t dcpl = -1, ft = -1;
	char what[1024];
	int err = 0, r;

	*out = NULL;
	if (!(ds = nz__calloc(1, sizeof *ds)))
		return nz__error_set(NZ_ENOMEM, "out of memory opening '%s'", node->path);
	ds->file = f;
	ds->node = node;
	pthread_mutex_init(&ds->pool_mu, NULL);
	ds->conv.mtype = -1;
	snprintf(what, sizeof what, "'%s'", node->path);
	nz__h5_lock();
	if ((ds->dset = H5Dopen2(f->fid, node->path, H5P_DEFAULT)) < 0) {
		err = nz__h5_error(NZ_ENOTFOUND, "%s: cannot open dataset in '%s'", what, f->path);
		goto done;
	}
	ft = H5Dget_type(ds->dset);
	if ((err = nz__h5conv_init(&ds->conv, ft, what)) < 0)
		goto done;
	dcpl = H5Dget_create_plist(ds->dset);
	if (!force_hdf5 && (r = plan_raw(ds, dcpl)) != 0) {
		if (r < 0) {
			err = r;
			goto done;
		}
		ds->raw = 1;
	}
done:
	if (ft >= 0)
		H5Tclose(ft);
	if (dcpl >= 0)
		H5Pclose(dcpl);
	nz__h5_unlock();
	if (err < 0) {
		nz__h5ds_close(ds);
		return err;
	}
	*out = ds;
	return 0;
}

void nz__h5ds_close(nz__h5ds *ds)
{
	if (!ds)
		return;
	nz__h5_lock();
	if (ds->dset > 0)
		H5Dclose(ds->dset);
	nz__h5conv_clear(&ds->conv);
	nz__h5_unlock();
	nz__codec_free(ds->shuffle);
	while (ds->pool) {
		scratch *s = ds->pool;
		ds->pool = s->next;
		nz__buf_free(&s->raw);
		nz__buf_free(&s->dec[0]);
		nz__buf_free(&s->dec[1]);
		libdeflate_free_decompressor(s->inflater);
		nz__free(s);
	}
	pthread_mutex_destroy(&ds->pool_mu);
	nz__free(ds);
}

const nz__xnode *nz__h5ds_node(const nz__h5ds *ds)
{
	return ds->node;
}

int nz__h5ds_raw_path(const nz__h5ds *ds)
{
	return ds->raw;
}

void nz__h5ds_stats(const nz__h5ds *ds, nz__h5stats *out)
{
	out->raw_chunks = atomic_load(&ds->raw_chunks);
	out->hdf5_reads = atomic_load(&ds->hdf5_reads);
	out->stored_chunks = atomic_load(&ds->stored_chunks);
}

/* A partial edge chunk of a dataset made with
 * H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS is stored unfiltered, yet its filter
 * mask says 0 (libhdf5 knows from the layout, not from the chunk). */
static int partial_unfiltered(const nz__h5ds *ds, const hsize_t *off)
{
	int d;

	if (!ds->dont_filter_partial)
		return 0;
	for (d = 0; d < ds->node->ndim; d++)
		if (off[d] + ds->node->chunks[d] > ds->node->shape[d])
			return 1;
	return 0;
}

/* 1 when a chunk of `a` may be this dataset's stored chunk as it is: its
 * (inner) chunks are the HDF5 chunks and its codecs the HDF5 filters in
 * their order (the dtypes, little-endian, the engine compares). */
static int stored_matches(void *ctx, const nz_array *a)
{
	static const char *const shuffle = "shuffle", *const zlib = "zlib";
	const char *ids[MAX_FILTERS];
	nz__h5ds *ds = ctx;
	const nz__xnode *n = ds->node;
	int i;

	if (!ds->storable || nz_array_ndim(a) != n->ndim)
		return 0;
	for (i = 0; i < n->ndim; i++)
		if (nz_array_chunks(a)[i] != n->chunks[i])
			return 0;
	for (i = 0; i < ds->nfilters; i++)
		ids[i] = ds->filters[i] == H5Z_FILTER_SHUFFLE ? shuffle : zlib;
	return nz__array_chain_is(a, ids, (size_t)ds->nfilters);
}

/* Chunk `off` (element offsets) as stored, into *out, with its filter
 * mask: 0; 1 when the chunk is not allocated; < 0 on errors. */
static int read_stored(nz__h5ds *ds, const hsize_t *off, nz_buf *out, uint32_t *mask)
{
	hsize_t size = 0;
	int err = 0;

	nz__h5_lock();
	if (H5Dget_chunk_storage_size(ds->dset, off, &size) < 0 || size == 0) {
		H5Eclear2(H5E_DEFAULT);
		nz__h5_unlock();
		return 1;
	}
	if ((err = nz__buf_reserve(out, (size_t)size)) == 0 &&
	    H5Dread_chunk(ds->dset, H5P_DEFAULT, off, mask, out->data) < 0)
		err = nz__h5_error(NZ_EFORMAT, "'%s': cannot read a raw chunk from '%s'", ds->node->path,
				   ds->file->path);
	nz__h5_unlock();
	if (err == 0)
		out->len = (size_t)size;
	return err;
}

/* Inflate HDF5's deflate output (a zlib stream, whose adler32 libdeflate
 * checks) into dst: exactly chunk_nbytes, as every filter here keeps the
 * size, or the chunk is corrupt. */
static int inflate_exact(nz__h5ds *ds, scratch *sc, const unsigned char *src, size_t n, nz_buf *dst)
{
	enum libdeflate_result r;
	int err;

	if (!sc->inflater && !(sc->inflater = libdeflate_alloc_decompressor()))
		return nz__error_set(NZ_ENOMEM, "codec 'zlib': out of memory");
	if ((err = nz__buf_reserve(dst, ds->chunk_nbytes)) < 0)
		return err;
	r = libdeflate_zlib_decompress(sc->inflater, src, n, dst->data, ds->chunk_nbytes, NULL);
	if (r != LIBDEFLATE_SUCCESS)
		return nz__error_set(NZ_ECODEC, "codec 'zlib': %s",
				     r == LIBDEFLATE_INSUFFICIENT_SPACE ? "data decodes to more bytes than expected"
				     : r == LIBDEFLATE_SHORT_OUTPUT     ? "data decodes to fewer bytes than expected"
									: "corrupt or truncated data");
	dst->len = ds->chunk_nbytes;
	return 0;
}

/* Undo the pipeline on the n stored bytes at src (the chunk at element
 * offsets corg; a set mask bit: that filter was skipped), in reverse,
 * alternating between dec[0] and dec[1]; *chunk is the chunk_nbytes
 * decoded bytes (src itself when no filter ran). Both the decoded read and
 * the check of a moved chunk fail here, with the same message. */
static int decode_chunk(nz__h5ds *ds, scratch *sc, const uint64_t *corg, uint32_t mask,
			const unsigned char *src, size_t n, nz_buf *dec, const unsigned char **chunk)
{
	const unsigned char *cur = src;
	char at[256];
	size_t k = 0;
	int i, d, next = 0, err = 0;

	for (i = ds->nfilters - 1; i >= 0 && err == 0; i--) {
		if (mask & (1u << i))
			continue;
		if (ds->filters[i] == H5Z_FILTER_FLETCHER32) {
			if (n < 4)
				err = nz__error_set(NZ_ECODEC, "corrupt fletcher32 chunk");
			else
				n -= 4;
			continue;
		}
		err = ds->filters[i] == H5Z_FILTER_DEFLATE
			      ? inflate_exact(ds, sc, cur, n, &dec[next])
			      : nz__codec_decode(ds->shuffle, cur, n, ds->chunk_nbytes, &dec[next]);
		cur = dec[next].data;
		n = dec[next].len;
		next ^= 1;
	}
	if (err == 0 && n != ds->chunk_nbytes)
		err = nz__error_set(NZ_ECODEC, "decoded chunk has %zu bytes, expected %zu", n, ds->chunk_nbytes);
	if (err == 0) {
		*chunk = cur;
		return 0;
	}
	for (d = 0; d < ds->node->ndim && k < sizeof at; d++)
		k += (size_t)snprintf(at + k, sizeof at - k, "%s%llu", d ? ", " : "", (unsigned long long)corg[d]);
	return nz__error_wrap("'%s': decoding the HDF5 chunk at [%s] of '%s'", ds->node->path, at, ds->file->path);
}

/* The stored bytes of HDF5 chunk `index` (in chunks), when every filter ran
 * on it, decoded into dec; 1 when it is not allocated or a filter was
 * skipped (a partial edge chunk under H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS):
 * then it is decoded the usual way. */
static int stored_get(void *ctx, const uint64_t *index, nz_buf *out, nz_buf *dec, const void **chunk)
{
	nz__h5ds *ds = ctx;
	uint64_t corg[NZ_MAX_DIMS];
	hsize_t off[NZ_MAX_DIMS];
	const unsigned char *elems = NULL;
	uint32_t mask = 0;
	scratch *sc;
	int i, err;

	for (i = 0; i < ds->node->ndim; i++)
		off[i] = corg[i] = index[i] * ds->node->chunks[i];
	if (partial_unfiltered(ds, off))
		return 1;
	if ((err = read_stored(ds, off, out, &mask)) != 0)
		return err;
	if (mask != 0)
		return 1;
	if (!(sc = scratch_get(ds)))
		return nz__error_set(NZ_ENOMEM, "'%s': out of memory", ds->node->path);
	err = decode_chunk(ds, sc, corg, 0, out->data, out->len, dec, &elems);
	scratch_put(ds, sc); /* only its inflater was used */
	if (err < 0)
		return err;
	*chunk = elems;
	atomic_fetch_add(&ds->stored_chunks, 1);
	return 0;
}

static const nz__stored_ops stored_ops = { stored_matches, stored_get };

void nz__h5ds_offer_stored(nz__h5ds *ds, nz_source *src)
{
	if (ds->storable)
		nz__source_set_stored(src, &stored_ops, ds);
}

/* H5Dread of a hyperslab (libhdf5 decodes, converts, fills missing chunks). */
static int read_hdf5(nz__h5ds *ds, const uint64_t *start, const uint64_t *count, void *out,
		     size_t nelem)
{
	const nz__xnode *n = ds->node;
	hsize_t st[NZ_MAX_DIMS], ct[NZ_MAX_DIMS];
	hid_t fspace = -1, mspace = -1;
	void *mbuf = out;
	size_t bytes;
	int i, err = 0, read = 0;
	int direct = !nz__xtype_has_pointers(&ds->conv.type) && ds->conv.msize == ds->conv.type.size;

	if (!direct) {
		if (nz__mul_size(&bytes, nelem, ds->conv.msize) < 0 || !(mbuf = nz__calloc(1, bytes ? bytes : 1)))
			return nz__error_set(NZ_ENOMEM, "'%s': out of memory reading", n->path);
	}
	for (i = 0; i < n->ndim; i++) {
		st[i] = start[i];
		ct[i] = count[i];
	}
	nz__h5_lock();
	fspace = H5Dget_space(ds->dset);
	mspace = n->ndim ? H5Screate_simple(n->ndim, ct, NULL) : H5Screate(H5S_SCALAR);
	if (n->ndim && H5Sselect_hyperslab(fspace, H5S_SELECT_SET, st, NULL, ct, NULL) < 0) {
		err = nz__h5_error(NZ_EINVAL, "'%s': bad region", n->path);
	} else if (nelem && H5Dread(ds->dset, ds->conv.mtype, mspace, fspace, H5P_DEFAULT, mbuf) < 0) {
		err = nz__h5_error(NZ_EFORMAT, "'%s': cannot read from '%s'", n->path, ds->file->path);
	} else {
		read = 1;
		/* References resolve in the dataset's own file (another one when
		 * the path goes through an external link: --copy-links). */
		if (!direct && nelem)
			err = nz__h5conv_apply(&ds->conv, ds->dset, mbuf, out, nelem, n->path);
	}
	if (read && nelem && nz__h5conv_has_vlen(&ds->conv))
		H5Dvlen_reclaim(ds->conv.mtype, mspace, H5P_DEFAULT, mbuf);
	if (fspace >= 0)
		H5Sclose(fspace);
	if (mspace >= 0)
		H5Sclose(mspace);
	nz__h5_unlock();
	atomic_fetch_add(&ds->hdf5_reads, 1);
	if (mbuf != out)
		nz__free(mbuf);
	return err;
}

/* Copy the box [lo, hi) (absolute coordinates) from a buffer laid out over
 * [src_org, src_org + src_shape) into one over [dst_org, dst_org + dst_shape). */
static void copy_box(unsigned char *dst, const uint64_t *dst_org, const uint64_t *dst_shape,
		     const unsigned char *src, const uint64_t *src_org, const uint64_t *src_shape,
		     const uint64_t *lo, const uint64_t *hi, int ndim, size_t isz)
{
	uint64_t idx[NZ_MAX_DIMS];
	size_t row = (size_t)(hi[ndim - 1] - lo[ndim - 1]) * isz;
	int d;

	for (d = 0; d < ndim; d++)
		idx[d] = lo[d];
	for (;;) {
		uint64_t so = 0, doff = 0;
		for (d = 0; d < ndim; d++) {
			so = so * src_shape[d] + (idx[d] - src_org[d]);
			doff = doff * dst_shape[d] + (idx[d] - dst_org[d]);
		}
		memcpy(dst + doff * isz, src + so * isz, row);
		for (d = ndim - 2; d >= 0; d--) {
			if (++idx[d] < hi[d])
				break;
			idx[d] = lo[d];
		}
		if (d < 0)
			return;
	}
}

/* Read one HDF5 chunk raw and decode it; *chunk points to its chunk_nbytes
 * decoded bytes (in sc). Returns 1 when the chunk is not stored (the caller
 * falls back). */
static int read_raw_chunk(nz__h5ds *ds, scratch *sc, const uint64_t *corg, const unsigned char **chunk)
{
	hsize_t off[NZ_MAX_DIMS];
	uint32_t mask = 0;
	int i, err;

	for (i = 0; i < ds->node->ndim; i++)
		off[i] = corg[i];
	if ((err = read_stored(ds, off, &sc->raw, &mask)) != 0)
		return err;
	if (partial_unfiltered(ds, off))
		mask = ~0u;
	if ((err = decode_chunk(ds, sc, corg, mask, sc->raw.data, sc->raw.len, sc->dec, chunk)) < 0)
		return err;
	atomic_fetch_add(&ds->raw_chunks, 1);
	return 0;
}

static int read_raw(nz__h5ds *ds, const uint64_t *start, const uint64_t *count, void *out)
{
	const nz__xnode *n = ds->node;
	uint64_t c0[NZ_MAX_DIMS], c1[NZ_MAX_DIMS], ci[NZ_MAX_DIMS], corg[NZ_MAX_DIMS];
	uint64_t lo[NZ_MAX_DIMS], hi[NZ_MAX_DIMS], ext[NZ_MAX_DIMS];
	const unsigned char *chunk = NULL;
	scratch *sc;
	int d, err = 0, r;

	for (d = 0; d < n->ndim; d++) {
		if (!count[d])
			return 0;
		c0[d] = start[d] / n->chunks[d];
		c1[d] = (start[d] + count[d] - 1) / n->chunks[d];
		ci[d] = c0[d];
	}
	if (!(sc = scratch_get(ds)))
		return nz__error_set(NZ_ENOMEM, "'%s': out of memory", n->path);
	for (;;) {
		for (d = 0; d < n->ndim; d++) {
			corg[d] = ci[d] * n->chunks[d];
			lo[d] = corg[d] > start[d] ? corg[d] : start[d];
			hi[d] = corg[d] + n->chunks[d] < start[d] + count[d] ? corg[d] + n->chunks[d]
									      : start[d] + count[d];
			ext[d] = hi[d] - lo[d];
		}
		r = read_raw_chunk(ds, sc, corg, &chunk);
		if (r < 0) {
			err = r;
			goto done;
		}
		if (r == 0) {
			copy_box(out, start, count, chunk, corg, n->chunks, lo, hi, n->ndim, ds->conv.type.size);
		} else {
			/* Unallocated chunk: libhdf5 supplies the fill value. */
			uint64_t m = 1;
			unsigned char *part;
			for (d = 0; d < n->ndim; d++)
				m *= ext[d];
			if (!(part = nz__malloc((size_t)m * ds->conv.type.size))) {
				err = nz__error_set(NZ_ENOMEM, "'%s': out of memory", n->path);
				goto done;
			}
			err = read_hdf5(ds, lo, ext, part, (size_t)m);
			if (!err)
				copy_box(out, start, count, part, lo, ext, lo, hi, n->ndim, ds->conv.type.size);
			nz__free(part);
			if (err < 0)
				goto done;
		}
		for (d = n->ndim - 1; d >= 0; d--) {
			if (++ci[d] <= c1[d])
				break;
			ci[d] = c0[d];
		}
		if (d < 0)
			break;
	}
done:
	scratch_put(ds, sc);
	return err;
}

int nz__h5ds_read(nz__h5ds *ds, const uint64_t *start, const uint64_t *count, void *out, size_t len)
{
	const nz__xnode *n = ds->node;
	uint64_t nelem = 1;
	size_t need;
	int d;

	for (d = 0; d < n->ndim; d++) {
		if (start[d] > n->shape[d] || count[d] > n->shape[d] - start[d])
			return nz__error_set(NZ_EINVAL, "'%s': region outside the dataset", n->path);
		nelem *= count[d];
	}
	if (nz__mul_size(&need, (size_t)nelem, ds->conv.type.size) < 0 || need != len)
		return nz__error_set(NZ_EINVAL, "'%s': output buffer of %zu bytes for a %zu-byte region",
				     n->path, len, need);
	if (ds->raw)
		return read_raw(ds, start, count, out);
	return read_hdf5(ds, start, count, out, (size_t)nelem);
}
