/* run.c — one program run, timed, and small helpers of the record format. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"

extern char **environ;

double bench_last_cpu_ms;

static double tv_ms(struct timeval tv)
{
	return (double)tv.tv_sec * 1e3 + (double)tv.tv_usec / 1e3;
}

long long bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Children that live as long as the tier: the session rows' hosts. */
static pid_t lasting[16];
static int n_lasting;

/* This process's children, as its main thread (which makes them all) has
 * them; -1 where the kernel does not list them (CONFIG_PROC_CHILDREN). */
static int children(pid_t *out, int max)
{
	char path[64], buf[4096], *p, *end;
	ssize_t n;
	int fd, k = 0;

	snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	for (p = buf; k < max; p = end) {
		long v = strtol(p, &end, 10);

		if (end == p)
			break;
		out[k++] = (pid_t)v;
	}
	return k;
}

void bench_children_lasting(void)
{
	int n = children(lasting, (int)(sizeof(lasting) / sizeof(lasting[0])));

	n_lasting = n < 0 ? 0 : n;
}

/* A child other than the lasting ones is alive (or may be: unknown). */
static bool others_alive(void)
{
	pid_t now[64];
	int n = children(now, 64), i, j;

	if (n < 0)
		return n_lasting == 0;
	for (i = 0; i < n; i++) {
		for (j = 0; j < n_lasting && lasting[j] != now[i]; j++)
			;
		if (j == n_lasting)
			return true;
	}
	return false;
}

/* A sandbox may leave processes behind its first process (bwrap's monitor
 * exits before the sandbox's init is gone); as a subreaper the bench gets
 * them. They are reaped after the clock stops, so their CPU time counts and
 * they do not overlap the next run; one that lingers past a second is left.
 * The lasting children are not waited for. */
static void reap_orphans(void)
{
	struct timespec pause = { 0, 200000 };
	long long deadline = bench_now_ns() + 1000000000LL;

	for (;;) {
		pid_t p = waitpid(-1, NULL, WNOHANG);

		if (p > 0)
			continue;
		if (p < 0 && errno == EINTR)
			continue;
		if (p < 0 || !others_alive() || bench_now_ns() > deadline)
			return; /* ECHILD: none left */
		nanosleep(&pause, NULL);
	}
}

int bench_exec(char *const argv[], char *out, size_t outsz, double *ms, long *maxrss_kib)
{
	return bench_exec_io(argv, NULL, NULL, out, outsz, ms, maxrss_kib);
}

int bench_exec_io(char *const argv[], const char *in_path, int (*prep)(void), char *out,
		  size_t outsz, double *ms, long *maxrss_kib)
{
	static char junk[1 << 16];
	struct rusage ru;
	long long t0;
	int pfd[2] = { -1, -1 }, status, saved;
	size_t n = 0;
	pid_t pid;

	double cpu0 = bench_cpu_ms();

	if (out && pipe2(pfd, O_CLOEXEC) < 0)
		return -1;
	t0 = bench_now_ns();
	pid = fork();
	if (pid < 0) {
		saved = errno;
		if (out) {
			close(pfd[0]);
			close(pfd[1]);
		}
		errno = saved;
		return -1;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		int in = in_path ? open(in_path, O_RDONLY) : null;

		if (null < 0 || in < 0 || (prep && prep() < 0))
			_exit(127);
		dup2(in, 0);
		dup2(out ? pfd[1] : null, 1);
		dup2(out ? pfd[1] : null, 2);
		execve(argv[0], argv, environ);
		_exit(127);
	}
	if (out) {
		close(pfd[1]);
		for (;;) {
			ssize_t r = n + 1 < outsz ? read(pfd[0], out + n, outsz - 1 - n)
						  : read(pfd[0], junk, sizeof(junk));

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			if (n + 1 < outsz)
				n += (size_t)r;
		}
		close(pfd[0]);
		out[n] = '\0';
	}
	while (wait4(pid, &status, 0, &ru) < 0)
		if (errno != EINTR)
			return -1;
	*ms = (double)(bench_now_ns() - t0) / 1e6;
	reap_orphans();
	bench_last_cpu_ms = bench_cpu_ms() - cpu0;
	if (maxrss_kib)
		*maxrss_kib = ru.ru_maxrss;
	return status;
}

double bench_cpu_ms(void)
{
	struct rusage self, children;

	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &children);
	return tv_ms(self.ru_utime) + tv_ms(self.ru_stime) + tv_ms(children.ru_utime) +
	       tv_ms(children.ru_stime);
}

void rec_escape(FILE *f, const char *s)
{
	for (; s && *s; s++)
		fputc(*s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s, f);
}

/* The command line as a person would type it: words with shell-special
 * characters single-quoted. */
void argv_join(char *buf, size_t sz, char *const argv[])
{
	size_t n = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; argv[i] && n + 1 < sz; i++) {
		const char *a = argv[i];
		bool quote = !*a || strpbrk(a, " \t\n'\"\\$`;&|<>(){}*?!#~") != NULL;

		n += (size_t)snprintf(buf + n, sz - n, "%s%s", i ? " " : "", quote ? "'" : "");
		for (; *a && n + 5 < sz; a++) {
			if (*a == '\'' && quote)
				n += (size_t)snprintf(buf + n, sz - n, "'\\''");
			else
				buf[n++] = *a;
		}
		buf[n < sz ? n : sz - 1] = '\0';
		if (quote && n + 1 < sz) {
			buf[n++] = '\'';
			buf[n] = '\0';
		}
	}
}

/* Replace every occurrence of from in s (size sz) by to. */
static void replace_all(char *s, size_t sz, const char *from, const char *to)
{
	size_t nf = strlen(from), nt = strlen(to);
	char *p = s;

	if (!nf)
		return;
	while ((p = strstr(p, from)) != NULL) {
		size_t rest = strlen(p + nf);

		if ((size_t)(p - s) + nt + rest + 1 > sz)
			return;
		memmove(p + nt, p + nf, rest + 1);
		memcpy(p, to, nt);
		p += nt;
	}
}

void rec_cmdline(FILE *f, const char *line, const struct tier_options *o)
{
	char buf[BENCH_LINE_MAX * 2];

	/* The run's temporary paths under the names a reader would type. */
	snprintf(buf, sizeof(buf), "%s", line);
	replace_all(buf, sizeof(buf), o->ward, "ward");
	replace_all(buf, sizeof(buf), o->policy, "bench/policy.json");
	replace_all(buf, sizeof(buf), o->workdir, "$WORK");
	replace_all(buf, sizeof(buf), o->dir, "$DIR");
	rec_escape(f, buf);
}
