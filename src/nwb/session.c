/* Session metadata JSON (schema: docs/cli.md, "session JSON"). Strict: an
 * unknown key or a value of the wrong type is an error naming the document
 * and the key, so a typo never silently drops metadata. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nwb/nwb_impl.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"

/* What the session owns besides the struct: the parsed document (every
 * string points into it) and the arrays built from it. */
typedef struct priv {
	json_t *root;
	const char **lists[3];
} priv;

static int bad(const char *what, const char *ctx, const char *key, const char *msg)
{
	return nz__error_set(NZ_EFORMAT, "%s: %s%s%s %s", what, ctx, *ctx ? "." : "", key, msg);
}

/* Every key of obj must be in `allowed` (NULL-terminated). */
static int check_keys(const json_t *obj, const char *const *allowed, const char *what,
		      const char *ctx)
{
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)obj, key, v) {
		size_t i = 0;
		while (allowed[i] && strcmp(allowed[i], key) != 0)
			i++;
		if (!allowed[i])
			return bad(what, ctx, key, "is not a known key (see docs/cli.md)");
	}
	return 0;
}

/* The value of `key` when present and not null (else *v = NULL), checked
 * to be a string (want_string) or a number. */
static int get_checked(json_t **v, const json_t *obj, const char *key, int want_string,
		       const char *what, const char *ctx)
{
	*v = json_object_get(obj, key);
	if (!*v || json_is_null(*v)) {
		*v = NULL;
		return 0;
	}
	if (want_string ? !json_is_string(*v) : !json_is_number(*v))
		return bad(what, ctx, key, want_string ? "must be a string" : "must be a number");
	return 0;
}

static int get_str(const char **dst, const json_t *obj, const char *key, const char *what,
		   const char *ctx)
{
	json_t *v;
	int err = get_checked(&v, obj, key, 1, what, ctx);
	if (v && !err)
		*dst = json_string_value(v);
	return err;
}

static int get_num(double *dst, const json_t *obj, const char *key, const char *what,
		   const char *ctx)
{
	json_t *v;
	int err = get_checked(&v, obj, key, 0, what, ctx);
	if (v && !err)
		*dst = json_number_value(v);
	return err;
}

/* A string or a list of strings -> array of pointers (owned by p). */
static int get_list(const char *const **dst, size_t *n, priv *p, int slot, const json_t *obj,
		    const char *key, const char *what)
{
	json_t *v = json_object_get(obj, key), *e;
	size_t i, count;
	if (!v || json_is_null(v))
		return 0;
	count = json_is_array(v) ? json_array_size(v) : 1;
	if (!(p->lists[slot] = nz__calloc(count ? count : 1, sizeof(char *))))
		return nz__error_set(NZ_ENOMEM, "out of memory reading '%s'", what);
	if (json_is_string(v)) {
		p->lists[slot][0] = json_string_value(v);
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, e) {
			if (!json_is_string(e))
				return bad(what, "", key, "must be a string or a list of strings");
			p->lists[slot][i] = json_string_value(e);
		}
	} else {
		return bad(what, "", key, "must be a string or a list of strings");
	}
	*dst = p->lists[slot];
	*n = count;
	return 0;
}

static int parse_file(nz_session *s, priv *p, const char *what)
{
	static const char *const keys[] = {
		"identifier", "session_description", "session_start_time",
		"timestamps_reference_time", "file_create_date", "experimenter", "keywords",
		"related_publications", "lab", "institution", "experiment_description",
		"session_id", "notes", "subject", "devices", "electrode_groups", "electrodes",
		"series", NULL};
	static const char *const strs[] = {
		"identifier", "session_description", "session_start_time",
		"timestamps_reference_time", "file_create_date", "lab", "institution",
		"experiment_description", "session_id", "notes"};
	nz_nwb_opts *o = &s->file;
	const char **dst[] = {&o->identifier, &o->session_description, &o->session_start_time,
			      &o->timestamps_reference_time, &o->file_create_date, &o->lab,
			      &o->institution, &o->experiment_description, &o->session_id,
			      &o->notes};
	int err;
	if ((err = check_keys(p->root, keys, what, "")) < 0)
		return err;
	for (size_t i = 0; i < sizeof strs / sizeof *strs; i++)
		if ((err = get_str(dst[i], p->root, strs[i], what, "")) < 0)
			return err;
	if ((err = get_list(&o->experimenter, &o->n_experimenter, p, 0, p->root, "experimenter",
			    what)) < 0 ||
	    (err = get_list(&o->keywords, &o->n_keywords, p, 1, p->root, "keywords", what)) < 0 ||
	    (err = get_list(&o->related_publications, &o->n_related_publications, p, 2, p->root,
			    "related_publications", what)) < 0)
		return err;
	return 0;
}

static int parse_subject(nz_session *s, const json_t *v, const char *what)
{
	static const char *const keys[] = {"subject_id", "species", "sex", "age", "age_reference",
					   "date_of_birth", "description", "genotype", "strain",
					   "weight", NULL};
	nz_nwb_subject *sub = &s->subject;
	const char **dst[] = {&sub->subject_id, &sub->species, &sub->sex, &sub->age,
			      &sub->age_reference, &sub->date_of_birth, &sub->description,
			      &sub->genotype, &sub->strain, &sub->weight};
	int err;
	if (!v)
		return 0;
	if (!json_is_object(v))
		return bad(what, "", "subject", "must be an object");
	if ((err = check_keys(v, keys, what, "subject")) < 0)
		return err;
	for (size_t i = 0; i < sizeof dst / sizeof *dst; i++)
		if ((err = get_str(dst[i], v, keys[i], what, "subject")) < 0)
			return err;
	s->has_subject = 1;
	return 0;
}

/* Parses one element (an object; ctx names it, e.g. "devices[2]") into
 * `dst`; `arg` is the caller's. */
typedef int (*parse_one_fn)(void *dst, const json_t *e, const void *arg, const char *what,
			    const char *ctx);

/* root[key]: a list of objects, each parsed by `one` into an array of
 * `elem`-byte records (*out, *n). */
static int parse_list(void **out, size_t *n, size_t elem, const json_t *root, const char *key,
		      parse_one_fn one, const void *arg, const char *what)
{
	json_t *v = json_object_get(root, key), *e;
	char ctx[64];
	size_t i;
	int err;
	if (!v)
		return 0;
	if (!json_is_array(v))
		return bad(what, "", key, "must be a list of objects");
	if (!(*out = nz__calloc(json_array_size(v) + 1, elem)))
		return nz__error_set(NZ_ENOMEM, "out of memory reading '%s'", what);
	json_array_foreach(v, i, e) {
		snprintf(ctx, sizeof ctx, "%s[%zu]", key, i);
		if (!json_is_object(e))
			return bad(what, ctx, "", "must be an object");
		if ((err = one((char *)*out + i * elem, e, arg, what, ctx)) < 0)
			return err;
	}
	*n = json_array_size(v);
	return 0;
}

/* An object whose members are all strings, mapped onto consecutive
 * const char * fields; arg is the NULL-terminated key list, the first
 * required. */
static int one_record(void *dst, const json_t *e, const void *arg, const char *what,
		      const char *ctx)
{
	const char *const *fields = arg;
	const char **rec = dst;
	int err;
	if ((err = check_keys(e, fields, what, ctx)) < 0)
		return err;
	for (size_t k = 0; fields[k]; k++)
		if ((err = get_str(&rec[k], e, fields[k], what, ctx)) < 0)
			return err;
	if (!rec[0])
		return bad(what, ctx, fields[0], "is required");
	return 0;
}

static int one_electrode(void *dst, const json_t *e, const void *arg, const char *what,
			 const char *ctx)
{
	static const char *const keys[] = {"group", "location", "filtering", "x", "y", "z", "imp",
					   NULL};
	nz_nwb_electrode *el = dst;
	int err;
	(void)arg;
	*el = (nz_nwb_electrode)NZ_NWB_ELECTRODE_INIT;
	if ((err = check_keys(e, keys, what, ctx)) < 0 ||
	    (err = get_str(&el->group, e, "group", what, ctx)) < 0 ||
	    (err = get_str(&el->location, e, "location", what, ctx)) < 0 ||
	    (err = get_str(&el->filtering, e, "filtering", what, ctx)) < 0 ||
	    (err = get_num(&el->x, e, "x", what, ctx)) < 0 ||
	    (err = get_num(&el->y, e, "y", what, ctx)) < 0 ||
	    (err = get_num(&el->z, e, "z", what, ctx)) < 0 ||
	    (err = get_num(&el->imp, e, "imp", what, ctx)) < 0)
		return err;
	if (!el->group)
		return bad(what, ctx, "group", "is required");
	return 0;
}

static int parse_series(nz_session *s, const json_t *v, const char *what)
{
	static const char *const keys[] = {"name", "description", "comments", "filtering",
					   "conversion", "offset", "resolution", "starting_time",
					   "channel_conversion", NULL};
	nz_nwb_series_opts *o = &s->series;
	json_t *cc, *e;
	size_t i;
	int err;
	if (!v)
		return 0;
	if (!json_is_object(v))
		return bad(what, "", "series", "must be an object");
	if ((err = check_keys(v, keys, what, "series")) < 0 ||
	    (err = get_str(&o->name, v, "name", what, "series")) < 0 ||
	    (err = get_str(&o->description, v, "description", what, "series")) < 0 ||
	    (err = get_str(&o->comments, v, "comments", what, "series")) < 0 ||
	    (err = get_str(&o->filtering, v, "filtering", what, "series")) < 0 ||
	    (err = get_num(&o->conversion, v, "conversion", what, "series")) < 0 ||
	    (err = get_num(&o->offset, v, "offset", what, "series")) < 0 ||
	    (err = get_num(&o->resolution, v, "resolution", what, "series")) < 0 ||
	    (err = get_num(&o->starting_time, v, "starting_time", what, "series")) < 0)
		return err;
	if ((cc = json_object_get(v, "channel_conversion"))) {
		if (!json_is_array(cc))
			return bad(what, "series", "channel_conversion", "must be a list of numbers");
		if (!(s->channel_conversion = nz__calloc(json_array_size(cc) + 1, sizeof(float))))
			return nz__error_set(NZ_ENOMEM, "out of memory reading '%s'", what);
		json_array_foreach(cc, i, e) {
			if (!json_is_number(e))
				return bad(what, "series", "channel_conversion",
					   "must be a list of numbers");
			s->channel_conversion[i] = (float)json_number_value(e);
		}
		s->n_channel_conversion = json_array_size(cc);
	}
	return 0;
}

/* Names must resolve inside the document: electrodes -> electrode_groups
 * -> devices, so a typo is caught before any output exists. */
static int check_links(const nz_session *s, const char *what)
{
	if (s->n_electrodes && !s->n_groups)
		return bad(what, "", "electrodes", "need electrode_groups to refer to");
	for (size_t i = 0; i < s->n_electrodes; i++) {
		size_t k = 0;
		while (k < s->n_groups && strcmp(s->groups[k].name, s->electrodes[i].group) != 0)
			k++;
		if (k == s->n_groups)
			return nz__error_set(NZ_EFORMAT, "%s: electrodes[%zu].group '%s' is not in "
					     "electrode_groups", what, i, s->electrodes[i].group);
	}
	for (size_t i = 0; i < s->n_groups; i++) {
		size_t k = 0;
		if (!s->groups[i].device)
			continue;
		while (k < s->n_devices && strcmp(s->devices[k].name, s->groups[i].device) != 0)
			k++;
		if (k == s->n_devices)
			return nz__error_set(NZ_EFORMAT, "%s: electrode_groups[%zu].device '%s' is not "
					     "in devices", what, i, s->groups[i].device);
	}
	return 0;
}

int nz_session_parse(nz_session **out, const char *text, size_t len, const char *what)
{
	static const char *const dev_keys[] = {"name", "description", "manufacturer", NULL};
	static const char *const grp_keys[] = {"name", "description", "location", "device", NULL};
	nz_session *s = nz__calloc(1, sizeof *s);
	priv *p = nz__calloc(1, sizeof *p);
	int err;
	*out = NULL;
	nz__alloc_init();
	if (!s || !p) {
		nz__free(s);
		nz__free(p);
		return nz__error_set(NZ_ENOMEM, "out of memory reading '%s'", what);
	}
	s->priv = p;
	s->file = (nz_nwb_opts)NZ_NWB_OPTS_INIT;
	s->subject = (nz_nwb_subject)NZ_NWB_SUBJECT_INIT;
	s->series = (nz_nwb_series_opts)NZ_NWB_SERIES_OPTS_INIT;
	s->series.resolution = NAN;
	if ((err = nz__json_parse(&p->root, text, len, what, 0)) < 0)
		goto done;
	if (!json_is_object(p->root)) {
		err = nz__error_set(NZ_EFORMAT, "%s: the session document must be a JSON object",
				    what);
		goto done;
	}
	if ((err = parse_file(s, p, what)) < 0 ||
	    (err = parse_subject(s, json_object_get(p->root, "subject"), what)) < 0 ||
	    (err = parse_list((void **)&s->devices, &s->n_devices, sizeof *s->devices, p->root,
			      "devices", one_record, dev_keys, what)) < 0 ||
	    (err = parse_list((void **)&s->groups, &s->n_groups, sizeof *s->groups, p->root,
			      "electrode_groups", one_record, grp_keys, what)) < 0 ||
	    (err = parse_list((void **)&s->electrodes, &s->n_electrodes, sizeof *s->electrodes,
			      p->root, "electrodes", one_electrode, NULL, what)) < 0 ||
	    (err = parse_series(s, json_object_get(p->root, "series"), what)) < 0 ||
	    (err = check_links(s, what)) < 0)
		goto done;
	*out = s;
	s = NULL;
done:
	nz_session_free(s);
	return err;
}

int nz_session_load(nz_session **out, const char *path)
{
	char *text = NULL;
	size_t len = 0;
	int err;
	*out = NULL;
	if ((err = nz__nwb_read_file(&text, &len, path, 64u << 20)) < 0)
		return err;
	err = nz_session_parse(out, text, len, path);
	nz__free(text);
	return err;
}

void nz_session_free(nz_session *s)
{
	priv *p;
	if (!s)
		return;
	p = s->priv;
	if (p) {
		for (size_t i = 0; i < 3; i++)
			nz__free(p->lists[i]);
		json_decref(p->root);
		nz__free(p);
	}
	nz__free(s->devices);
	nz__free(s->groups);
	nz__free(s->electrodes);
	nz__free(s->channel_conversion);
	nz__free(s);
}
