/* noshell.c — --no-shell mode (core-internal.h): plan in the supervisor,
 * run in the sandbox's init. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "runtime/core/core-internal.h"
#include "runtime/util/util-internal.h"
#include "ward/env.h"
#include "ward/request.h"

/* ---- supervisor side --------------------------------------------------------- */

static void seg_release(struct chain_seg *s, char *const base_env[])
{
	size_t i;

	if (s->argv)
		for (i = 0; s->argv[i]; i++)
			free(s->argv[i]);
	free(s->argv);
	if (s->envp && s->envp != base_env) {
		for (i = 0; i < s->n_own_env; i++)
			free(s->envp[i]);
		free(s->envp);
	}
	for (i = 0; i < s->n_redirs; i++)
		free(s->redirs[i].path);
	free(s->redirs);
}

struct chain_box {
	struct spawn_chain chain;
	char **base_env;
};

void ward_chain_free(struct spawn_chain *c)
{
	struct chain_box *b = (struct chain_box *)c;
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->n_segs; i++)
		seg_release(&c->segs[i], b->base_env);
	free(b);
}

static int expand(const struct ward_sh_word *w, char *const envp[], char **out, bool *dropped,
		  struct ward_error **err)
{
	return ward_sh_word_expand(w, envp, out, dropped, err);
}

static int build_seg(struct chain_seg *s, const struct ward_sh_segment *g, char **env,
		     struct ward_error **err)
{
	size_t i, n = 0, n_env = 0;
	char **seg_env = env;

	/* NAME=value before the command: the command's environment only */
	if (g->n_assigns) {
		while (env[n_env])
			n_env++;
		seg_env = calloc(g->n_assigns + n_env + 1, sizeof(*seg_env));
		if (!seg_env)
			return ward_error_make(err, ENOMEM, "no-shell plan");
		s->envp = seg_env;
		for (i = 0; i < g->n_assigns; i++) {
			/* expanded in the chain's environment, as the shell does */
			if (expand(&g->assigns[i], env, &seg_env[i], NULL, err) < 0)
				return -1;
			s->n_own_env = i + 1;
		}
		/* a later assignment of the same name wins in getenv(), which
		 * takes the first: put them last-first */
		for (i = 0; i < g->n_assigns / 2; i++) {
			char *t = seg_env[i];

			seg_env[i] = seg_env[g->n_assigns - 1 - i];
			seg_env[g->n_assigns - 1 - i] = t;
		}
		memcpy(seg_env + g->n_assigns, env, n_env * sizeof(*env));
	}
	s->envp = seg_env;
	s->path_env = ward_env_get(seg_env, "PATH");
	s->argv = calloc(g->n_words + 1, sizeof(*s->argv));
	if (!s->argv)
		return ward_error_make(err, ENOMEM, "no-shell plan");
	for (i = 0; i < g->n_words; i++) {
		bool dropped;
		char *a;

		if (expand(&g->words[i], seg_env, &a, &dropped, err) < 0)
			return -1;
		if (dropped) {
			free(a);
			continue;
		}
		s->argv[n++] = a;
	}
	if (n == 0)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "the command at %zu expands to nothing", g->off + 1);
	s->redirs = calloc(g->n_redirs ? g->n_redirs : 1, sizeof(*s->redirs));
	if (!s->redirs)
		return ward_error_make(err, ENOMEM, "no-shell plan");
	for (i = 0; i < g->n_redirs; i++) {
		const struct ward_sh_redir *r = &g->redirs[i];
		struct chain_redir *c = &s->redirs[s->n_redirs++];

		c->fd = r->fd;
		c->oflags = -1;
		switch (r->op) {
		case WARD_SH_R_DUP_IN:
		case WARD_SH_R_DUP_OUT:
			c->dup_fd = r->dup_fd;
			continue;
		case WARD_SH_R_IN:
			c->oflags = O_RDONLY;
			break;
		case WARD_SH_R_OUT:
		case WARD_SH_R_CLOBBER:
			c->oflags = O_WRONLY | O_CREAT | O_TRUNC;
			break;
		case WARD_SH_R_APPEND:
			c->oflags = O_WRONLY | O_CREAT | O_APPEND;
			break;
		case WARD_SH_R_RDWR:
			c->oflags = O_RDWR | O_CREAT;
			break;
		case WARD_SH_R_OUT_ERR:
			c->oflags = O_WRONLY | O_CREAT | O_TRUNC;
			c->both = true;
			break;
		case WARD_SH_R_APPEND_OUT_ERR:
			c->oflags = O_WRONLY | O_CREAT | O_APPEND;
			c->both = true;
			break;
		default: /* refused by ward_sh_chain_build */
			return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
						    "%s is not supported in --no-shell mode at %zu",
						    ward_sh_redir_str(r->op), r->off + 1);
		}
		c->oflags |= O_CLOEXEC | O_NOCTTY;
		if (expand(&r->target, seg_env, &c->path, NULL, err) < 0)
			return -1;
	}
	s->op = g->op;
	return 0;
}

struct spawn_chain *ward_chain_prepare(const char *command, char *const envp[],
				       struct ward_error **err)
{
	struct ward_sh_tree *t = NULL;
	struct ward_sh_chain *ch = NULL;
	struct chain_box *b = NULL;
	size_t i;

	/* the no-shell dialect is the parser's default: ward runs the chain
	 * itself, so `&>` means what bash makes it mean */
	if (ward_sh_parse(command, strlen(command), 0, &t, err) < 0)
		return NULL;
	if (ward_sh_chain_build(t, &ch, err) < 0)
		goto fail;
	if (ch->n_segs > CHAIN_MAX_SEGS) {
		ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
				     "more than %d commands in one --no-shell chain", CHAIN_MAX_SEGS);
		goto fail;
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		ward_error_make(err, ENOMEM, "no-shell plan");
		goto fail;
	}
	b->base_env = (char **)envp;
	for (i = 0; i < ch->n_segs; i++) {
		b->chain.n_segs = i + 1;
		if (build_seg(&b->chain.segs[i], &ch->segs[i], (char **)envp, err) < 0)
			goto fail;
	}
	ward_sh_chain_free(ch);
	ward_sh_tree_free(t);
	return &b->chain;
fail:
	if (b)
		ward_chain_free(&b->chain);
	ward_sh_chain_free(ch);
	ward_sh_tree_free(t);
	return NULL;
}

/* ---- child side: system calls only ------------------------------------------- */

static bool forwarded(int sig)
{
	return sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT ||
	       sig == SIGUSR1 || sig == SIGUSR2;
}

__attribute__((noreturn)) static void child_fail(const char *what, const char *subject, int e)
{
	/* a name the model wrote, shown inert (a stack buffer: the child
	 * allocates nothing) */
	char shown[WARD_ESCAPE_MAX(256)];

	ward_text_escape_buf(subject, strnlen(subject, 256), 0, true, shown, NULL);
	dprintf(2, "ward: %s '%s': %s\n", what, shown, strerror(e));
	_exit(1);
}

static int apply_redirs(const struct chain_seg *s)
{
	char num[16];

	for (size_t i = 0; i < s->n_redirs; i++) {
		const struct chain_redir *r = &s->redirs[i];

		if (r->oflags == -1) {
			if (r->dup_fd == -1) {
				close(r->fd);
			} else if (r->dup_fd != r->fd && dup2(r->dup_fd, r->fd) < 0) {
				snprintf(num, sizeof(num), "%d", r->dup_fd);
				child_fail("duplicate file descriptor", num, errno);
			} else if (r->dup_fd == r->fd && fcntl(r->fd, F_GETFD) < 0) {
				snprintf(num, sizeof(num), "%d", r->dup_fd);
				child_fail("duplicate file descriptor", num, errno);
			}
			continue;
		}
		int fd = open(r->path, r->oflags, 0666);

		if (fd < 0)
			child_fail("open", r->path, errno);
		if (fd != r->fd) {
			if (dup2(fd, r->fd) < 0)
				child_fail("open", r->path, errno);
			close(fd);
		} else {
			fcntl(fd, F_SETFD, 0); /* opened O_CLOEXEC onto the very fd */
		}
		if (r->both && dup2(r->fd, 2) < 0)
			child_fail("open", r->path, errno);
	}
	return 0;
}

__attribute__((noreturn)) static void run_seg(const struct spawn_plan *p, const struct chain_seg *s,
					      int in, int out, pid_t pgid)
{
	sigset_t none;
	int sig;

	for (sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	setpgid(0, pgid);
	/* The pipeline's first process puts it in the terminal's foreground,
	 * before its signals are unblocked (SIGTTOU) and before any of it can
	 * read: ^C typed goes to it. */
	if (p->tty && !pgid)
		tcsetpgrp(p->stdio[0], getpid());
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (in < 0)
		in = p->stdio[0] >= 0 ? p->stdio[0] : open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (in < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(p->stdio[2], 2) < 0) {
		dprintf(p->stdio[2], "ward: set up standard streams: %s\n", strerror(errno));
		_exit(WARD_EXIT_OWN_ERROR);
	}
	/* This child holds a copy of the runner's descriptors (init's report
	 * and life pipes, the pipeline's other ends), close-on-exec but not
	 * yet closed: a redirection naming one ("> /proc/self/fd/N", ">&N")
	 * would hand it to the program. Only 0-2 are the command's; the copy
	 * is this child's own (vfork shares memory, not the table). */
	syscall(SYS_close_range, 3u, ~0u, 0u);
	apply_redirs(s);
	ward_exec_argv(s->argv, s->envp, s->path_env);
}

int ward_wait_group(const pid_t *pids, size_t n, pid_t pgid)
{
	sigset_t all;
	size_t left = n;
	int last = 0;

	sigfillset(&all);
	while (left) {
		siginfo_t si;
		int sig = sigwaitinfo(&all, &si), status;
		pid_t pid;

		if (sig < 0)
			continue;
		if (forwarded(sig)) {
			kill(-pgid, sig);
			continue;
		}
		if (sig != SIGCHLD)
			continue;
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
			for (size_t i = 0; i < n; i++) {
				if (pids[i] != pid)
					continue;
				left--;
				if (i == n - 1)
					last = status;
			}
		}
	}
	return last;
}

static pid_t pids_storage[CHAIN_MAX_SEGS];

/* vfork in a frame of its own: the caller's loop variables stay out of the
 * part of the stack the child runs on. */
__attribute__((noinline)) static pid_t spawn_seg(const struct spawn_plan *p,
						 const struct chain_seg *s, int in, int out,
						 pid_t pgid)
{
	pid_t pid = vfork();

	if (pid == 0)
		run_seg(p, s, in, out, pgid);
	return pid;
}

int ward_chain_run(const struct spawn_plan *p)
{
	const struct spawn_chain *c = p->chain;
	size_t i = 0, j, k;
	int status = 0;
	bool skip = false;

	/* The runner (init, or the direct child) is a session leader: the
	 * command's terminal becomes its controlling one, each pipeline in
	 * turn its foreground. */
	if (p->tty)
		ioctl(p->stdio[0], TIOCSCTTY, 0);
	while (i < c->n_segs) {
		for (j = i; j + 1 < c->n_segs && c->segs[j].op == WARD_SH_OP_PIPE; j++)
			;
		if (!skip) {
			int prev = -1, pfd[2] = { -1, -1 };
			pid_t pgid = 0;
			size_t n = 0;

			for (k = i; k <= j; k++) {
				int out = p->stdio[1];
				pid_t pid;

				if (k < j) {
					if (pipe2(pfd, O_CLOEXEC) < 0) {
						dprintf(p->stdio[2], "ward: pipe: %s\n", strerror(errno));
						break;
					}
					out = pfd[1];
				}
				/* vfork: the child only makes system calls on the plan
				 * before it execs (see init.c) */
				pid = spawn_seg(p, &c->segs[k], prev, out, pgid);
				if (pid > 0) {
					if (!pgid)
						pgid = pid;
					setpgid(pid, pgid);
					pids_storage[n++] = pid;
				} else {
					dprintf(p->stdio[2], "ward: fork: %s\n", strerror(errno));
				}
				if (prev >= 0)
					close(prev);
				if (k < j) {
					close(pfd[1]);
					prev = pfd[0];
				} else {
					prev = -1;
				}
				if (pid < 0)
					break;
			}
			if (prev >= 0)
				close(prev);
			if (n == j - i + 1)
				status = ward_wait_group(pids_storage, n, pgid);
			else {
				ward_wait_group(pids_storage, n, pgid ? pgid : 1);
				status = WARD_EXIT_OWN_ERROR << 8;
			}
		}
		switch (c->segs[j].op) {
		case WARD_SH_OP_AND:
			skip = !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
			break;
		case WARD_SH_OP_OR:
			skip = WIFEXITED(status) && WEXITSTATUS(status) == 0;
			break;
		default:
			skip = false;
		}
		i = j + 1;
	}
	return status;
}
