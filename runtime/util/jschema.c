/* jschema.c — JSON input checked against its shape by jansson's
 * json_unpack_ex() (JSON_STRICT), its errors worded once; pure code. */
#include "runtime/util/util-internal.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>


#define DEPTH_MAX 8
#define KEYS_MAX 48

/* One object or array of the format, open at the failing token. */
struct frame {
	bool object;
	const char *key;          /* the key whose value it is (NULL: array element or top) */
	size_t index;             /* in the parent array */
	const char *keys[KEYS_MAX + 1];
	size_t n_keys;
};

/* Where the format stood at jansson's error position. */
struct spot {
	struct frame f[DEPTH_MAX];
	int depth;                /* open frames */
	const char *key;          /* the key of the failing value, in an object */
	char token;               /* the format's character there */
	bool found;
};

/* "an object", "a string"…: what a JSON value is, for messages. */
const char *ward_json_type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a number with a fraction or an exponent";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
		return "null";
	}
	return "something else";
}

/* What a format character asks for. */
static const char *wanted(char t)
{
	switch (t) {
	case 's':
		return "a string";
	case 'b':
		return "a boolean";
	case 'i':
	case 'I':
		return "an integer";
	case 'f':
		return "a number with a fraction";
	case 'F':
		return "a number";
	case 'n':
		return "null";
	case '{':
		return "an object";
	case '[':
		return "an array";
	}
	return "something else";
}

/* Walk the format (jansson's grammar for unpacking, whitespace, ':' and ','
 * ignored) with the arguments up to the 1-based position pos, where jansson
 * stopped. Every unpack argument is a pointer, so the arguments can be
 * stepped over as void *. */
static void walk(const char *fmt, int pos, va_list ap, struct spot *sp)
{
	const char *key = NULL;
	bool want_key = false;
	int i;

	memset(sp, 0, sizeof(*sp));
	for (i = 0; fmt[i]; i++) {
		char t = fmt[i];
		struct frame *top = sp->depth ? &sp->f[sp->depth - 1] : NULL;

		if (t == ' ' || t == '\t' || t == '\n' || t == ':' || t == ',')
			continue;
		if (t == '!' || t == '*' || t == '?' || t == '%')
			continue;
		if (want_key && t == 's') {
			key = va_arg(ap, const char *);
			if (top->n_keys < KEYS_MAX)
				top->keys[top->n_keys++] = key;
			want_key = false;
			continue;
		}
		if (i + 1 == pos || ((t == '}' || t == ']') && i + 1 > pos)) {
			sp->key = key;
			sp->token = t;
			sp->found = true;
			return;
		}
		switch (t) {
		case '{':
		case '[':
			if (sp->depth == DEPTH_MAX)
				return;
			memset(&sp->f[sp->depth], 0, sizeof(sp->f[0]));
			sp->f[sp->depth].object = t == '{';
			sp->f[sp->depth].key = top && top->object ? key : NULL;
			sp->f[sp->depth].index = top && !top->object ? top->index : 0;
			sp->depth++;
			want_key = t == '{';
			key = NULL;
			continue;
		case '}':
		case ']':
			sp->depth--;
			top = sp->depth ? &sp->f[sp->depth - 1] : NULL;
			break;
		case 'n':
			break;
		case 's':
			(void)va_arg(ap, void *);
			if (fmt[i + 1] == '%')
				(void)va_arg(ap, void *);
			break;
		default:
			(void)va_arg(ap, void *);
			break;
		}
		/* a value done: the next key, or the next element */
		if (top && top->object)
			want_key = true;
		else if (top)
			top->index++;
		key = top && top->object ? NULL : key;
	}
}

/* The path of the frames (1..n: below the top value), and the JSON value at
 * it; buf gets "a.b[2].c". */
static json_t *locate(json_t *root, const struct spot *sp, int n, const char *leaf,
		      char *buf, size_t size)
{
	json_t *v = root;
	size_t used = strlen(buf);
	int d;

	for (d = 1; d <= n && d < sp->depth + 1; d++) {
		const struct frame *parent = &sp->f[d - 1];
		const char *k = d < sp->depth ? sp->f[d].key : leaf;
		size_t idx = d < sp->depth ? sp->f[d].index : parent->index;
		int w;

		if (parent->object) {
			if (!k)
				break;
			w = snprintf(buf + used, size - used, "%s%s", used ? "." : "", k);
			v = json_object_get(v, k);
		} else {
			w = snprintf(buf + used, size - used, "[%zu]", idx);
			v = json_array_get(v, idx);
		}
		if (w < 0 || (size_t)w >= size - used)
			break;
		used += (size_t)w;
	}
	return v;
}

int ward_jschema_fail(const char *prefix, const char *path, struct ward_error **err,
		      const char *fmt, ...)
{
	char what[WARD_ERROR_MESSAGE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0, "%s%s%s%s%s",
				    prefix ? prefix : "", prefix ? ": " : "", path && *path ? path : "",
				    path && *path ? ": " : "", what);
}

int ward_jschema_unpack(json_t *v, const char *prefix, const char *path, struct ward_error **err,
			const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = ward_jschema_vunpack(v, prefix, path, err, fmt, ap);
	va_end(ap);
	return rc;
}

/* The key of the object at the frame that its format does not name, or NULL. */
static const char *unknown_key(json_t *obj, const struct frame *f)
{
	const char *k;
	json_t *member;

	if (!f->object || !json_is_object(obj))
		return NULL;
	json_object_foreach(obj, k, member) {
		bool known = false;
		size_t j;

		(void)member;
		for (j = 0; j < f->n_keys; j++)
			known = known || strcmp(f->keys[j], k) == 0;
		if (!known)
			return k;
	}
	return NULL;
}

/* The 1-based position of the '}' or ']' closing the frame open at pos. */
static int closing(const char *fmt, int pos)
{
	int depth = 0, i;

	for (i = pos; fmt[i]; i++) {
		if (fmt[i] == '{' || fmt[i] == '[')
			depth++;
		else if ((fmt[i] == '}' || fmt[i] == ']') && depth-- == 0)
			return i + 1;
	}
	return pos;
}

int ward_jschema_vunpack(json_t *v, const char *prefix, const char *path, struct ward_error **err,
			 const char *fmt, va_list ap)
{
	char where[256], valid[512];
	const char *unknown;
	json_error_t jerr;
	struct spot sp;
	json_t *at;
	va_list again, whole;
	int rc, code;

	/* the arguments once more, to find the key jansson stopped at */
	va_copy(again, ap);
	va_copy(whole, ap);
	rc = json_vunpack_ex(v, &jerr, JSON_STRICT, fmt, ap);
	if (rc == 0) {
		va_end(again);
		va_end(whole);
		return 0;
	}
	code = json_error_code(&jerr);
	walk(fmt, jerr.position, again, &sp);
	va_end(again);
	/* A key missing where an unknown one is given is most likely that key
	 * misspelt: name the unknown one, as jansson would at the object's end. */
	if (sp.found && code == json_error_item_not_found) {
		struct spot end;

		walk(fmt, closing(fmt, jerr.position), whole, &end);
		where[0] = '\0';
		at = locate(v, &end, end.depth - 1, NULL, where, sizeof(where));
		if (end.found && end.depth == sp.depth && unknown_key(at, &end.f[end.depth - 1])) {
			sp = end;
			code = json_error_end_of_input_expected;
		}
	}
	va_end(whole);
	snprintf(where, sizeof(where), "%s", path ? path : "");
	if (!sp.found)
		return ward_jschema_fail(prefix, where, err, "%s", jerr.text);
	switch (code) {
	case json_error_wrong_type:
		at = locate(v, &sp, sp.depth, sp.key, where, sizeof(where));
		return ward_jschema_fail(prefix, where, err, "must be %s, got %s",
					 wanted(sp.token), at ? ward_json_type_name(at) : "nothing");
	case json_error_item_not_found:
		locate(v, &sp, sp.depth, sp.key, where, sizeof(where));
		return ward_jschema_fail(prefix, where, err, "is missing");
	case json_error_end_of_input_expected:
		/* the valid keys too: a typo is fixed without the manual */
		at = locate(v, &sp, sp.depth - 1, NULL, where, sizeof(where));
		unknown = unknown_key(at, &sp.f[sp.depth - 1]);
		if (!unknown)
			return ward_jschema_fail(prefix, where, err, "%s", jerr.text);
		return ward_jschema_fail(prefix, where, err, "unknown key \"%s\" (valid: %s)",
					 unknown,
					 ward_names_join(sp.f[sp.depth - 1].keys, valid, sizeof(valid)));
	default:
		return ward_jschema_fail(prefix, where, err, "%s", jerr.text);
	}
}

void ward_jschema_drop_nulls(json_t *obj)
{
	const char *k;
	json_t *v;
	void *tmp;

	json_object_foreach_safe(obj, tmp, k, v)
		if (json_is_null(v))
			json_object_del(obj, k);
}

int ward_jschema_no_nul(json_t *obj, const char *prefix, struct ward_error **err)
{
	const char *k;
	json_t *v;

	json_object_foreach(obj, k, v)
		if (json_is_string(v) && strlen(json_string_value(v)) != json_string_length(v))
			return ward_jschema_fail(prefix, k, err, "must not contain NUL");
	return 0;
}
