/* error.c — struct ward_error: make, prefix, free, and carry over a pipe. */
#include "ward/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int ward_error_makev(struct ward_error **err, enum ward_error_kind kind, int errnum,
		     const char *fmt, va_list ap)
{
	struct ward_error *e;
	size_t n;

	if (!err)
		return -1;
	e = *err;
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e)
			return -1; /* nothing better to do: the caller still sees failure */
		*err = e;
	}
	e->kind = kind;
	e->code = errnum;
	e->rule[0] = '\0';
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	if (errnum) {
		char buf[128];
		const char *s = strerror_r(errnum, buf, sizeof(buf));

		n = strlen(e->message);
		snprintf(e->message + n, sizeof(e->message) - n, ": %s", s);
	}
	return -1;
}

int ward_error_make(struct ward_error **err, int errnum, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ward_error_makev(err, WARD_ERR_EXECUTION_FAILED, errnum, fmt, ap);
	va_end(ap);
	return -1;
}

int ward_error_make_kind(struct ward_error **err, enum ward_error_kind kind, int errnum,
			 const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ward_error_makev(err, kind, errnum, fmt, ap);
	va_end(ap);
	return -1;
}

void ward_error_set_rule(struct ward_error *err, const char *rule)
{
	if (err)
		snprintf(err->rule, sizeof(err->rule), "%s", rule ? rule : "");
}

void ward_error_prefix(struct ward_error *err, const char *fmt, ...)
{
	char joined[2 * WARD_ERROR_MESSAGE_MAX + 2];
	va_list ap;
	int n;

	if (!err)
		return;
	va_start(ap, fmt);
	n = vsnprintf(joined, WARD_ERROR_MESSAGE_MAX, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n >= WARD_ERROR_MESSAGE_MAX)
		n = WARD_ERROR_MESSAGE_MAX - 1;
	memcpy(joined + n, ": ", 2);
	memcpy(joined + n + 2, err->message, strnlen(err->message, WARD_ERROR_MESSAGE_MAX - 1) + 1);
	joined[WARD_ERROR_MESSAGE_MAX - 1] = '\0';
	memcpy(err->message, joined, WARD_ERROR_MESSAGE_MAX);
}

void ward_error_free(struct ward_error *err)
{
	free(err);
}

const char *ward_error_kind_name(enum ward_error_kind kind)
{
	switch (kind) {
	case WARD_ERR_EXECUTION_FAILED:
		return "ExecutionFailed";
	case WARD_ERR_INVALID_PARAMETERS:
		return "InvalidParameters";
	case WARD_ERR_NOT_AUTHORIZED:
		return "NotAuthorized";
	case WARD_ERR_APPROVAL_REQUIRED:
		return "ApprovalRequired";
	case WARD_ERR_RATE_LIMITED:
		return "RateLimited";
	case WARD_ERR_TIMEOUT:
		return "Timeout";
	}
	return "ExecutionFailed";
}

int ward_error_write(int fd, const struct ward_error *err)
{
	ssize_t n;

	/* sizeof(struct ward_error) is below PIPE_BUF's 4096, so one write to a
	 * pipe is atomic and never interleaves with another writer. */
	do
		n = write(fd, err, sizeof(*err));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	if ((size_t)n != sizeof(*err)) {
		errno = EIO;
		return -1;
	}
	return 0;
}

int ward_error_read(int fd, struct ward_error *out)
{
	size_t got = 0;

	while (got < sizeof(*out)) {
		ssize_t n = read(fd, (char *)out + got, sizeof(*out) - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0) {
			if (got == 0)
				return 0;
			errno = EPROTO;
			return -1;
		}
		got += (size_t)n;
	}
	out->message[sizeof(out->message) - 1] = '\0';
	out->rule[sizeof(out->rule) - 1] = '\0';
	return 1;
}
