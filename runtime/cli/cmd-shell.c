/* cmd-shell.c — `ward shell`: a session for people. Each line is a command in
 * the session; a few lines are the session's own (alias, unalias, export,
 * unset, env, history, !N, exit), since a shell started per command could
 * not keep them. On a terminal, lines are edited in raw mode (left, right,
 * home, end, backspace, delete, up and down through the history, ^A ^E ^U ^K
 * ^C ^D); otherwise lines are read as they come. The editor is small enough
 * that a readline dependency would cost more than it gives. */
#include <ctype.h>
#include <signal.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "runtime/cli/cli-internal.h"
#include "runtime/cli/serve-internal.h"
#include "runtime/util/util-internal.h"
#include "ward/env.h"
#include "ward/session.h"

#define LINE_MAX_ 65536

/* SIGTERM and SIGHUP end the shell as `exit` does, closing the session. */
static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void on_interrupt(int sig)
{
	(void)sig;
}

/* ---- the line editor ------------------------------------------------------- */

struct editor {
	struct termios saved;
	bool raw;
	char **hist;      /* lines entered, for up/down */
	size_t n_hist;
};

static void raw_on(struct editor *ed)
{
	struct termios t;

	if (tcgetattr(0, &ed->saved) < 0)
		return;
	t = ed->saved;
	t.c_lflag &= ~(tcflag_t)(ECHO | ICANON | IEXTEN | ISIG);
	t.c_iflag &= ~(tcflag_t)(IXON | ICRNL | BRKINT | INPCK | ISTRIP);
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	if (tcsetattr(0, TCSADRAIN, &t) == 0) /* keys typed ahead are kept */
		ed->raw = true;
}

static void raw_off(struct editor *ed)
{
	if (ed->raw)
		tcsetattr(0, TCSADRAIN, &ed->saved);
	ed->raw = false;
}

static void redraw(const char *prompt, const char *buf, size_t len, size_t pos)
{
	char esc[32];

	ward_write_all(1, "\r\x1b[K", 4);
	ward_write_all(1, prompt, strlen(prompt));
	ward_write_all(1, buf, len);
	if (len > pos) {
		snprintf(esc, sizeof(esc), "\x1b[%zuD", len - pos);
		ward_write_all(1, esc, strlen(esc));
	}
}

/* Keys typed while the terminal's late answers were read (see print_result
 * in the loop): the line editor's first input. */
static char typed_ahead[8192]; /* a terminal queues 4 KiB at most */
static size_t n_typed_ahead, typed_ahead_at;

static int read_key(void)
{
	unsigned char c;
	ssize_t n;

	if (typed_ahead_at < n_typed_ahead)
		return (unsigned char)typed_ahead[typed_ahead_at++];
	do
		n = read(0, &c, 1);
	while (n < 0 && errno == EINTR && !stop_requested);
	return n == 1 ? c : -1;
}

/* Edit one line on the terminal. Returns malloc'd text, NULL at ^D on an
 * empty line. */
static char *edit_line(struct editor *ed, const char *prompt)
{
	char *buf = calloc(1, LINE_MAX_ + 1);
	size_t len = 0, pos = 0, hpos = ed->n_hist;

	if (!buf)
		return NULL;
	raw_on(ed);
	redraw(prompt, buf, len, pos);
	for (;;) {
		int c = read_key();

		if (c < 0 || (c == 4 && len == 0)) { /* end of input, ^D */
			free(buf);
			buf = NULL;
			break;
		}
		if (c == '\r' || c == '\n')
			break;
		if (c == 3) { /* ^C: a fresh line */
			len = pos = 0;
			ward_write_all(1, "^C\r\n", 4);
		} else if (c == 127 || c == 8) {
			if (pos > 0) {
				memmove(buf + pos - 1, buf + pos, len - pos);
				pos--;
				len--;
			}
		} else if (c == 1) {
			pos = 0;
		} else if (c == 5) {
			pos = len;
		} else if (c == 21) { /* ^U */
			memmove(buf, buf + pos, len - pos);
			len -= pos;
			pos = 0;
		} else if (c == 11) { /* ^K */
			len = pos;
		} else if (c == 27) {
			int a = read_key(), b = a == '[' || a == 'O' ? read_key() : -1;

			if (b >= '0' && b <= '9') { /* ESC [ 3 ~ and the like */
				int t = read_key();

				if (b == '3' && t == '~' && pos < len) {
					memmove(buf + pos, buf + pos + 1, len - pos - 1);
					len--;
				} else if ((b == '1' || b == '7') && t == '~') {
					pos = 0;
				} else if ((b == '4' || b == '8') && t == '~') {
					pos = len;
				}
			} else if (b == 'D' && pos > 0) {
				pos--;
			} else if (b == 'C' && pos < len) {
				pos++;
			} else if (b == 'H') {
				pos = 0;
			} else if (b == 'F') {
				pos = len;
			} else if ((b == 'A' && hpos > 0) || (b == 'B' && hpos < ed->n_hist)) {
				hpos += b == 'A' ? (size_t)-1 : 1;
				if (hpos == ed->n_hist) {
					len = 0;
				} else {
					len = strlen(ed->hist[hpos]);
					if (len > LINE_MAX_)
						len = LINE_MAX_;
					memcpy(buf, ed->hist[hpos], len);
				}
				pos = len;
			}
		} else if (c >= 32 && len < LINE_MAX_) {
			memmove(buf + pos + 1, buf + pos, len - pos);
			buf[pos++] = (char)c;
			len++;
		}
		buf[len] = '\0';
		redraw(prompt, buf, len, pos);
	}
	if (buf)
		buf[len] = '\0';
	ward_write_all(1, "\r\n", 2);
	raw_off(ed);
	return buf;
}

static char *read_plain(void)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n = stop_requested ? -1 : getline(&line, &cap, stdin);

	if (n < 0 || stop_requested) {
		free(line);
		return NULL;
	}
	if (n > 0 && line[n - 1] == '\n')
		line[n - 1] = '\0';
	return line;
}

/* ---- the session's own commands ------------------------------------------------ */

/* At a terminal (the line editor in use). */
static bool at_tty;

static void print_result(const struct ward_session_result *r)
{
	struct ward_tty_scan q = { 0 };

	fflush(stdout);
	ward_write_all(1, r->run.output, r->run.output_len);
	/* The terminal's late answers to what this asked are not keys for the
	 * next line; the keys typed ahead meanwhile are, after those the
	 * editor has not read yet. */
	if (at_tty)
		ward_tty_scan(&q, r->run.output, r->run.output_len);
	if (q.asked) {
		n_typed_ahead -= typed_ahead_at;
		memmove(typed_ahead, typed_ahead + typed_ahead_at, n_typed_ahead);
		typed_ahead_at = 0;
		n_typed_ahead += ward_tty_take_answers(0, typed_ahead + n_typed_ahead,
						       sizeof(typed_ahead) - n_typed_ahead,
						       ward_tty_owed(&q));
	}
	if (r->run.output_len && r->run.output[r->run.output_len - 1] != '\n')
		ward_write_all(1, "\n", 1);
	if (r->run.error)
		fprintf(stderr, "ward: %s\n", ward_shown(r->run.error->message));
	if (r->cwd_refused)
		fprintf(stderr, "ward: the session stays in '%s': '%s' is outside the policy\n",
			ward_shown(r->cwd), ward_shown(r->cwd_refused));
}

static void print_history(struct ward_session *s, enum ward_history_match how, const char *q)
{
	struct ward_history_entry *h = NULL;
	struct ward_error *err = NULL;
	size_t n = 0, i;

	if (ward_session_history(s, how, q, 0, &h, &n, &err) < 0) {
		fprintf(stderr, "ward: %s\n", ward_shown(err->message));
		ward_error_free(err);
		return;
	}
	for (i = 0; i < n; i++)
		printf("%5llu  %3d  %s\n", (unsigned long long)h[i].id, h[i].exit_code,
		       ward_shown(h[i].command));
	ward_history_free(h, n);
}

/* NAME=VALUE with VALUE optionally quoted once, as people type it. */
static bool split_assignment(char *arg, char **name, char **value)
{
	char *eq = strchr(arg, '=');
	size_t vl;

	if (!eq || eq == arg)
		return false;
	*eq = '\0';
	*name = arg;
	*value = eq + 1;
	vl = strlen(*value);
	if (vl >= 2 && ((*value)[0] == '\'' || (*value)[0] == '"') && (*value)[vl - 1] == (*value)[0]) {
		(*value)[vl - 1] = '\0';
		(*value)++;
	}
	return true;
}

/* Returns 1 when the line was one of ours, 0 when it is a command to run,
 * -1 to leave. */
static int builtin(struct ward_session *s, char *line)
{
	struct ward_error *err = NULL;
	char *rest, *name, *value;
	int rc = 0;

	while (*line == ' ' || *line == '\t')
		line++;
	if (strcmp(line, "exit") == 0 || strcmp(line, "logout") == 0)
		return -1;
	if (line[0] == '!' && isdigit((unsigned char)line[1])) {
		struct ward_session_result r;
		char *end;
		unsigned long long id = strtoull(line + 1, &end, 10);

		if (*end)
			return 0;
		if (ward_session_replay(s, id, NULL, &r, &err) == 0) {
			print_result(&r);
			ward_session_result_release(&r);
		}
		goto done;
	}
	if (strcmp(line, "history") == 0) {
		print_history(s, WARD_HISTORY_ALL, NULL);
		return 1;
	}
	if (strncmp(line, "history ", 8) == 0) {
		rest = line + 8;
		if (strncmp(rest, "-p ", 3) == 0)
			print_history(s, WARD_HISTORY_PREFIX, rest + 3);
		else
			print_history(s, WARD_HISTORY_SUBSTRING, rest);
		return 1;
	}
	if (strcmp(line, "alias") == 0 || strcmp(line, "env") == 0) {
		char **v = line[0] == 'a' ? ward_session_aliases(s) : ward_session_env(s);
		size_t i;

		for (i = 0; v && v[i]; i++)
			printf("%s%s\n", line[0] == 'a' ? "alias " : "", ward_shown(v[i]));
		ward_env_free(v);
		return 1;
	}
	if (strncmp(line, "alias ", 6) == 0 && split_assignment(line + 6, &name, &value)) {
		rc = ward_session_alias_set(s, name, value, &err);
		goto done;
	}
	if (strncmp(line, "unalias ", 8) == 0) {
		rc = ward_session_alias_remove(s, line + 8, &err);
		goto done;
	}
	if (strncmp(line, "export ", 7) == 0 && !strpbrk(line + 7, " \t;&|") &&
	    split_assignment(line + 7, &name, &value)) {
		rc = ward_session_setenv(s, name, value, &err);
		goto done;
	}
	if (strncmp(line, "unset ", 6) == 0 && !strpbrk(line + 6, " \t;&|")) {
		rc = ward_session_unsetenv(s, line + 6, &err);
		goto done;
	}
	return 0;
done:
	if (rc < 0 || err) {
		fprintf(stderr, "ward: %s\n", err ? ward_shown(err->message) : "failed");
		ward_error_free(err);
	}
	return 1;
}

/* The person at the terminal approves a command that needs approval. */
static bool ask_person(void *ctx, const char *command, const struct ward_verdict *v)
{
	char answer[16] = "";

	(void)ctx;
	/* only what is typed once the question shows answers it */
	tcflush(0, TCIFLUSH);
	__fpurge(stdin); /* the rest of an earlier answer's line, read ahead */
	n_typed_ahead = typed_ahead_at = 0;
	fprintf(stderr, "ward: '%s' needs approval (%s). Run it? [y/N] ", ward_shown(command),
		ward_shown(v->rule ? v->rule : ""));
	fflush(stderr);
	if (!fgets(answer, sizeof(answer), stdin))
		return false;
	return answer[0] == 'y' || answer[0] == 'Y';
}

static const char usage[] =
	"usage: ward shell [options]\n"
	"\n"
	"An interactive session: each line runs in the sandbox; environment, aliases,\n"
	"history and the directory persist. Own commands: alias [NAME=VALUE],\n"
	"unalias NAME, export NAME=VALUE, unset NAME, env, history [-p PREFIX|TEXT],\n"
	"!N (run entry N again), exit.\n"
	"\n"
	"  -C, --workdir DIR      the session's workdir (default: current directory)\n"
	"  -t, --timeout SECONDS  per command (default 30)\n"
	"      --isolation MODE   fresh (a sandbox per command) or shared (one, faster)\n"
	"      --shell SHELL      sh or bash: the shell that runs each line and the\n"
	"                         validators read (default: bash where installed)\n"
	"      --empty-env        start with no variables\n"
	"      --sandbox MODE     required (default) or off\n"
	"      --policy FILE | --no-policy\n";

int ward_cmd_shell(int argc, char **argv)
{
	struct serve_options o;
	struct ward_session_options opt;
	struct ward_config cfg;
	struct ward_session *s = NULL;
	struct ward_error *err = NULL;
	struct editor ed;
	bool help, tty = isatty(0) && isatty(1);
	int status = 0;

	at_tty = tty;
	memset(&ed, 0, sizeof(ed));
	if (serve_options_parse(argc, argv, &o, &help, &err) < 0) {
		fprintf(stderr, "ward shell: %s\ntry 'ward shell --help'\n", ward_shown(err->message));
		ward_error_free(err);
		return WARD_EXIT_OWN_ERROR;
	}
	if (help) {
		fputs(usage, stdout);
		serve_options_release(&o);
		return 0;
	}
	ward_config_init(&cfg);
	/* a person types these: no rate limit unless the policy sets one */
	cfg.rate_per_minute = cfg.rate_per_hour = 0;
	ward_session_options_init(&opt);
	if (serve_config(&o, &cfg, &err) < 0 || ward_session_options_from_config(&cfg, &opt, &err) < 0)
		goto fail;
	serve_session_defaults(&o, &opt);
	if (ward_session_new(&cfg, &opt, &s, &err) < 0)
		goto fail;
	{
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_stop; /* no SA_RESTART: a read in progress returns */
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
		/* ^C and ^\ never end the shell. Caught, not ignored: an ignored
		 * signal is dropped, and forwarding reads it while blocked. */
		sa.sa_handler = on_interrupt;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGQUIT, &sa, NULL);
	}

	for (;;) {
		struct ward_session_result r;
		char *line, *pwd, prompt[PATH_MAX + 16];
		int b;

		pwd = ward_session_pwd(s);
		snprintf(prompt, sizeof(prompt), "ward:%s$ ", pwd ? pwd : "?");
		free(pwd);
		line = tty ? edit_line(&ed, prompt) : read_plain();
		if (!line || stop_requested) {
			free(line);
			break;
		}
		if (!line[strspn(line, " \t")]) {
			free(line);
			continue;
		}
		if (tty) {
			char **g = realloc(ed.hist, (ed.n_hist + 1) * sizeof(*g));

			if (g) {
				ed.hist = g;
				ed.hist[ed.n_hist++] = strdup(line);
			}
		}
		b = builtin(s, line);
		if (b < 0) {
			free(line);
			break;
		}
		if (b == 0) {
			/* ^C stops the command, not the shell: forwarded to a fresh
			 * sandbox's command; a shared sandbox's runs on to its end. */
			struct ward_session_exec_options eo = { .ask = tty ? ask_person : NULL,
								.forward_signals = true };
			int rc = ward_session_exec(s, line, &eo, &r, &err);

			if (rc < 0) {
				fprintf(stderr, "ward: %s\n", ward_shown(err->message));
				ward_error_free(err);
				err = NULL;
				status = WARD_EXIT_OWN_ERROR;
			} else {
				print_result(&r);
				status = r.run.exit_code;
				ward_session_result_release(&r);
			}
		}
		fflush(stdout);
		free(line);
	}
	while (ed.n_hist)
		free(ed.hist[--ed.n_hist]);
	free(ed.hist);
	ward_session_free(s);
	ward_session_options_release(&opt);
	serve_options_release(&o);
	return status;
fail:
	fprintf(stderr, "ward shell: %s\n", ward_shown(err->message));
	ward_error_free(err);
	ward_session_options_release(&opt);
	ward_config_release(&cfg);
	serve_options_release(&o);
	return WARD_EXIT_OWN_ERROR;
}
