/* Extra columns of the electrodes table (channel_name, rel_x, rel_y,
 * shank_ids, electrode_name: what neuroconv writes for a probe), kept
 * until nz_nwb_close writes the table. */
#include <stdio.h>
#include <string.h>

#include "nwb/nwb_impl.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/utf8.h"

static const char *const reserved[] = {"id", "location", "group", "group_name", "x", "y", "z",
				       "imp", "filtering", NULL};

/* Release what one column owns (any of it may be NULL). */
static void col_clear(nz__nwb_col *c)
{
	for (size_t k = 0; c->text && k < c->n; k++)
		nz__free(c->text[k]);
	nz__free(c->text);
	nz__free(c->num);
	nz__free(c->name);
	nz__free(c->description);
}

void nz__nwb_cols_free(nz_nwb *f)
{
	for (size_t i = 0; i < f->n_cols; i++)
		col_clear(&f->cols[i]);
	nz__free(f->cols);
	f->cols = NULL;
	f->n_cols = 0;
}

static int fill(nz__nwb_col *c, const char *dtype, const void *values, size_t n)
{
	char what[300];
	int err;
	if (strcmp(dtype, "<f8") == 0) {
		if (!(c->num = nz__calloc(n ? n : 1, sizeof *c->num)))
			return nz__error_set(NZ_ENOMEM, "out of memory adding column '%s'", c->name);
		memcpy(c->num, values, n * sizeof *c->num);
		return 0;
	}
	if (!(c->text = nz__calloc(n ? n : 1, sizeof *c->text)))
		return nz__error_set(NZ_ENOMEM, "out of memory adding column '%s'", c->name);
	for (size_t k = 0; k < n; k++) {
		const char *v = ((const char *const *)values)[k];
		snprintf(what, sizeof what, "electrodes column '%s' row %zu", c->name, k);
		if (!v)
			return nz__error_set(NZ_EINVAL, "%s is NULL", what);
		if ((err = nz__utf8_check(v, what)) < 0)
			return err;
		if (!(c->text[k] = nz__strdup(v)))
			return nz__error_set(NZ_ENOMEM, "out of memory adding column '%s'", c->name);
	}
	return 0;
}

int nz_nwb_add_electrode_column(nz_nwb *f, const char *name, const char *description,
				const char *dtype, const void *values, size_t n)
{
	nz__nwb_col *cols, *c;
	int err;
	if ((err = nz__nwb_check_open(f, "add_electrode_column")) < 0 ||
	    (err = nz__nwb_check_name(name, "electrodes column")) < 0)
		return err;
	for (size_t i = 0; reserved[i]; i++)
		if (strcmp(name, reserved[i]) == 0)
			return nz__error_set(NZ_EINVAL, "electrodes column '%s' is one the library "
					     "writes itself", name);
	for (size_t i = 0; i < f->n_cols; i++)
		if (strcmp(f->cols[i].name, name) == 0)
			return nz__error_set(NZ_EEXISTS, "electrodes column '%s' was already added",
					     name);
	if (!description || !dtype || (strcmp(dtype, "text") != 0 && strcmp(dtype, "<f8") != 0) ||
	    (!values && n))
		return nz__error_set(NZ_EINVAL, "electrodes column '%s' needs a description, dtype "
				     "\"text\" or \"<f8\" and values", name);
	if (n != f->n_rows)
		return nz__error_set(NZ_EINVAL, "electrodes column '%s': %zu values for %zu rows",
				     name, n, f->n_rows);
	if (!(cols = nz__realloc(f->cols, (f->n_cols + 1) * sizeof *cols)))
		return nz__error_set(NZ_ENOMEM, "out of memory adding column '%s'", name);
	f->cols = cols;
	c = &f->cols[f->n_cols++];
	memset(c, 0, sizeof *c);
	c->n = n;
	if (!(c->name = nz__strdup(name)) || !(c->description = nz__strdup(description)))
		err = nz__error_set(NZ_ENOMEM, "out of memory adding column '%s'", name);
	else
		err = fill(c, dtype, values, n);
	if (err < 0) { /* all or nothing: the column goes again */
		col_clear(c);
		f->n_cols--;
	}
	return err;
}

int nz__nwb_write_cols(nz_nwb *f, nz__hdmf_table *t)
{
	int err = 0;
	for (size_t i = 0; i < f->n_cols && !err; i++) {
		const nz__nwb_col *c = &f->cols[i];
		if (c->n != f->n_rows)
			return nz__error_set(NZ_EINVAL, "electrodes column '%s' has %zu values but the "
					     "table %zu rows (rows added after the column)", c->name,
					     c->n, f->n_rows);
		err = c->num ? nz__hdmf_table_col(t, c->name, c->description, "<f8", "float",
						  c->num, c->n * sizeof *c->num)
			     : nz__hdmf_table_col_text(t, c->name, c->description,
						       (const char *const *)c->text);
	}
	return err;
}
