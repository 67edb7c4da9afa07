/* ward/error.h — the one error idiom of libward.
 *
 * How to use this:
 *
 *     struct ward_error *err = NULL;
 *     if (ward_something(..., &err) < 0) {
 *             fprintf(stderr, "ward: %s\n", err->message);
 *             ward_error_free(err);
 *     }
 *
 * Every fallible function takes `struct ward_error **err` last and returns a
 * negative value (or NULL) on failure, having filled *err. Callers that do not
 * care may pass NULL. Messages follow one style: lowercase, no final period,
 * what failed first with its subject quoted, then the errno text:
 * "open '/etc/x': No such file or directory".
 *
 * An error is a fixed-size plain object, so the sandbox's init can write it to
 * the supervisor over a pipe as it is (ward_error_write / ward_error_read) and
 * a failure inside the child is reported precisely.
 */
#ifndef WARD_ERROR_H
#define WARD_ERROR_H

#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WARD_API __attribute__((visibility("default")))

/* The kinds a result's error can have: the "error" of a result object
 * (ward_result_to_json), one per way a command can fail to run or finish. */
enum ward_error_kind {
	WARD_ERR_EXECUTION_FAILED = 0, /* a layer could not be set up, or ward failed */
	WARD_ERR_INVALID_PARAMETERS,   /* the request or an option is wrong */
	WARD_ERR_NOT_AUTHORIZED,       /* a validator refused the command */
	WARD_ERR_APPROVAL_REQUIRED,    /* the command needs explicit approval */
	WARD_ERR_RATE_LIMITED,         /* over the per-user rate limit */
	WARD_ERR_TIMEOUT,              /* the command ran out of time */
};

#define WARD_ERROR_MESSAGE_MAX 1024
#define WARD_ERROR_RULE_MAX 128

struct ward_error {
	enum ward_error_kind kind;
	int code;                              /* errno value, 0 if none */
	char rule[WARD_ERROR_RULE_MAX];        /* rule id that matched, or "" */
	char message[WARD_ERROR_MESSAGE_MAX];  /* full message, errno text included */
};

/* Fill *err with an ExecutionFailed error. `errnum` (0 for none) is kept in
 * ->code and its strerror text appended to the message after ": ".
 * If *err is NULL a new object is allocated; if it already points to one, that
 * object is overwritten in place (code that must not allocate, such as the
 * sandbox's init, passes preallocated storage). `err` may be NULL.
 * Returns -1, so that `return ward_error_make(err, errno, "open '%s'", p);`
 * is the usual way to fail. */
WARD_API int ward_error_make(struct ward_error **err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The same with an explicit kind. */
WARD_API int ward_error_make_kind(struct ward_error **err, enum ward_error_kind kind,
				  int errnum, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

WARD_API int ward_error_makev(struct ward_error **err, enum ward_error_kind kind, int errnum,
			      const char *fmt, va_list ap) __attribute__((format(printf, 4, 0)));

/* Set the rule id of an existing error (truncated to WARD_ERROR_RULE_MAX - 1). */
WARD_API void ward_error_set_rule(struct ward_error *err, const char *rule);

/* Prefix the message with "PREFIX: " (context added by a caller). */
WARD_API void ward_error_prefix(struct ward_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Free an error made by ward_error_make(); NULL is fine. */
WARD_API void ward_error_free(struct ward_error *err);

/* The name of a kind as the result's JSON spells it ("ExecutionFailed", ...). */
WARD_API const char *ward_error_kind_name(enum ward_error_kind kind);

/* Write an error to fd in one write (async-signal-safe). Returns 0 or -1 (errno). */
WARD_API int ward_error_write(int fd, const struct ward_error *err);

/* Read one error written by ward_error_write(). Returns 1 and fills *out when
 * an error was read, 0 at end of file (the writer closed without error), -1 on a
 * read failure or short record (errno set; EPROTO for a short record). */
WARD_API int ward_error_read(int fd, struct ward_error *out);

#ifdef __cplusplus
}
#endif
#endif
