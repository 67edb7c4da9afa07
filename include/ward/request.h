/* ward/request.h — the agent tool's request and result as JSON.
 *
 * A request is `{"command": "...", "workdir": "...", "timeout": 120}`:
 * command a non-empty string (run with /bin/sh -c), workdir an optional
 * string, timeout an optional integer number of seconds ≥ 1. Every malformed
 * input is refused with InvalidParameters and a message naming what is wrong
 * (the JSON error's line and column, the field, the type it should have).
 * Unknown fields are refused too, so that a misspelt "timout" is not silently
 * ignored.
 */
#ifndef WARD_REQUEST_H
#define WARD_REQUEST_H

#include <stdbool.h>
#include <stddef.h>

#include "ward/error.h"
#include "ward/sandbox.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Requests larger than this are refused. */
#define WARD_REQUEST_MAX (1024 * 1024)

/* A "command" run with /bin/sh -c must be shorter than this (the kernel's
 * MAX_ARG_STRLEN, 32 pages of 4 KiB, for one argument of execve()); a longer
 * one is refused by ward_request_parse(). */
#define WARD_SHELL_COMMAND_MAX (32 * 4096)

struct ward_request {
	char *command;
	char *workdir;    /* NULL if not given */
	long long timeout; /* 0 if not given */
	bool approved;    /* "approved": true */
	bool no_shell;    /* "shell": false — run without a shell (ward_run_noshell) */
	bool bash;        /* "shell": "bash" — run with /bin/bash -c, validated as bash */
};

/* Parse text[0..len) into req (zeroed first). Returns 0, or -1 with an
 * InvalidParameters error. On failure req holds nothing to release. */
WARD_API int ward_request_parse(const char *text, size_t len, struct ward_request *req,
				struct ward_error **err);

WARD_API void ward_request_release(struct ward_request *req);

/* At most this many change set entries are listed in a result's
 * workdir.changes.entries; "count" and "entries_omitted" say the rest. */
#define WARD_RESULT_MAX_CHANGES 1000

/* The result as one JSON object (no trailing newline), malloc'd; NULL on
 * allocation failure. Output that is not valid UTF-8 is repaired with U+FFFD. */
WARD_API char *ward_result_to_json(const struct ward_result *res);

/* A result object for an error that happened before anything ran
 * (a malformed request, say). */
WARD_API char *ward_error_to_result_json(const struct ward_error *err);

/* Copy s[0..len) replacing each byte that is not part of valid UTF-8 with
 * U+FFFD. Returns malloc'd text and its length in *out_len. */
WARD_API char *ward_utf8_sanitize(const char *s, size_t len, size_t *out_len);

/* ---- text for a person's terminal ---------------------------------------------
 *
 * What a command wrote (file names, contents, its own command line) must not
 * drive the terminal of the person reading ward's output: an ESC sequence can
 * move the cursor, erase or rewrite lines of the very diff under review, set
 * the window title, or (some terminals) answer back into the input. These
 * functions make such text inert and visible. Machine output (JSON) never goes
 * through them: it stays exact. Pure. */

/* Flags of ward_text_escape(). */
enum {
	/* Text shown as lines (a diff, a file's contents): '\n' and '\t' stay as
	 * they are, and so does a backslash. Without it (a name, one line): they
	 * are escaped too (as \n, \t and \\), so the result is one line and
	 * unambiguous. */
	WARD_ESCAPE_MULTILINE = 1u << 0,
};

/* The longest ward_text_escape_buf() makes of len bytes ("\xNN" for each). */
#define WARD_ESCAPE_MAX(len) ((len) * 4 + 1)

/* Escape s[0..len) into out, which holds WARD_ESCAPE_MAX(len) bytes; out is
 * NUL-terminated, the length written returned. C0 controls and DEL become
 * "\a", "\b", "\t", "\n", "\v", "\f", "\r" or "\xNN" ("\x1b" for ESC); each
 * byte that is not part of valid UTF-8 becomes "\xNN"; C1 controls
 * (U+0080..U+009F) and the invisible marks that reorder or break displayed
 * text (U+061C, U+200E, U+200F, U+2028, U+2029, U+202A..U+202E,
 * U+2066..U+2069) become "\uXXXX". Everything else is copied. When final is
 * false (a chunk of a stream) and s ends inside what may still become a valid
 * UTF-8 sequence, those last bytes (at most 3) are left: *used says how many
 * bytes were consumed (len otherwise). used may be NULL. */
WARD_API size_t ward_text_escape_buf(const char *s, size_t len, unsigned flags, bool final,
				     char *out, size_t *used);

/* The same, malloc'd (NULL on allocation failure); s NULL is "". */
WARD_API char *ward_text_escape(const char *s, size_t len, unsigned flags);

#ifdef __cplusplus
}
#endif
#endif
