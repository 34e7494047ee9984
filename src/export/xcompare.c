/* Equality of model values under verify's rules (model.h): attributes as
 * JSON, types, normalised elements; and their display in messages. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "export/model.h"
#include "util/alloc.h"
#include "util/json.h"

static const json_t *ref_target(const json_t *v)
{
	const json_t *zd = json_object_get(v, "zarr_dtype");
	if (!json_is_string(zd) || strcmp(json_string_value(zd), "object") != 0)
		return NULL;
	return json_object_get(json_object_get(v, "value"), "path");
}

static int number(const json_t *v, double *d)
{
	if (json_is_number(v)) {
		*d = json_number_value(v);
		return 1;
	}
	return nz__json_is_nonfinite(v, d);
}

/* JSON values equal under the manifest's rules: numbers as numbers (JSON
 * loses int/float width), references by target, NaN equal to NaN. */
int nz__xjson_same(const json_t *x, const json_t *y)
{
	const json_t *rx = ref_target(x), *ry = ref_target(y);
	double dx, dy;
	size_t i;
	if (rx || ry)
		return rx && ry && json_equal(rx, ry);
	if (number(x, &dx) && number(y, &dy)) {
		if (json_is_integer(x) && json_is_integer(y))
			return json_integer_value(x) == json_integer_value(y);
		return dx == dy || (isnan(dx) && isnan(dy));
	}
	if (json_is_array(x) && json_is_array(y)) {
		if (json_array_size(x) != json_array_size(y))
			return 0;
		for (i = 0; i < json_array_size(x); i++)
			if (!nz__xjson_same(json_array_get(x, i), json_array_get(y, i)))
				return 0;
		return 1;
	}
	if (json_is_object(x) && json_is_object(y)) {
		const char *k;
		json_t *xv;
		if (json_object_size(x) != json_object_size(y))
			return 0;
		json_object_foreach((json_t *)x, k, xv)
			if (!nz__xjson_same(xv, json_object_get(y, k)))
				return 0;
		return 1;
	}
	return json_equal(x, y);
}

void nz__xjson_show(char *buf, size_t cap, const json_t *v)
{
	char *text = NULL;
	if (nz__json_dumps(&text, v, NZ_JSON_COMPACT) < 0 || !text) {
		snprintf(buf, cap, "(unprintable)");
	} else {
		snprintf(buf, cap, "%.200s%s", text, strlen(text) > 200 ? "..." : "");
	}
	nz__free(text);
}

int nz__xtype_same(const nz__xtype *x, const nz__xtype *y)
{
	size_t i;
	if (x->cls != y->cls)
		return 0;
	if (x->cls == NZ__XT_STRING || x->cls == NZ__XT_REF || x->cls == NZ__XT_BOOL)
		return 1;
	if (x->cls != NZ__XT_COMPOUND)
		return x->size == y->size;
	if (x->nfields != y->nfields)
		return 0;
	for (i = 0; i < x->nfields; i++)
		if (strcmp(x->fields[i].name, y->fields[i].name) != 0 ||
		    !nz__xtype_same(&x->fields[i].type, &y->fields[i].type))
			return 0;
	return 1;
}

static double as_double(const nz__xtype *t, const unsigned char *p)
{
	if (t->size == 4) {
		float f;
		memcpy(&f, p, 4);
		return f;
	}
	double d;
	memcpy(&d, p, 8);
	return d;
}

int nz__xelem_same(const nz__xtype *t, const void *vx, const void *vy)
{
	const unsigned char *x = vx, *y = vy;
	size_t i;
	switch (t->cls) {
	case NZ__XT_STRING:
	case NZ__XT_REF: {
		const char *a, *b;
		memcpy(&a, x, sizeof a);
		memcpy(&b, y, sizeof b);
		return strcmp(a, b) == 0;
	}
	case NZ__XT_COMPOUND:
		for (i = 0; i < t->nfields; i++)
			if (!nz__xelem_same(&t->fields[i].type, x + t->fields[i].offset, y + t->fields[i].offset))
				return 0;
		return 1;
	case NZ__XT_FLOAT:
		if (memcmp(x, y, t->size) == 0)
			return 1;
		return isnan(as_double(t, x)) && isnan(as_double(t, y));
	case NZ__XT_BOOL:
		return (x[0] != 0) == (y[0] != 0);
	default:
		return memcmp(x, y, t->size) == 0;
	}
}

void nz__xelem_show(char *buf, size_t cap, const nz__xtype *t, const void *p)
{
	nz__xjson_ctx jc = { NULL, NULL, NULL, 1 };
	json_t *j;
	if (t->cls == NZ__XT_REF) {
		const char *s;
		memcpy(&s, p, sizeof s);
		snprintf(buf, cap, "-> %s", s);
		return;
	}
	j = nz__xelem_json(t, p, &jc, 0);
	nz__xjson_show(buf, cap, j);
	json_decref(j);
}

