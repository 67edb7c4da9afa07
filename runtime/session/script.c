/* script.c — the shell script a session's backend runs for one command (cd
 * to the session's directory, report where the command ended on fd 3), its
 * report read back, and the quoting both backends use. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/session/session-internal.h"
#include "runtime/util/util-internal.h"

char *ward_shell_quote(const char *s)
{
	size_t n = 2, i;
	char *out, *o;

	for (i = 0; s[i]; i++)
		n += s[i] == '\'' ? 4 : 1;
	out = malloc(n + 1);
	if (!out)
		return NULL;
	o = out;
	*o++ = '\'';
	for (i = 0; s[i]; i++) {
		if (s[i] == '\'') {
			memcpy(o, "'\\''", 4);
			o += 4;
		} else {
			*o++ = s[i];
		}
	}
	*o++ = '\'';
	*o = '\0';
	return out;
}

/* ---- the script -------------------------------------------------------------- */

char *ward_session_script(const struct ward_session *s, const struct session_job *job)
{
	_cleanup_free_ char *qcwd = ward_shell_quote(job->cwd);
	_cleanup_free_ char *qold = ward_shell_quote(job->oldpwd ? job->oldpwd : job->cwd);
	_cleanup_free_ char *qstart = ward_shell_quote(s->workdir);
	char *out = NULL;
	int rc;

	if (!qcwd || !qold || !qstart)
		return NULL;
	/* The trap: where the command ended and its OLDPWD, on fd 3. A directory
	 * removed under the shell reports an empty line (kept as it was). */
#define REPORT_TRAP                                                                                \
	"trap '{ [ -d \"$PWD\" ] && pwd -P || echo; printf \"%%s\\n\" \"$OLDPWD\"; } "           \
	">&3 2>/dev/null' EXIT; "
	/* On the command's first line, so that the shell's messages give the
	 * command's own line numbers. The trap reports where the command ended
	 * on fd 3; the shell keeps the command's exit status after it. */
	if (job->strict_cwd)
		rc = asprintf(&out,
			      "[ -n \"${HOME+x}\" ] || HOME=%s; cd -- %s || exit 1; OLDPWD=%s; "
			      REPORT_TRAP "%s",
			      qstart, qcwd, qold, job->command);
	else
		rc = asprintf(&out,
			      "[ -n \"${HOME+x}\" ] || HOME=%s; cd -- %s 2>/dev/null || "
			      "{ echo \"ward: directory \"%s\" is gone, back to \"%s >&2; "
			      "cd -- %s; }; OLDPWD=%s; "
			      REPORT_TRAP "%s",
			      qstart, qcwd, qcwd, qstart, qstart, qold, job->command);
	return rc < 0 ? NULL : out;
}

void ward_session_parse_cwd(const char *text, size_t len, struct session_outcome *out)
{
	const char *nl = memchr(text, '\n', len), *nl2;

	if (!nl || nl == text)
		return;
	out->cwd = strndup(text, (size_t)(nl - text));
	nl2 = memchr(nl + 1, '\n', len - (size_t)(nl + 1 - text));
	if (nl2 && nl2 > nl + 1)
		out->oldpwd = strndup(nl + 1, (size_t)(nl2 - nl - 1));
}
