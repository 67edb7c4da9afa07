/* tty.c — a terminal's late answers: what asks a terminal something, in
 * a command's output, and the answers that come back after the command
 * ended, kept from the next reader of the terminal (util-internal.h says
 * why). */
#include "runtime/util/util-internal.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

/* Long enough for an answer over a slow link; waited in full only at a
 * terminal that never answers DA1 (a program's pty), and only after a
 * command that asked it something. */
#define ANSWER_WAIT_NS (1000 * 1000000LL)
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
