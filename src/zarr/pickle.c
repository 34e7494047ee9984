/* The restricted pickle decoder (pickle.h). A small stack machine over our
 * own value nodes: every node is linked into one list and freed at the end,
 * so the stack, the memo and containers can share nodes without counts.
 *
 * Sharing cannot make cycles: a list or dict takes children only while it
 * is nobody's child (a node is sealed when it becomes one), and never
 * itself. Sharing can make the elements' JSON grow much faster than the
 * input (memo gets of nested tuples double at each level), so every node
 * carries the size of the text it expands to and none may pass the bound. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"
#include "util/utf8.h"
#include "zarr/pickle.h"

typedef enum pv_kind {
	PV_NONE, PV_BOOL, PV_INT, PV_FLOAT, PV_STR, PV_BYTES, PV_TUPLE, PV_LIST, PV_DICT,
	PV_GLOBAL, PV_DTYPE, PV_ARRAY
} pv_kind;

/* The callables the pickles of object ndarrays name. */
typedef enum pv_global { G_RECONSTRUCT, G_NDARRAY, G_DTYPE, G_REFERENCE, G_ENCODE, G_BYTES } pv_global;

static const struct { const char *module, *name; pv_global g; } allowed[] = {
	{ "numpy._core.multiarray", "_reconstruct", G_RECONSTRUCT },
	{ "numpy.core.multiarray", "_reconstruct", G_RECONSTRUCT },
	{ "numpy", "ndarray", G_NDARRAY },
	{ "numpy", "dtype", G_DTYPE },
	{ "hdmf_zarr.utils", "ZarrReference", G_REFERENCE },
	{ "_codecs", "encode", G_ENCODE },
	{ "builtins", "bytes", G_BYTES },
	{ "__builtin__", "bytes", G_BYTES },
};

typedef struct pv {
	struct pv *next;  /* every node of the decode, for freeing */
	pv_kind kind;
	int sealed;       /* a child of some node: takes no more children */
	int built;        /* dtype or array: its BUILD ran */
	pv_global g;
	int64_t i;
	double f;
	char *s;          /* str, bytes, dtype name: NUL-terminated copy */
	size_t n;
	struct pv **items; /* tuple and list items; dict: key, value, ... */
	size_t nitems, cap;
	struct pv *state; /* array: BUILD's state tuple */
	size_t weight;    /* bytes of JSON text it expands to, at most */
	unsigned depth;
} pv;

typedef struct vm {
	const unsigned char *p;
	size_t len, pos, at; /* at: offset of the current opcode */
	unsigned char op;
	const char *what;
	size_t max_weight;
	pv *all;
	pv **stack, **memo;
	size_t sp, scap, nmemo, mcap;
	size_t *marks;
	size_t nmarks, kcap;
} vm;

static const struct { unsigned char op; const char *name; } opnames[] = {
	{ 0x80, "PROTO" }, { 0x95, "FRAME" }, { '.', "STOP" }, { '(', "MARK" }, { ')', "EMPTY_TUPLE" },
	{ 0x85, "TUPLE1" }, { 0x86, "TUPLE2" }, { 0x87, "TUPLE3" }, { 't', "TUPLE" }, { ']', "EMPTY_LIST" },
	{ 'a', "APPEND" }, { 'e', "APPENDS" }, { '}', "EMPTY_DICT" }, { 's', "SETITEM" }, { 'u', "SETITEMS" },
	{ 'N', "NONE" }, { 0x88, "NEWTRUE" }, { 0x89, "NEWFALSE" }, { 'J', "BININT" }, { 'K', "BININT1" },
	{ 'M', "BININT2" }, { 0x8a, "LONG1" }, { 0x8b, "LONG4" }, { 'G', "BINFLOAT" },
	{ 0x8c, "SHORT_BINUNICODE" }, { 'X', "BINUNICODE" }, { 0x8d, "BINUNICODE8" },
	{ 'C', "SHORT_BINBYTES" }, { 'B', "BINBYTES" }, { 0x8e, "BINBYTES8" }, { 'q', "BINPUT" },
	{ 'r', "LONG_BINPUT" }, { 0x94, "MEMOIZE" }, { 'h', "BINGET" }, { 'j', "LONG_BINGET" },
	{ 'c', "GLOBAL" }, { 0x93, "STACK_GLOBAL" }, { 'R', "REDUCE" }, { 0x81, "NEWOBJ" }, { 'b', "BUILD" },
	/* Refused, named so the message says what the file holds. */
	{ 'I', "INT" }, { 'L', "LONG" }, { 'F', "FLOAT" }, { 'S', "STRING" }, { 'T', "BINSTRING" },
	{ 'U', "SHORT_BINSTRING" }, { 'V', "UNICODE" }, { 'l', "LIST" }, { 'd', "DICT" }, { 'o', "OBJ" },
	{ 'i', "INST" }, { 'p', "PUT" }, { 'g', "GET" }, { '0', "POP" }, { '1', "POP_MARK" }, { '2', "DUP" },
	{ 'P', "PERSID" }, { 'Q', "BINPERSID" }, { 0x82, "EXT1" }, { 0x83, "EXT2" }, { 0x84, "EXT4" },
	{ 0x8f, "EMPTY_SET" }, { 0x90, "ADDITEMS" }, { 0x91, "FROZENSET" }, { 0x92, "NEWOBJ_EX" },
	{ 0x96, "BYTEARRAY8" }, { 0x97, "NEXT_BUFFER" }, { 0x98, "READONLY_BUFFER" },
};

static void op_name(char *buf, size_t n, unsigned char op)
{
	size_t i;
	for (i = 0; i < sizeof opnames / sizeof opnames[0]; i++)
		if (opnames[i].op == op) {
			snprintf(buf, n, "%s", opnames[i].name);
			return;
		}
	snprintf(buf, n, "0x%02x", op);
}

/* An error at the current opcode: "<what>: pickle opcode NAME at offset N: ..." */
static int fail(vm *m, int code, const char *fmt, ...) NZ__PRINTF(3, 4);
static int fail(vm *m, int code, const char *fmt, ...)
{
	char detail[200], name[24];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof detail, fmt, ap);
	va_end(ap);
	op_name(name, sizeof name, m->op);
	return nz__error_set(code, "%s: pickle opcode %s at offset %zu: %s", m->what, name, m->at, detail);
}

static int need(vm *m, size_t n)
{
	if (m->len - m->pos < n)
		return fail(m, NZ_EFORMAT, "truncated (needs %zu more bytes, %zu left)", n, m->len - m->pos);
	return 0;
}

static uint64_t le(const unsigned char *p, int n)
{
	uint64_t v = 0;
	while (n-- > 0)
		v = v << 8 | p[n];
	return v;
}

static int new_pv(pv **out, vm *m, pv_kind kind)
{
	pv *v = nz__calloc(1, sizeof *v);
	if (!v)
		return nz__error_set(NZ_ENOMEM, "%s: out of memory decoding a pickle", m->what);
	v->kind = kind;
	v->weight = 8;
	v->next = m->all;
	m->all = v;
	*out = v;
	return 0;
}

static int push(vm *m, pv *v)
{
	if (m->sp == m->scap) {
		size_t cap = m->scap ? 2 * m->scap : 16;
		pv **s = nz__realloc(m->stack, cap * sizeof *s);
		if (!s)
			return nz__error_set(NZ_ENOMEM, "%s: out of memory decoding a pickle", m->what);
		m->stack = s;
		m->scap = cap;
	}
	m->stack[m->sp++] = v;
	return 0;
}

static size_t floor_of(const vm *m)
{
	return m->nmarks ? m->marks[m->nmarks - 1] : 0;
}

static int pop(pv **out, vm *m)
{
	if (m->sp == floor_of(m))
		return fail(m, NZ_EFORMAT, "the stack is empty%s", m->nmarks ? " above the mark" : "");
	*out = m->stack[--m->sp];
	return 0;
}

static int pop_mark(size_t *base, vm *m)
{
	if (!m->nmarks)
		return fail(m, NZ_EFORMAT, "no MARK to close");
	*base = m->marks[--m->nmarks];
	return 0;
}

/* Make `c` a child of container `p`, keeping the bounds. */
static int adopt(vm *m, pv *p, pv *c)
{
	if (c == p)
		return fail(m, NZ_EFORMAT, "a container put into itself");
	if (c->depth + 1 > NZ__PICKLE_MAX_DEPTH)
		return fail(m, NZ_EUNSUPPORTED, "values nested deeper than %d", NZ__PICKLE_MAX_DEPTH);
	if (c->weight > m->max_weight - p->weight - 1)
		return fail(m, NZ_EUNSUPPORTED, "the elements expand to more than %zu bytes (%d times the "
			    "input): memo references repeated beyond any real chunk", m->max_weight,
			    NZ__PICKLE_MAX_GROWTH);
	if (p->nitems == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 4;
		pv **it = nz__realloc(p->items, cap * sizeof *it);
		if (!it)
			return nz__error_set(NZ_ENOMEM, "%s: out of memory decoding a pickle", m->what);
		p->items = it;
		p->cap = cap;
	}
	p->items[p->nitems++] = c;
	p->weight += c->weight + 1;
	if (c->depth + 1 > p->depth)
		p->depth = c->depth + 1;
	c->sealed = 1;
	return 0;
}

static int new_text(vm *m, pv_kind kind, const unsigned char *s, size_t n)
{
	pv *v = NULL;
	int err;
	if (kind == PV_STR && nz__utf8_invalid_at((const char *)s, n) != n)
		return fail(m, NZ_EFORMAT, "a str that is not valid UTF-8");
	if (n > (m->max_weight - 2) / 6)
		return fail(m, NZ_EUNSUPPORTED, "a %zu-byte string in a %zu-byte chunk", n, m->len);
	if ((err = new_pv(&v, m, kind)) < 0)
		return err;
	if (!(v->s = nz__malloc(n + 1)))
		return nz__error_set(NZ_ENOMEM, "%s: out of memory decoding a pickle", m->what);
	memcpy(v->s, s, n);
	v->s[n] = '\0';
	v->n = n;
	v->weight = 6 * n + 2; /* "\u00XX" for every byte, at most */
	return push(m, v);
}

/* A length-prefixed str or bytes: `w` bytes of little-endian length. */
static int op_text(vm *m, pv_kind kind, int w)
{
	uint64_t n;
	int err;
	if ((err = need(m, (size_t)w)) < 0)
		return err;
	n = le(m->p + m->pos, w);
	m->pos += (size_t)w;
	if (n > m->len - m->pos)
		return fail(m, NZ_EFORMAT, "a length of %llu bytes, %zu left", (unsigned long long)n,
			    m->len - m->pos);
	m->pos += (size_t)n;
	return new_text(m, kind, m->p + m->pos - n, (size_t)n);
}

static int op_int(vm *m, int w, int is_signed)
{
	uint64_t u;
	pv *v = NULL;
	int err;
	if ((err = need(m, (size_t)w)) < 0)
		return err;
	u = le(m->p + m->pos, w);
	m->pos += (size_t)w;
	if ((err = new_pv(&v, m, PV_INT)) < 0)
		return err;
	if (is_signed && w > 0 && w < 8 && (u >> (8 * w - 1)) & 1)
		u |= ~(uint64_t)0 << (8 * w);
	v->i = (int64_t)u;
	v->weight = 21;
	return push(m, v);
}

/* LONG1: n bytes of little-endian two's complement; at most 64 bits. */
static int op_long1(vm *m)
{
	size_t n;
	int err;
	if ((err = need(m, 1)) < 0)
		return err;
	n = m->p[m->pos++];
	if (n > 8)
		return fail(m, NZ_EUNSUPPORTED, "an integer of %zu bytes (at most 8 are supported)", n);
	if ((err = need(m, n)) < 0)
		return err;
	if (n == 0) /* Python writes 0 as LONG1 with no bytes */
		return op_int(m, 0, 1);
	return op_int(m, (int)n, 1);
}

static int op_float(vm *m)
{
	uint64_t u = 0;
	pv *v = NULL;
	int k, err;
	if ((err = need(m, 8)) < 0)
		return err;
	for (k = 0; k < 8; k++) /* big-endian IEEE 754 double */
		u = u << 8 | m->p[m->pos + (size_t)k];
	m->pos += 8;
	if ((err = new_pv(&v, m, PV_FLOAT)) < 0)
		return err;
	memcpy(&v->f, &u, sizeof v->f);
	v->weight = 26;
	return push(m, v);
}

static int op_global(vm *m, const char *module, const char *name)
{
	size_t i;
	pv *v = NULL;
	int err;
	for (i = 0; i < sizeof allowed / sizeof allowed[0]; i++)
		if (strcmp(allowed[i].module, module) == 0 && strcmp(allowed[i].name, name) == 0)
			break;
	if (i == sizeof allowed / sizeof allowed[0])
		return fail(m, NZ_EUNSUPPORTED, "global '%.60s.%.60s' is not one an object array's pickle "
			    "needs (refused: unpickling it could run code)", module, name);
	if ((err = new_pv(&v, m, PV_GLOBAL)) < 0)
		return err;
	v->g = allowed[i].g;
	return push(m, v);
}

/* GLOBAL: "module\nname\n" as text. */
static int op_text_global(vm *m)
{
	const unsigned char *a = m->p + m->pos, *nl1, *nl2;
	char module[64], name[64];
	nl1 = memchr(a, '\n', m->len - m->pos);
	nl2 = nl1 ? memchr(nl1 + 1, '\n', (size_t)(m->p + m->len - nl1 - 1)) : NULL;
	if (!nl2)
		return fail(m, NZ_EFORMAT, "a module and name not ended by newlines");
	if ((size_t)(nl1 - a) >= sizeof module || (size_t)(nl2 - nl1 - 1) >= sizeof name)
		return fail(m, NZ_EUNSUPPORTED, "a global name longer than any allowed one");
	memcpy(module, a, (size_t)(nl1 - a));
	module[nl1 - a] = '\0';
	memcpy(name, nl1 + 1, (size_t)(nl2 - nl1 - 1));
	name[nl2 - nl1 - 1] = '\0';
	m->pos = (size_t)(nl2 + 1 - m->p);
	return op_global(m, module, name);
}

static int op_stack_global(vm *m)
{
	pv *name = NULL, *module = NULL;
	int err;
	if ((err = pop(&name, m)) < 0 || (err = pop(&module, m)) < 0)
		return err;
	if (name->kind != PV_STR || module->kind != PV_STR || strlen(name->s) != name->n ||
	    strlen(module->s) != module->n)
		return fail(m, NZ_EFORMAT, "module and name must be strings");
	return op_global(m, module->s, name->s);
}

/* A tuple of the `n` values above stack position `base`. */
static int make_tuple(vm *m, size_t base)
{
	pv *t = NULL;
	size_t k;
	int err;
	if ((err = new_pv(&t, m, PV_TUPLE)) < 0)
		return err;
	t->weight = 2;
	for (k = base; k < m->sp; k++)
		if ((err = adopt(m, t, m->stack[k])) < 0)
			return err;
	m->sp = base;
	return push(m, t);
}

static int op_tuple_n(vm *m, size_t n)
{
	if (m->sp - floor_of(m) < n)
		return fail(m, NZ_EFORMAT, "the stack holds fewer than %zu values", n);
	return make_tuple(m, m->sp - n);
}

static int op_empty(vm *m, pv_kind kind)
{
	pv *v = NULL;
	int err;
	if ((err = new_pv(&v, m, kind)) < 0)
		return err;
	v->weight = 2;
	return push(m, v);
}

/* APPEND(S) and SETITEM(S): the values above `base` go into the container
 * just below it. */
static int fill_container(vm *m, size_t base)
{
	pv *c;
	size_t k;
	int err;
	if (base == 0 || base <= floor_of(m))
		return fail(m, NZ_EFORMAT, "no container below the values");
	c = m->stack[base - 1];
	if (c->kind != (m->op == 'a' || m->op == 'e' ? PV_LIST : PV_DICT))
		return fail(m, NZ_EUNSUPPORTED, "the target is not a %s", m->op == 'a' || m->op == 'e' ? "list" : "dict");
	if (c->sealed)
		return fail(m, NZ_EUNSUPPORTED, "the container is already inside another value");
	if (c->kind == PV_DICT && (m->sp - base) % 2)
		return fail(m, NZ_EFORMAT, "a key without a value");
	for (k = base; k < m->sp; k++) {
		if (c->kind == PV_DICT && (k - base) % 2 == 0 &&
		    (m->stack[k]->kind != PV_STR || strlen(m->stack[k]->s) != m->stack[k]->n))
			return fail(m, NZ_EUNSUPPORTED, "a dict key that is not a str without NUL characters");
		if ((err = adopt(m, c, m->stack[k])) < 0)
			return err;
	}
	m->sp = base;
	return 0;
}

static int op_memo_put(vm *m, uint64_t idx)
{
	if (m->sp == floor_of(m))
		return fail(m, NZ_EFORMAT, "nothing to memoize");
	if (idx > m->nmemo)
		return fail(m, NZ_EUNSUPPORTED, "memo index %llu out of order (%zu filled): Python fills the "
			    "memo in order", (unsigned long long)idx, m->nmemo);
	if (idx == m->nmemo) {
		if (m->nmemo == m->mcap) {
			size_t cap = m->mcap ? 2 * m->mcap : 16;
			pv **mm = nz__realloc(m->memo, cap * sizeof *mm);
			if (!mm)
				return nz__error_set(NZ_ENOMEM, "%s: out of memory decoding a pickle", m->what);
			m->memo = mm;
			m->mcap = cap;
		}
		m->nmemo++;
	}
	m->memo[idx] = m->stack[m->sp - 1];
	return 0;
}

static int op_memo_get(vm *m, int w)
{
	uint64_t idx;
	int err;
	if ((err = need(m, (size_t)w)) < 0)
		return err;
	idx = le(m->p + m->pos, w);
	m->pos += (size_t)w;
	if (idx >= m->nmemo)
		return fail(m, NZ_EFORMAT, "memo index %llu was never put", (unsigned long long)idx);
	return push(m, m->memo[idx]);
}

static int is_str(const pv *v, const char *s)
{
	return v->kind == PV_STR && strcmp(v->s, s) == 0 && strlen(s) == v->n;
}

/* bytes from _codecs.encode(text, 'latin1'): every code point below 256. */
static int latin1_bytes(vm *m, const pv *text)
{
	unsigned char *b = nz__malloc(text->n + 1);
	size_t i = 0, n = 0;
	int err;
	if (!b)
		return nz__error_set(NZ_ENOMEM, "%s: out of memory decoding a pickle", m->what);
	while (i < text->n) {
		unsigned char c = (unsigned char)text->s[i];
		if (c < 0x80) {
			b[n++] = c;
			i++;
		} else if ((c == 0xc2 || c == 0xc3) && i + 1 < text->n) {
			b[n++] = (unsigned char)((c & 0x03) << 6 | ((unsigned char)text->s[i + 1] & 0x3f));
			i += 2;
		} else {
			nz__free(b);
			return fail(m, NZ_EFORMAT, "latin1 text with a code point above 255");
		}
	}
	err = new_text(m, PV_BYTES, b, n);
	nz__free(b);
	return err;
}

static int op_reduce(vm *m)
{
	pv *args = NULL, *fn = NULL, *v = NULL;
	int err;
	if ((err = pop(&args, m)) < 0 || (err = pop(&fn, m)) < 0)
		return err;
	if (fn->kind != PV_GLOBAL || args->kind != PV_TUPLE)
		return fail(m, NZ_EUNSUPPORTED, "a call of something other than an allowed global");
	switch (fn->g) {
	case G_RECONSTRUCT:
		if (args->nitems != 3 || args->items[0]->kind != PV_GLOBAL || args->items[0]->g != G_NDARRAY ||
		    args->items[1]->kind != PV_TUPLE || args->items[2]->kind != PV_BYTES)
			return fail(m, NZ_EUNSUPPORTED, "_reconstruct called other than as numpy pickles an ndarray");
		if ((err = new_pv(&v, m, PV_ARRAY)) < 0)
			return err;
		return push(m, v);
	case G_DTYPE:
		if (args->nitems != 3 || args->items[0]->kind != PV_STR || args->items[1]->kind != PV_BOOL ||
		    args->items[2]->kind != PV_BOOL)
			return fail(m, NZ_EUNSUPPORTED, "numpy.dtype called other than as numpy pickles a dtype");
		if ((err = new_pv(&v, m, PV_DTYPE)) < 0)
			return err;
		v->s = args->items[0]->s; /* owned by the str node */
		v->n = args->items[0]->n;
		return push(m, v);
	case G_ENCODE:
		if (args->nitems != 2 || args->items[0]->kind != PV_STR ||
		    (!is_str(args->items[1], "latin1") && !is_str(args->items[1], "latin-1")))
			return fail(m, NZ_EUNSUPPORTED, "_codecs.encode called other than for protocol 2 bytes");
		return latin1_bytes(m, args->items[0]);
	case G_BYTES:
		if (args->nitems != 0)
			return fail(m, NZ_EUNSUPPORTED, "bytes() called with arguments");
		return new_text(m, PV_BYTES, (const unsigned char *)"", 0);
	default:
		return fail(m, NZ_EUNSUPPORTED, "a call of numpy.ndarray or ZarrReference (only NEWOBJ builds those)");
	}
}

static int op_newobj(vm *m)
{
	pv *args = NULL, *cls = NULL;
	int err;
	if ((err = pop(&args, m)) < 0 || (err = pop(&cls, m)) < 0)
		return err;
	if (cls->kind != PV_GLOBAL || cls->g != G_REFERENCE || args->kind != PV_TUPLE || args->nitems)
		return fail(m, NZ_EUNSUPPORTED, "NEWOBJ of something other than hdmf_zarr's ZarrReference()");
	return op_empty(m, PV_DICT);
}

/* BUILD: a dtype's state (kept out of the result), or the array's
 * (version, shape, dtype, is_fortran, elements). */
static int op_build(vm *m)
{
	pv *state = NULL, *t, **s;
	size_t k;
	int err;
	if ((err = pop(&state, m)) < 0)
		return err;
	if (m->sp == floor_of(m))
		return fail(m, NZ_EFORMAT, "nothing to build");
	t = m->stack[m->sp - 1];
	if ((t->kind != PV_DTYPE && t->kind != PV_ARRAY) || t->built || state->kind != PV_TUPLE)
		return fail(m, NZ_EUNSUPPORTED, "a BUILD other than of a new numpy dtype or ndarray");
	t->built = 1;
	if (t->kind == PV_DTYPE)
		return 0;
	s = state->items;
	if (state->nitems != 5 || s[0]->kind != PV_INT || s[1]->kind != PV_TUPLE || s[2]->kind != PV_DTYPE ||
	    s[3]->kind != PV_BOOL)
		return fail(m, NZ_EUNSUPPORTED, "an ndarray state other than (version, shape, dtype, fortran, data)");
	for (k = 0; k < s[1]->nitems; k++)
		if (s[1]->items[k]->kind != PV_INT || s[1]->items[k]->i < 0)
			return fail(m, NZ_EFORMAT, "an ndarray shape that is not a tuple of sizes");
	if (s[4]->kind != PV_LIST || (strcmp(s[2]->s, "O8") != 0 && strcmp(s[2]->s, "O4") != 0 && s[2]->s[0] != 'V'))
		return fail(m, NZ_EUNSUPPORTED, "a pickled ndarray of dtype '%.20s', not of objects", s[2]->s);
	if (s[3]->i)
		return fail(m, NZ_EUNSUPPORTED, "a Fortran-ordered ndarray");
	t->state = state;
	state->sealed = 1;
	return 0;
}

static int step(vm *m)
{
	pv *v = NULL;
	size_t base = 0;
	int err;
	m->at = m->pos;
	m->op = m->p[m->pos++];
	switch (m->op) {
	case 0x80: /* PROTO: only first, 2..5 */
		if ((err = need(m, 1)) < 0)
			return err;
		if (m->at != 0 || m->p[m->pos] < 2 || m->p[m->pos] > 5)
			return fail(m, NZ_EUNSUPPORTED, "protocol %u%s (numcodecs writes 2..5, first)", m->p[m->pos],
				    m->at ? " not at the start" : "");
		m->pos++;
		return 0;
	case 0x95: /* FRAME: a hint; the length must fit */
		if ((err = need(m, 8)) < 0)
			return err;
		if (le(m->p + m->pos, 8) > m->len - m->pos - 8)
			return fail(m, NZ_EFORMAT, "a frame longer than the chunk");
		m->pos += 8;
		return 0;
	case '(':
		if (m->nmarks == m->kcap) {
			size_t cap = m->kcap ? 2 * m->kcap : 8, *k = nz__realloc(m->marks, cap * sizeof *k);
			if (!k)
				return nz__error_set(NZ_ENOMEM, "%s: out of memory decoding a pickle", m->what);
			m->marks = k;
			m->kcap = cap;
		}
		m->marks[m->nmarks++] = m->sp;
		return 0;
	case ')': return op_tuple_n(m, 0);
	case 0x85: return op_tuple_n(m, 1);
	case 0x86: return op_tuple_n(m, 2);
	case 0x87: return op_tuple_n(m, 3);
	case 't':
		if ((err = pop_mark(&base, m)) < 0)
			return err;
		return make_tuple(m, base);
	case ']': return op_empty(m, PV_LIST);
	case '}': return op_empty(m, PV_DICT);
	case 'a':
	case 's':
		if (m->sp - floor_of(m) < (m->op == 'a' ? 1u : 2u))
			return fail(m, NZ_EFORMAT, "the stack holds too few values");
		return fill_container(m, m->sp - (m->op == 'a' ? 1 : 2));
	case 'e':
	case 'u':
		if ((err = pop_mark(&base, m)) < 0)
			return err;
		return fill_container(m, base);
	case 'N':
		return op_empty(m, PV_NONE);
	case 0x88:
	case 0x89:
		if ((err = new_pv(&v, m, PV_BOOL)) < 0)
			return err;
		v->i = m->op == 0x88;
		return push(m, v);
	case 'J': return op_int(m, 4, 1);
	case 'K': return op_int(m, 1, 0);
	case 'M': return op_int(m, 2, 0);
	case 0x8a: return op_long1(m);
	case 'G': return op_float(m);
	case 0x8c: return op_text(m, PV_STR, 1);
	case 'X': return op_text(m, PV_STR, 4);
	case 0x8d: return op_text(m, PV_STR, 8);
	case 'C': return op_text(m, PV_BYTES, 1);
	case 'B': return op_text(m, PV_BYTES, 4);
	case 0x8e: return op_text(m, PV_BYTES, 8);
	case 0x94: return op_memo_put(m, m->nmemo);
	case 'q':
	case 'r': {
		int w = m->op == 'q' ? 1 : 4;
		if ((err = need(m, (size_t)w)) < 0)
			return err;
		m->pos += (size_t)w;
		return op_memo_put(m, le(m->p + m->pos - w, w));
	}
	case 'h': return op_memo_get(m, 1);
	case 'j': return op_memo_get(m, 4);
	case 'c': return op_text_global(m);
	case 0x93: return op_stack_global(m);
	case 'R': return op_reduce(m);
	case 0x81: return op_newobj(m);
	case 'b': return op_build(m);
	default:
		return fail(m, NZ_EUNSUPPORTED, "not an opcode numcodecs' pickles of object arrays hold");
	}
}

static int to_json(json_t **out, const pv *v, size_t elem, const char *what)
{
	json_t *j = NULL, *c = NULL;
	size_t k;
	int err = 0;
	*out = NULL;
	switch (v->kind) {
	case PV_NONE: j = json_null(); break;
	case PV_BOOL: j = json_boolean(v->i); break;
	case PV_INT: j = json_integer((json_int_t)v->i); break;
	case PV_FLOAT: j = isfinite(v->f) ? json_real(v->f) : nz__json_nonfinite(v->f); break;
	case PV_BYTES:
		if (nz__utf8_invalid_at(v->s, v->n) != v->n)
			return nz__error_set(NZ_EUNSUPPORTED, "%s: pickled element %zu holds bytes that are not "
					     "UTF-8 text", what, elem);
		/* fall through */
	case PV_STR: j = json_stringn(v->s, v->n); break;
	case PV_TUPLE:
	case PV_LIST:
	case PV_DICT:
		j = v->kind == PV_DICT ? json_object() : json_array();
		for (k = 0; j && k < v->nitems && !err; k += v->kind == PV_DICT ? 2 : 1) {
			const pv *x = v->items[k + (v->kind == PV_DICT)];
			if ((err = to_json(&c, x, elem, what)) < 0)
				break;
			if (v->kind == PV_DICT ? json_object_setn_new(j, v->items[k]->s, v->items[k]->n, c) < 0
					       : json_array_append_new(j, c) < 0)
				err = nz__error_set(NZ_ENOMEM, "%s: out of memory decoding a pickle", what);
			c = NULL;
		}
		break;
	default:
		return nz__error_set(NZ_EUNSUPPORTED, "%s: pickled element %zu is a numpy object, not a value",
				     what, elem);
	}
	if (err < 0) {
		json_decref(j);
		return err;
	}
	if (!j)
		return nz__error_set(NZ_ENOMEM, "%s: out of memory decoding a pickle", what);
	*out = j;
	return 0;
}

/* The finished array: its shape must be the chunk's, its elements one each. */
static int result(json_t **out, const pv *a, const uint64_t *shape, int ndim, const char *what)
{
	const pv *dims, *data;
	json_t *list = NULL, *e = NULL;
	uint64_t total = 1;
	size_t k;
	int d, err = 0;
	if (a->kind != PV_ARRAY || !a->state)
		return nz__error_set(NZ_EUNSUPPORTED, "%s: the pickle does not hold a numpy object array", what);
	dims = a->state->items[1];
	data = a->state->items[4];
	if (dims->nitems != (size_t)ndim)
		return nz__error_set(NZ_EFORMAT, "%s: the pickled array has %zu dimensions, the chunk %d", what,
				     dims->nitems, ndim);
	for (d = 0; d < ndim; d++) {
		if ((uint64_t)dims->items[d]->i != shape[d])
			return nz__error_set(NZ_EFORMAT, "%s: the pickled array's dimension %d is %lld, the chunk's %llu",
					     what, d, (long long)dims->items[d]->i, (unsigned long long)shape[d]);
		if (shape[d] && total > UINT64_MAX / shape[d])
			return nz__error_set(NZ_EFORMAT, "%s: the chunk's size overflows", what);
		total *= shape[d];
	}
	if (data->nitems != total)
		return nz__error_set(NZ_EFORMAT, "%s: the pickled array holds %zu elements, its shape %llu", what,
				     data->nitems, (unsigned long long)total);
	if (!(list = json_array()))
		return nz__error_set(NZ_ENOMEM, "%s: out of memory decoding a pickle", what);
	for (k = 0; k < data->nitems; k++) {
		if ((err = to_json(&e, data->items[k], k, what)) < 0)
			break;
		if (json_array_append_new(list, e) < 0) {
			err = nz__error_set(NZ_ENOMEM, "%s: out of memory decoding a pickle", what);
			break;
		}
	}
	if (err < 0) {
		json_decref(list);
		return err;
	}
	*out = list;
	return 0;
}

int nz__pickle_decode(json_t **out, const void *data, size_t len, const uint64_t *shape, int ndim,
		      const char *what)
{
	vm m;
	int err = 0, stopped = 0;
	*out = NULL;
	memset(&m, 0, sizeof m);
	m.p = data;
	m.len = len;
	m.what = what;
	m.max_weight = len > (SIZE_MAX - 4096) / NZ__PICKLE_MAX_GROWTH ? SIZE_MAX
									 : len * NZ__PICKLE_MAX_GROWTH + 4096;
	if (len < 2 || m.p[0] != 0x80)
		err = nz__error_set(NZ_EFORMAT, "%s: not a pickle (no PROTO opcode at the start)", what);
	while (!err && !stopped) {
		if (m.pos == m.len) {
			err = nz__error_set(NZ_EFORMAT, "%s: pickle ends without STOP", what);
			break;
		}
		if (m.p[m.pos] == '.') {
			m.at = m.pos++;
			m.op = '.';
			stopped = 1;
			if (m.sp != 1 || m.nmarks)
				err = fail(&m, NZ_EFORMAT, "%zu values and %zu marks left (expected one array)", m.sp,
					   m.nmarks);
			else if (m.pos != m.len)
				err = fail(&m, NZ_EFORMAT, "%zu bytes after the end", m.len - m.pos);
			break;
		}
		err = step(&m);
	}
	if (!err)
		err = result(out, m.stack[0], shape, ndim, what);
	while (m.all) {
		pv *next = m.all->next;
		if (m.all->kind != PV_DTYPE)
			nz__free(m.all->s);
		nz__free(m.all->items);
		nz__free(m.all);
		m.all = next;
	}
	nz__free(m.stack);
	nz__free(m.memo);
	nz__free(m.marks);
	return err;
}
