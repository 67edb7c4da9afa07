/* tlshelper.c — the supervisor's side of ward-tls (net-internal.h, "ward-tls,
 * the TLS helper"): find and start it, hand it connections, read what it
 * says. No OpenSSL here: that is the point. */
#include "runtime/net/net-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/util/util-internal.h"

#ifndef WARD_LIBEXECDIR
#define WARD_LIBEXECDIR "/usr/local/libexec"
#endif

/* The hello's text: a CA certificate, or a reason. */
#define HELLO_MAX (16 * 1024)

extern char **environ;

struct ward_tlshelper {
	pid_t pid;
	int pidfd;     /* the helper, signalled through it: never a reused pid */
	int ctl;
	char *ca_pem;
};

/* Whether path is a helper ward may start: a regular executable file owned
 * by root or by ward's user and writable by no one else, in a directory of
 * the same kind (so that no other user, and no sandboxed command working in
 * a directory of another's, can put a program there). NULL, or why not. */
static const char *untrusted(const char *path)
{
	char real[PATH_MAX], *slash;
	struct stat st;

	if (!realpath(path, real) || stat(real, &st) < 0)
		return "not found";
	if (!S_ISREG(st.st_mode) || access(real, X_OK) != 0)
		return "not an executable file";
	if ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & (S_IWGRP | S_IWOTH)))
		return "writable by another user than root or ward's";
	slash = strrchr(real, '/');
	if (slash == real)
		slash++;
	*slash = '\0';
	if (stat(real, &st) < 0 || (st.st_uid != 0 && st.st_uid != geteuid()) ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)))
		return "in a directory another user than root or ward's can write";
	return NULL;
}

/* Where the helper is: see ward_tlshelper_start(). looked gets the places
 * looked at, and why each was not taken, for the message. */
static bool find_helper(char *path, size_t size, char *looked, size_t lsize)
{
	const char *env = getenv("WARD_TLS_HELPER"), *why;
	char exe[PATH_MAX], *slash;
	ssize_t n;

	looked[0] = '\0';
	if (env && *env) {
		snprintf(path, size, "%s", env);
		why = env[0] != '/' ? "not an absolute path" : untrusted(path);
		snprintf(looked, lsize, "'%s' ($WARD_TLS_HELPER): %s", env, why ? why : "");
		return !why;
	}
	/* beside the ward command (a build tree, a container's /usr/local/bin);
	 * never beside another program using libward, which may live in a
	 * directory its commands can write */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 64);
	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash && strcmp(slash + 1, "ward") == 0) {
			/* and in PREFIX/libexec/ward of the PREFIX/bin it runs
			 * from (installed under another PREFIX than it was built
			 * for) */
			static const char *const rel[] = { WARD_TLS_HELPER_NAME,
							   "../libexec/ward/" WARD_TLS_HELPER_NAME };
			size_t i, l;

			for (i = 0; i < 2; i++) {
				slash[1] = '\0';
				snprintf(path, size, "%s%s", exe, rel[i]);
				why = untrusted(path);
				if (!why)
					return true;
				l = strlen(looked);
				snprintf(looked + l, lsize - l, "'%s': %s; ", path, why);
			}
		}
	}
	snprintf(path, size, "%s/ward/%s", WARD_LIBEXECDIR, WARD_TLS_HELPER_NAME);
	why = untrusted(path);
	snprintf(looked + strlen(looked), lsize - strlen(looked), "'%s': %s", path,
		 why ? why : "");
	return !why;
}

static int spawn(const char *path, const char *upstream_ca, int child_ctl, pid_t *pid,
		 struct ward_error **err)
{
	static const char *const pass[] = { "SSL_CERT_FILE", "SSL_CERT_DIR" };
	char *argv[4] = { (char *)WARD_TLS_HELPER_NAME, NULL, NULL, NULL };
	char *envp[3] = { NULL, NULL, NULL }, *kept[2] = { NULL, NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, all;
	size_t i, ne = 0;
	int rc;

	if (upstream_ca) {
		argv[1] = (char *)"--upstream-ca";
		argv[2] = (char *)upstream_ca;
	}
	for (i = 0; i < 2; i++) {
		const char *v = getenv(pass[i]);

		if (v && asprintf(&kept[i], "%s=%s", pass[i], v) > 0)
			envp[ne++] = kept[i];
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, child_ctl, 3);
	/* no signal mask or handler of a library host's carried over */
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &all);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	rc = posix_spawn(pid, path, &fa, &attr, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	free(kept[0]);
	free(kept[1]);
	if (rc != 0)
		return ward_error_make(err, rc, "start the TLS helper '%s'", path);
	return 0;
}

int ward_tlshelper_start(const char *upstream_ca, struct ward_tlshelper **out,
			 struct ward_error **err)
{
	struct ward_tlshelper *h = calloc(1, sizeof(*h));
	char path[PATH_MAX], looked[2 * PATH_MAX + 64];
	struct ward_tls_hello hl;
	char *text = malloc(HELLO_MAX + 1);
	struct iovec iov[2];
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
	struct pollfd pfd;
	int sv[2] = { -1, -1 };
	ssize_t n;

	*out = NULL;
	if (!h || !text) {
		free(h);
		free(text);
		return ward_error_make(err, ENOMEM, "tls helper");
	}
	h->pid = -1;
	h->pidfd = -1;
	h->ctl = -1;
	if (!find_helper(path, sizeof(path), looked, sizeof(looked))) {
		ward_error_make(err, ENOENT,
				"HTTPS interception needs ward's TLS helper, " WARD_TLS_HELPER_NAME
				", installed with ward: none usable at %s", looked);
		goto fail;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		ward_error_make(err, errno, "tls helper: socketpair");
		goto fail;
	}
	/* dup2 onto itself would keep close-on-exec, and fds 0-2 are made
	 * /dev/null before the dup2: never let it be 0 to 3 (ward may run with
	 * its standard descriptors closed) */
	if (sv[1] <= 3) {
		int fd = fcntl(sv[1], F_DUPFD_CLOEXEC, 4);

		if (fd < 0) {
			ward_error_make(err, errno, "tls helper: dup");
			goto fail;
		}
		close(sv[1]);
		sv[1] = fd;
	}
	if (spawn(path, upstream_ca, sv[1], &h->pid, err) < 0)
		goto fail;
	/* ours until waited for: a library host that reaps every child could
	 * take it first, and a pid alone could then name another process */
	h->pidfd = (int)syscall(SYS_pidfd_open, h->pid, 0);
	close(sv[1]);
	sv[1] = -1;
	h->ctl = sv[0];
	sv[0] = -1;
	/* its CA is made and its store loaded in a few ms; a helper that
	 * hangs must not hang the run */
	pfd = (struct pollfd){ .fd = h->ctl, .events = POLLIN };
	while ((n = poll(&pfd, 1, 10000)) < 0 && errno == EINTR)
		;
	iov[0] = (struct iovec){ &hl, sizeof(hl) };
	iov[1] = (struct iovec){ text, HELLO_MAX };
	if (n == 1)
		do
			n = recvmsg(h->ctl, &mh, MSG_CMSG_CLOEXEC);
		while (n < 0 && errno == EINTR);
	else
		n = -1;
	if (n < (ssize_t)sizeof(hl) || hl.protocol != WARD_TLS_PROTOCOL ||
	    hl.size[0] != sizeof(struct ward_tls_hello) || hl.size[1] != sizeof(struct ward_tls_job) ||
	    hl.size[2] != sizeof(struct ward_tls_status)) {
		ward_error_make(err, n < 0 ? errno : EPROTO,
				"the TLS helper '%s' %s", path,
				n < 0 ? "did not answer" :
				n < (ssize_t)sizeof(hl) ? "exited before it was ready" :
				"is from another build of ward (install the two together)");
		goto fail;
	}
	text[n - (ssize_t)sizeof(hl)] = '\0';
	if (hl.ok != 1) {
		/* its kinds are ward's, but a stray value is not trusted */
		enum ward_error_kind kind = hl.kind == WARD_ERR_INVALID_PARAMETERS ?
						    WARD_ERR_INVALID_PARAMETERS :
						    WARD_ERR_EXECUTION_FAILED;

		ward_error_make_kind(err, kind, hl.errnum > 0 && hl.errnum < 4096 ? hl.errnum : 0,
				     "%s", text[0] ? text : "the TLS helper failed");
		goto fail;
	}
	h->ca_pem = text;
	*out = h;
	return 0;
fail:
	if (sv[0] >= 0)
		close(sv[0]);
	if (sv[1] >= 0)
		close(sv[1]);
	free(text);
	ward_tlshelper_free(h);
	return -1;
}

const char *ward_tlshelper_ca_pem(const struct ward_tlshelper *h)
{
	return h->ca_pem;
}

int ward_tlshelper_hand(struct ward_tlshelper *h, const char *host, bool literal,
			uint16_t port, int cl_fd, int up_fd, int *cl_plain, int *up_plain,
			int *pass)
{
	struct ward_tls_job j = { .protocol = WARD_TLS_PROTOCOL, .port = port,
				  .literal = literal };
	int cp[2] = { -1, -1 }, upp[2] = { -1, -1 }, pp[2] = { -1, -1 }, fds[5];
	ssize_t n;
	int e;

	snprintf(j.host, sizeof(j.host), "%s", host);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, cp) < 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, upp) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pp) < 0) {
		e = -errno;
		goto fail;
	}
	fds[0] = cl_fd;
	fds[1] = up_fd;
	fds[2] = cp[1];
	fds[3] = upp[1];
	fds[4] = pp[1];
	/* never blocking the proxy's loop: a helper that stopped taking jobs
	 * is as good as gone */
	n = ward_send_fds(h->ctl, &j, sizeof(j), fds, 5, MSG_DONTWAIT);
	if (n != (ssize_t)sizeof(j)) {
		e = n < 0 ? -errno : -EPIPE;
		goto fail;
	}
	close(cp[1]);
	close(upp[1]);
	close(pp[1]);
	*cl_plain = cp[0];
	*up_plain = upp[0];
	*pass = pp[0];
	return 0;
fail:
	if (cp[0] >= 0) {
		close(cp[0]);
		close(cp[1]);
	}
	if (upp[0] >= 0) {
		close(upp[0]);
		close(upp[1]);
	}
	if (pp[0] >= 0) {
		close(pp[0]);
		close(pp[1]);
	}
	return e;
}

int ward_tlshelper_status(int up_plain, long long deadline, struct ward_tls_status *st)
{
	char *b = (char *)st;
	size_t got = 0;

	while (got < sizeof(*st)) {
		long long left = (deadline - ward_now_ns()) / 1000000;
		struct pollfd pfd = { .fd = up_plain, .events = POLLIN };
		ssize_t n;

		if (left <= 0)
			return -1;
		n = poll(&pfd, 1, left > INT_MAX ? INT_MAX : (int)left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		n = read(up_plain, b + got, sizeof(*st) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	if (st->protocol != WARD_TLS_PROTOCOL)
		return -1;
	st->upstream_reason[sizeof(st->upstream_reason) - 1] = '\0';
	st->client_reason[sizeof(st->client_reason) - 1] = '\0';
	st->sni[sizeof(st->sni) - 1] = '\0';
	return 0;
}

void ward_tlshelper_free(struct ward_tlshelper *h)
{
	if (!h)
		return;
	if (h->ctl >= 0)
		close(h->ctl);
	if (h->pidfd >= 0) {
		/* closing the socket ends it; the kill makes sure, and the wait
		 * leaves no zombie */
		syscall(SYS_pidfd_send_signal, h->pidfd, SIGKILL, NULL, 0);
		while (waitid(P_PIDFD, (id_t)h->pidfd, NULL, WEXITED) < 0 && errno == EINTR)
			;
		close(h->pidfd);
	} else if (h->pid > 0) {
		kill(h->pid, SIGKILL);
		while (waitpid(h->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	free(h->ca_pem);
	free(h);
}
