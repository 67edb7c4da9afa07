/* util.c — the small I/O helpers of util-internal.h. */
#include "runtime/util/util-internal.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

int ward_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

ssize_t ward_send_fds(int sock, const void *buf, size_t len, const int *fds, size_t n,
		      int flags)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * WARD_FDS_MAX)];
		struct cmsghdr align;
	} c;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t r;

	if (n > WARD_FDS_MAX) {
		errno = EINVAL;
		return -1;
	}
	if (n) {
		struct cmsghdr *cm;

		memset(c.buf, 0, sizeof(c.buf));
		mh.msg_control = c.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * n);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * n);
	}
	do
		r = sendmsg(sock, &mh, flags | MSG_NOSIGNAL);
	while (r < 0 && errno == EINTR);
	return r;
}

ssize_t ward_recv_fds(int sock, void *buf, size_t len, int *fds, size_t max, size_t *n,
		      int flags)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * WARD_FDS_MAX)];
		struct cmsghdr align;
	} c;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.buf,
			     .msg_controllen = sizeof(c.buf) };
	struct cmsghdr *cm;
	ssize_t r;

	*n = 0;
	do
		r = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return r;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		size_t k, nk;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		nk = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (k = 0; k < nk; k++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + k * sizeof(int), sizeof(int));
			if (*n < max)
				fds[(*n)++] = fd;
			else
				close(fd);
		}
	}
	return r;
}

/* Field n (1-based, as proc(5) counts) of a stat line, from the text after
 * the command name's closing parenthesis (field 3 on). */
static unsigned long long stat_field(const char *after_comm, int n)
{
	const char *c = after_comm;
	unsigned long long v = 0;

	for (int f = 3; f < n && *c; c++)
		if (*c == ' ')
			f++;
	while (*c >= '0' && *c <= '9')
		v = v * 10 + (unsigned long long)(*c++ - '0');
	return v;
}

/* One reading per process: ward names its run record and its cgroups after
 * its start time, and init hides the host's arguments with the layout;
 * each reading was four system calls (~3 us each in a VM). The fields are
 * written before self_pid (release), and only while it is 0 or another
 * process's: init, a copy of the supervisor made while another thread may
 * hold self_lock, takes the layout without the lock. */
static pthread_mutex_t self_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t self_pid;
static struct ward_self_stat self_kept;

static int self_read(struct ward_self_stat *s)
{
	char buf[1024], *c;

	/* the command name may hold spaces and parentheses: the last ')' */
	errno = 0;
	if (ward_read_file("/proc/self/stat", buf, sizeof(buf)) <= 0 ||
	    !(c = strrchr(buf, ')')) || c[1] != ' ') {
		if (errno == 0)
			errno = EIO;
		return -1;
	}
	c += 2;
	s->start_time = stat_field(c, 22);
	s->start_code = stat_field(c, 26);
	s->end_code = stat_field(c, 27);
	s->start_stack = stat_field(c, 28);
	s->start_data = stat_field(c, 45);
	s->end_data = stat_field(c, 46);
	s->start_brk = stat_field(c, 47);
	return 0;
}

int ward_self_stat(struct ward_self_stat *out, bool layout_only)
{
	pid_t me;
	int rc = 0;

	if (layout_only) {
		if (__atomic_load_n(&self_pid, __ATOMIC_ACQUIRE)) {
			*out = self_kept;
			return 0;
		}
		return self_read(out);
	}
	me = getpid();
	pthread_mutex_lock(&self_lock);
	if (self_pid != me) {
		rc = self_read(&self_kept);
		if (rc == 0)
			__atomic_store_n(&self_pid, me, __ATOMIC_RELEASE);
	}
	if (rc == 0)
		*out = self_kept;
	pthread_mutex_unlock(&self_lock);
	return rc;
}

ssize_t ward_read_file(const char *path, char *buf, size_t size)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;

	if (fd < 0)
		return -1;
	while (got + 1 < size) {
		ssize_t n = read(fd, buf + got, size - 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	return (ssize_t)got;
}

int ward_write_file(const char *path, const char *s)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	return ward_write_all(fd, s, strlen(s));
}

long long ward_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

char *ward_names_join(const char *const *names, char *buf, size_t size)
{
	size_t used = 0;

	if (size == 0)
		return buf;
	buf[0] = '\0';
	for (; *names; names++) {
		int n = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", *names);

		if (n < 0 || (size_t)n >= size - used)
			break;
		used += (size_t)n;
	}
	return buf;
}

/* The walk for ward_open_nofollow(): each directory on the way opened
 * O_PATH | O_NOFOLLOW from the one before, so a link anywhere ends it. */
static int open_walk(int dirfd, const char *path, int flags, bool beneath)
{
	char buf[PATH_MAX];
	char *comp, *next;
	int cur, fd, e;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (buf[0] == '/') {
		if (beneath) {
			errno = EXDEV;
			return -1;
		}
		cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	} else {
		cur = dirfd == AT_FDCWD ? open(".", O_PATH | O_DIRECTORY | O_CLOEXEC) :
					  fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
	}
	if (cur < 0)
		return -1;
	for (comp = buf;; comp = next) {
		bool last;

		while (*comp == '/')
			comp++;
		next = strchr(comp, '/');
		if (next)
			*next++ = '\0';
		while (next && *next == '/')
			next++;
		last = !next || !*next;
		if (beneath && strcmp(comp, "..") == 0) {
			close(cur);
			errno = EXDEV;
			return -1;
		}
		if (!*comp)
			comp = (char *)".";
		fd = openat(cur, comp,
			    last ? flags | O_NOFOLLOW | O_CLOEXEC :
				   O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		e = errno;
		if (fd < 0 && e == ENOTDIR) {
			struct stat st;

			/* O_DIRECTORY meets a link before O_NOFOLLOW does */
			if (fstatat(cur, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
				e = ELOOP;
		}
		close(cur);
		if (fd < 0) {
			errno = e;
			return -1;
		}
		if (last)
			return fd;
		cur = fd;
	}
}

int ward_open_nofollow(int dirfd, const char *path, int flags, bool beneath)
{
	struct open_how how = {
		.flags = (unsigned)(flags | O_CLOEXEC),
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
			   (beneath ? RESOLVE_BENEATH : 0),
	};
	int fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));

	if (fd < 0 && errno == ENOSYS)
		return open_walk(dirfd, path, flags, beneath);
	return fd;
}

/* ---- a terminal's answers ---------------------------------------------------- */

#define ANSWER_WAIT_NS (250 * 1000000LL)
#define SEQ_MAX 64

/* What the terminal sends, split into reports (dropped) and keys (kept).
 * Reports: CSI sequences ending in R (a cursor position), c (device
 * attributes), t (window reports), n (status), x or y (parameters, modes);
 * and OSC, DCS, APC, PM, SOS strings (a colour, a title, a setting), which
 * no key sends. Everything else, arrow and function keys included, is
 * kept. */
struct reports {
	enum { R_TEXT, R_ESC, R_CSI, R_STRING, R_STRING_ESC } state;
	char seq[SEQ_MAX];
	size_t seq_len;
	char *keep;
	size_t cap, kept;
	unsigned owed; /* answers to the command's own DA1 questions first */
	unsigned cont; /* a UTF-8 character's bytes still to come */
	bool c2;       /* a 0xc2 held: U+0080..U+009F, a C1 control, may follow */
	bool da1;      /* the answer to ward's own question: the end */
};

static void keep_bytes(struct reports *r, const char *b, size_t n)
{
	for (size_t i = 0; i < n && r->keep && r->kept < r->cap; i++)
		r->keep[r->kept++] = b[i];
}

static void report_plain(struct reports *r, char c)
{
	switch (r->state) {
	case R_TEXT:
		if (c == '\033')
			r->state = R_ESC;
		else
			keep_bytes(r, &c, 1);
		return;
	case R_ESC:
		if (c == '[') {
			r->state = R_CSI;
			r->seq_len = 0;
		} else if (c == ']' || c == 'P' || c == '_' || c == '^' || c == 'X') {
			r->state = R_STRING;
		} else if (c == '\033') {
			keep_bytes(r, "\033", 1); /* a lone ESC, another follows */
		} else {
			keep_bytes(r, "\033", 1);
			keep_bytes(r, &c, 1);
			r->state = R_TEXT;
		}
		return;
	case R_CSI:
		if (c >= 0x20 && c <= 0x3f && r->seq_len < SEQ_MAX) {
			r->seq[r->seq_len++] = c;
			return;
		}
		r->state = R_TEXT;
		if (c == 'c' && r->seq_len && r->seq[0] == '?') {
			if (r->owed)
				r->owed--; /* the command's question's: dropped */
			else
				r->da1 = true;
			return;
		}
		if (c == 'R' || c == 'c' || c == 't' || c == 'n' || c == 'x' || c == 'y')
			return;
		keep_bytes(r, "\033[", 2);
		keep_bytes(r, r->seq, r->seq_len);
		keep_bytes(r, &c, 1);
		return;
	case R_STRING:
		if (c == '\a')
			r->state = R_TEXT;
		else if (c == '\033')
			r->state = R_STRING_ESC;
		return;
	case R_STRING_ESC:
		if (c == '\\') {
			r->state = R_TEXT;
			return;
		}
		r->state = R_ESC; /* the string cut short: a new sequence */
		report_plain(r, c);
		return;
	}
}

/* A C1 control (S8C1T: xterm's answers in 8 bits, or in UTF-8 as C2 xx),
 * which no key sends: CSI, the strings' starts and ST. */
static void report_c1(struct reports *r, unsigned char c)
{
	if (c == 0x9b) {
		r->state = R_CSI;
		r->seq_len = 0;
	} else if (c == 0x90 || c == 0x9d || c == 0x9e || c == 0x9f || c == 0x98) {
		r->state = R_STRING;
	} else if (c == 0x9c && (r->state == R_STRING || r->state == R_STRING_ESC)) {
		r->state = R_TEXT;
	}
}

static void report_byte(struct reports *r, char c)
{
	unsigned char u = (unsigned char)c;

	if (r->c2) {
		r->c2 = false;
		if (u >= 0x80 && u <= 0x9f) {
			report_c1(r, u);
			return;
		}
		report_plain(r, (char)0xc2);
		r->cont = 1;
	} else if (u == 0xc2) {
		r->c2 = true;
		return;
	} else if (u >= 0x80 && u <= 0x9f && !r->cont) {
		report_c1(r, u);
		return;
	}
	if (u >= 0xc0 && u < 0xf8)
		r->cont = u >= 0xf0 ? 3 : u >= 0xe0 ? 2 : 1;
	else if (u >= 0x80 && u < 0xc0 && r->cont)
		r->cont--;
	else
		r->cont = 0;
	report_plain(r, c);
}

size_t ward_tty_take_answers(int tty, char *keep, size_t cap, unsigned owed)
{
	static const char da1[] = "\033[c";
	long long until = ward_now_ns() + ANSWER_WAIT_NS;
	struct reports r = { .state = R_TEXT, .keep = keep, .cap = cap, .owed = owed };
	struct termios saved, t;
	bool restore = false;

	/* the answers read as they come, and not echoed */
	if (tcgetattr(tty, &saved) == 0 && (saved.c_lflag & (ICANON | ECHO))) {
		t = saved;
		t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		t.c_cc[VMIN] = 1;
		t.c_cc[VTIME] = 0;
		restore = tcsetattr(tty, TCSANOW, &t) == 0;
	}
	if (write(tty, da1, sizeof(da1) - 1) == (ssize_t)sizeof(da1) - 1) {
		/* a byte at a time: what follows the answer stays queued */
		while (!r.da1) {
			long long now = ward_now_ns();
			struct pollfd pf = { .fd = tty, .events = POLLIN };
			char c;
			ssize_t n;

			if (now >= until ||
			    poll(&pf, 1, (int)((until - now + 999999) / 1000000)) <= 0)
				break;
			n = read(tty, &c, 1);
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0)
				break;
			report_byte(&r, c);
		}
	}
	/* no answer: what is queued, and what was read, may be late answers
	 * still (in a form not known here) */
	if (!r.da1) {
		tcflush(tty, TCIFLUSH);
		r.kept = 0;
	}
	if (restore)
		tcsetattr(tty, TCSANOW, &saved);
	return r.kept;
}

void ward_tty_scan(struct ward_tty_scan *q, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)b[i];

		/* Inside a sequence, a terminal carries out a C0 control and goes
		 * on with the sequence (ECMA-48, every VT parser: ESC [ CR 6 n is
		 * a DSR); DEL is ignored; CAN and SUB cancel. */
		if (q->state && q->state != 3 && (c < 0x20 || c == 0x7f) && c != 0x1b) {
			if (c == 0x18 || c == 0x1a)
				q->state = 0;
			continue;
		}
		switch (q->state) {
		case 0: /* text */
			if (c == 0x05) /* ENQ: the answerback message */
				q->asked = true;
			else if (c == 0x1b)
				q->state = 1;
			else if (c == 0x9b) /* 8-bit CSI */
				q->state = 2, q->dollar = false, q->inter = 0;
			else if (c == 0x90 || c == 0x9f) /* 8-bit DCS, APC */
				q->asked = true;
			else if (c == 0x9d) /* 8-bit OSC */
				q->state = 3, q->osc = 0;
			break;
		case 1: /* ESC */
			if (c == '[')
				q->state = 2, q->dollar = false, q->inter = 0;
			else if (c == ']')
				q->state = 3, q->osc = 0;
			else if (c == 'P' || c == 'Z' || c == '_')
				/* DCS (DECRQSS, XTGETTCAP); DECID (answered as
				 * DA1); APC (kitty's graphics queries) */
				q->asked = true, q->da1s += c == 'Z', q->state = 0;
			else if (c != 0x1b)
				q->state = 0;
			break;
		case 2: /* CSI: parameters, intermediates, then the final byte */
			if (c == '$')
				q->dollar = true;
			else if (c == '?' || c == '*' || c == '#' || c == '&' || c == '>' || c == '=')
				q->inter = (char)c;
			if (c >= 0x20 && c <= 0x3f)
				break;
			/* DSR, DA, window reports, DECREQTPARM, XTVERSION (and a
			 * cursor style), DECRQM, DECRQPSR, DECRQTSR, DECRQUPSS,
			 * kitty's keyboard flags, DECRQCRA, XTQMODKEYS,
			 * XTSMGRAPHICS, XTREPORTSGR */
			if (c == 'n' || c == 'c' || c == 't' || c == 'x' || c == 'q' ||
			    ((c == 'p' || c == 'w') && q->dollar) ||
			    (c == 'u' && (q->dollar || q->inter == '?' || q->inter == '&')) ||
			    (c == 'y' && q->inter == '*') ||
			    ((c == 'm' || c == 'S') && q->inter == '?') ||
			    (c == '|' && q->inter == '#'))
				q->asked = true;
			if (c == 'c' && !q->inter)
				q->da1s++; /* its answer: like the one to ward's */
			q->state = c == 0x1b ? 1 : 0;
			break;
		case 3: /* OSC: a '?' asks (a colour, the clipboard); so do
			 * iTerm2's reports (1337) and kitty's file transfer and
			 * clipboard (5113, 5522) */
			if (c == '?') {
				q->asked = true;
			} else if (c == 0x07 || c == 0x18 || c == 0x1a) {
				q->state = 0;
			} else if (c == 0x1b) {
				q->state = 1;
			} else if (q->osc >= 0 && c >= '0' && c <= '9') {
				q->osc = q->osc > 100000 ? -1 : q->osc * 10 + (c - '0');
			} else if (q->osc >= 0) {
				if (q->osc == 1337 || q->osc == 5113 || q->osc == 5522)
					q->asked = true;
				q->osc = -1;
			}
			/* no 0x9c as ST: in UTF-8 it is a character's byte */
			break;
		}
	}
}

void ward_tty_scan_input(struct ward_tty_scan *q, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)b[i];

		switch (q->in_state) {
		case 0:
			q->in_state = c == 0x1b ? 1 : c == 0x9b ? 2 : 0;
			break;
		case 1:
			q->in_state = c == '[' ? 2 : c == 0x1b ? 1 : 0;
			break;
		case 2: /* CSI's first byte: '?' for a DA1 answer */
			q->in_state = c == '?' ? 3 : c >= 0x20 && c <= 0x3f ? 4 : c == 0x1b ? 1 : 0;
			break;
		case 3:
		case 4:
			if (c >= 0x20 && c <= 0x3f)
				break;
			if (c == 'c' && q->in_state == 3)
				q->da1s_in++;
			q->in_state = c == 0x1b ? 1 : 0;
			break;
		}
	}
}

unsigned ward_tty_owed(const struct ward_tty_scan *q)
{
	return q->da1s > q->da1s_in ? q->da1s - q->da1s_in : 0;
}
