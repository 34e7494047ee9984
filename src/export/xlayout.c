/* What export (an HDF5 model) and upgrade (a Zarr v2 model) both decide the
 * same way when they write a model through src/hdmf: each group's
 * zarr_link list, a group's attributes, and the v3 shards of a dataset. */
#include <string.h>

#include "export/export_impl.h"
#include "util/alloc.h"
#include "util/error.h"

/* v3: datasets over SHARD_FROM_BYTES are sharded, about SHARD_BYTES a
 * shard: far below DANDI's 5 GiB single-object limit. */
#define SHARD_FROM_BYTES ((uint64_t)64 << 20)
#define SHARD_BYTES ((uint64_t)256 << 20)

int nz__x_under(const char *path, const char *prefix)
{
	size_t n = prefix ? strlen(prefix) : 0;
	return n && strncmp(path, prefix, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

const char *nz__x_specloc(const nz__xmodel *m)
{
	const json_t *spec = m->count ? json_object_get(m->nodes[0].attrs, ".specloc") : NULL;
	return json_string_value(json_object_get(json_object_get(spec, "value"), "path"));
}

int nz__x_collect_links(json_t *links, uint64_t *count, const nz__xmodel *m, nz__x_link_source_fn ext,
			void *ctx)
{
	char *source = NULL;
	size_t i;
	int err;
	for (i = 0; i < m->count; i++) {
		const nz__xnode *n = &m->nodes[i];
		const char *slash;
		char *parent;
		json_t *list, *entry;
		if (n->kind != NZ__X_SOFTLINK && n->kind != NZ__X_EXTLINK)
			continue;
		(*count)++;
		slash = strrchr(n->path, '/');
		parent = slash == n->path ? nz__strdup("/") : nz__strndup(n->path, (size_t)(slash - n->path));
		if (!parent)
			return nz__error_set(NZ_ENOMEM, "out of memory");
		if (!(list = json_object_get(links, parent))) {
			/* set_new takes the reference even when it fails */
			list = json_array();
			if (!list || json_object_set_new(links, parent, list) < 0)
				list = NULL;
		}
		nz__free(parent);
		if (!list)
			return nz__error_set(NZ_ENOMEM, "out of memory");
		if (n->kind == NZ__X_EXTLINK && (err = ext(&source, ctx, n)) < 0)
			return err;
		entry = json_pack("{s:s,s:s,s:s}", "name", slash + 1, "path", n->link_target, "source",
				  source ? source : ".");
		nz__free(source);
		source = NULL;
		if (!entry || json_array_append_new(list, entry) < 0) /* append_new takes entry */
			return nz__error_set(NZ_ENOMEM, "out of memory");
	}
	return 0;
}

int nz__x_write_group(nz__hdmf *h, const nz__xnode *n, const json_t *links, json_t *root_attrs)
{
	json_t *attrs = json_deep_copy(n->attrs), *list = json_object_get(links, n->path);
	int err = 0;
	if (!attrs)
		return nz__error_set(NZ_ENOMEM, "out of memory");
	if (list && json_object_set(attrs, "zarr_link", list) < 0)
		err = nz__error_set(NZ_ENOMEM, "out of memory");
	if (!err && root_attrs) {
		/* The root is written last, after the specs set its .specloc. */
		if (json_object_update(root_attrs, attrs) < 0)
			err = nz__error_set(NZ_ENOMEM, "out of memory");
		json_object_del(root_attrs, ".specloc");
	} else if (!err) {
		err = nz__hdmf_group(h, n->path + 1, attrs);
	}
	json_decref(attrs);
	return err;
}

int nz__x_choose_shards(const nz__xnode *n, const uint64_t *chunks, uint64_t itemsize, const uint64_t *user,
			uint64_t *shards, const uint64_t **out)
{
	uint64_t row = itemsize, k, rows;
	int d;
	*out = NULL;
	if (n->ndim == 0)
		return 0;
	if (user && n->ndim == 2) {
		for (d = 0; d < 2; d++)
			if (user[d] % chunks[d])
				return nz__error_set(NZ_EINVAL, "'%s': shards %llu,%llu are not a multiple of "
						     "its chunks %llu,%llu", n->path, (unsigned long long)user[0],
						     (unsigned long long)user[1], (unsigned long long)chunks[0],
						     (unsigned long long)chunks[1]);
		shards[0] = user[0];
		shards[1] = user[1];
		*out = shards;
		return 0;
	}
	for (d = 0; d < n->ndim; d++)
		row *= n->shape[d] ? n->shape[d] : 1;
	if (row <= SHARD_FROM_BYTES)
		return 0;
	row = itemsize * chunks[0];
	for (d = 1; d < n->ndim; d++) {
		shards[d] = (n->shape[d] + chunks[d] - 1) / chunks[d] * chunks[d];
		row *= shards[d];
	}
	rows = (n->shape[0] + chunks[0] - 1) / chunks[0];
	k = row ? SHARD_BYTES / row : 1;
	k = k < 1 ? 1 : k > rows ? rows : k;
	shards[0] = k * chunks[0];
	*out = shards;
	return 0;
}
