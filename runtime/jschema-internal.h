/* jschema-internal.h — one checker of JSON input against its shape, for the
 * policy file, the request and the server's parameters.
 *
 * The shape is a jansson unpack format ("{s:s, s?I, s?o}"), checked by
 * json_unpack_ex() with JSON_STRICT: jansson checks the types, the required
 * keys and that no other key is present; this file only turns jansson's
 * error into one wording that names the key:
 *
 *     PREFIX: PATH.KEY: must be a string, got an integer
 *     PREFIX: PATH.KEY: is missing
 *     PREFIX: PATH: unknown key "k" (valid: a, b, c)
 *
 * PATH is the caller's path of the object (NULL at the top) followed by the
 * keys and [indices] of the format's nested objects and arrays. What a
 * format cannot say (a range, a non-empty string, one of several types) the
 * caller checks after, and words the same way with ward_jschema_fail(). */
#ifndef WARD_JSCHEMA_INTERNAL_H
#define WARD_JSCHEMA_INTERNAL_H

#include <jansson.h>
#include <stdarg.h>

#include "ward/error.h"

/* json_unpack_ex(v, fmt, ...) with JSON_STRICT. Every argument is a pointer
 * (keys, and where values go: 'b' takes an int *, 'I' a json_int_t *).
 * prefix and path may be NULL. Returns 0, or -1 with *err of kind
 * WARD_ERR_INVALID_PARAMETERS worded as above. */
int ward_jschema_unpack(json_t *v, const char *prefix, const char *path, struct ward_error **err,
			const char *fmt, ...);

/* The same, the arguments as a va_list (consumed). */
int ward_jschema_vunpack(json_t *v, const char *prefix, const char *path, struct ward_error **err,
			 const char *fmt, va_list ap);

/* An error in the same wording: "PREFIX: PATH: what". Returns -1. */
int ward_jschema_fail(const char *prefix, const char *path, struct ward_error **err,
		      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Remove the members of obj whose value is null: where null means "not
 * given" (the request, the server's parameters). */
void ward_jschema_drop_nulls(json_t *obj);

/* Fail on a string member of obj holding a NUL (\u0000): no command, path
 * or name can hold one. */
int ward_jschema_no_nul(json_t *obj, const char *prefix, struct ward_error **err);

#endif
