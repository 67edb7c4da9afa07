/* tty.c — a terminal's late answers: what asks a terminal something, in
 * a command's output, and the answers that come back after the command
 * ended, kept from the next reader of the terminal; and the queries cut out
 * of output that reaches a terminal through a pipe, where no answer can
 * reach the command (util-internal.h says why). */
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
		/* kitty's keyboard flags and XTSMGRAPHICS (CSI ? … u, S),
		 * XTQMODKEYS (CSI > … m), DECRPDE (CSI … " w): no key sends a
		 * '?' or '>' first, nor '"' */
		if (r->seq_len && (((c == 'u' || c == 'S') && r->seq[0] == '?') ||
				   (c == 'm' && r->seq[0] == '>') ||
				   (c == 'w' && r->seq[r->seq_len - 1] == '"')))
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
			else if (c == '?' || c == '*' || c == '#' || c == '&' || c == '>' || c == '=' ||
				 c == '"')
				q->inter = (char)c;
			if (c >= 0x20 && c <= 0x3f)
				break;
			/* DSR, DA, window reports, DECREQTPARM, XTVERSION (and a
			 * cursor style), DECRQM, DECRQPSR, DECRQTSR, DECRQUPSS,
			 * kitty's keyboard flags, DECRQCRA, XTQMODKEYS,
			 * XTSMGRAPHICS, XTREPORTSGR, DECRQDE */
			if (c == 'n' || c == 'c' || c == 't' || c == 'x' || c == 'q' ||
			    ((c == 'p' || c == 'w') && q->dollar) ||
			    (c == 'u' && (q->dollar || q->inter == '?' || q->inter == '&')) ||
			    (c == 'y' && q->inter == '*') ||
			    ((c == 'm' || c == 'S') && q->inter == '?') ||
			    (c == '|' && q->inter == '#') || (c == 'v' && q->inter == '"'))
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

/* ---- cutting queries out of output ---------------------------------------- */

enum {
	F_TEXT,
	F_ESC,	      /* an ESC held */
	F_C2,	      /* a 0xc2 held: U+0080..U+009F, a C1 control, may follow */
	F_CSI,	      /* passed on, up to its final byte */
	F_OSC,	      /* passed on, up to its end */
	F_OSC_Q,      /* a '?' held, after a ';': a query if the parameter ends there */
	F_OSC_ESC,    /* an ESC held in an OSC string: ST, or a new sequence */
	F_STRING,     /* cut: a query's OSC, a DCS, APC, PM or SOS, up to its end */
	F_STRING_ESC, /* an ESC in one */
};

#define CAN 0x18
#define SUB 0x1a

/* A sequence starts (its introducer c after an ESC, or the C1 control c):
 * what passes on of it. */
static size_t filter_start(struct ward_tty_filter *f, unsigned char c, bool c1, char *out)
{
	static const struct ward_tty_scan fresh;
	size_t k = 0;

	switch (c1 ? c - 0x40 : c) {
	case '[': /* held whole up to its final byte */
		f->state = F_CSI;
		f->q = fresh;
		ward_tty_scan(&f->q, "\x1b[", 2);
		f->seq_len = 0;
		if (c1 && f->utf8_c1)
			f->seq[f->seq_len++] = (char)0xc2;
		else if (!c1)
			f->seq[f->seq_len++] = 0x1b;
		f->seq[f->seq_len++] = (char)c;
		return 0;
	case ']':
		f->state = F_OSC;
		f->osc = 0;
		f->osc_num = -1;
		f->prev = ']';
		break;
	case 'P': /* DCS (DECRQSS, XTGETTCAP), APC, PM, SOS: cut whole */
	case '_':
	case '^':
	case 'X':
		f->state = F_STRING;
		return 0;
	case 'Z': /* DECID, 8-bit SCI: answered as DA1 */
		f->state = F_TEXT;
		return 0;
	default:
		f->state = F_TEXT;
		break;
	}
	if (c1 && f->utf8_c1)
		out[k++] = (char)0xc2;
	else if (!c1)
		out[k++] = 0x1b;
	out[k++] = (char)c;
	return k;
}

/* An OSC string found to be a query at byte c: the terminal is told to drop
 * what it has of it (CAN), the rest is cut up to its end. */
static size_t cut_osc(struct ward_tty_filter *f, unsigned char c, char *out)
{
	out[0] = CAN;
	f->state = c == 0x1b ? F_STRING_ESC : c == 0x07 || c == CAN || c == SUB ? F_TEXT : F_STRING;
	return 1;
}

static bool osc_asks(const struct ward_tty_filter *f)
{
	return f->osc == 1337 || f->osc == 5113 || f->osc == 5522;
}

/* A byte of an OSC string passed on so far: what passes on. Queries: a
 * parameter that is '?' alone (a colour, the clipboard: OSC 4;1;? , 11;? ,
 * 52;c;?), or a key's value that is (kitty's colours and notifications:
 * OSC 21;foreground=? , 99;i=1:p=?), a parameter that starts with one
 * (kitty's pointer shapes: OSC 22;?__current__), iTerm2's reports (1337)
 * and kitty's file transfer and clipboard (5113, 5522), known by their
 * number. A '?' inside a parameter (a hyperlink's URL) asks nothing. */
static size_t osc_byte(struct ward_tty_filter *f, unsigned char c, char *out)
{
	size_t k = 0;
	bool end = c == 0x07 || c == 0x1b || c == CAN || c == SUB;

	if (c >= 0xc0)
		f->cont = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : 1;
	else if (c >= 0x80 && f->cont)
		f->cont--;
	else
		f->cont = 0;
	if ((c < 0x20 && !end) || c == 0x7f) {
		out[k++] = (char)c; /* ignored inside the string by the terminal */
		return k;
	}
	if (f->state == F_OSC_Q) {
		if (end || c == ';' || (c == ':' && f->osc_num == 99))
			return cut_osc(f, c, out);
		out[k++] = '?';
		f->prev = '?';
		f->state = F_OSC;
	}
	if (f->osc >= 0 && c >= '0' && c <= '9') {
		f->osc = f->osc > 100000 ? -1 : f->osc * 10 + (c - '0');
	} else if (f->osc >= 0) {
		bool asks = osc_asks(f);

		f->osc_num = f->osc;
		f->osc = -1;
		if (asks)
			return cut_osc(f, c, out);
	}
	if (c == 0x1b) {
		f->state = F_OSC_ESC;
		return k;
	}
	if (c == '?' && f->prev == ';' && f->osc_num == 22)
		return cut_osc(f, c, out);
	if (c == '?' &&
	    (f->prev == ';' || (f->prev == '=' && (f->osc_num == 21 || f->osc_num == 99)))) {
		f->state = F_OSC_Q;
		return k;
	}
	f->prev = c;
	out[k++] = (char)c;
	if (end)
		f->state = F_TEXT;
	return k;
}

/* A C1 control c inside an OSC string, in UTF-8 (its 0xc2 held) or in 8
 * bits: like ESC, it ends the string for a terminal that takes C1 controls
 * (ST, 0x9c, as its end; any other as the start of something new, a CSI
 * asking as well as any). A query's string is cancelled first, and so is
 * any string not ended by ST. */
static size_t osc_c1(struct ward_tty_filter *f, unsigned char c, bool utf8, char *out)
{
	bool query = f->state == F_OSC_Q || osc_asks(f);
	size_t k = 0;

	/* cancelled but by ST: what follows may be cut, the string not
	 * ended at the terminal then */
	if (query || c != 0x9c)
		out[k++] = CAN;
	f->state = F_TEXT;
	f->cont = 0;
	if (c == 0x9c) {
		/* and a CAN after: a terminal that takes no C1 control
		 * would keep the string open for what follows */
		if (!query && utf8)
			out[k++] = (char)0xc2;
		if (!query) {
			out[k++] = (char)c;
			out[k++] = CAN;
		}
		return k;
	}
	f->utf8_c1 = utf8;
	return k + filter_start(f, c, true, out + k);
}

/* A byte of an OSC string: a 0xc2 that may begin a C1 control is held (with
 * a '?' held before it, the two come out together). */
static size_t filter_osc(struct ward_tty_filter *f, unsigned char c, char *out)
{
	size_t k;

	if (f->osc_c2) {
		f->osc_c2 = false;
		if (c >= 0x80 && c <= 0x9f)
			return osc_c1(f, c, true, out);
		k = osc_byte(f, 0xc2, out);
		return k + ward_tty_filter(f, (const char *)&c, 1, out + k);
	}
	if (c == 0xc2) {
		f->osc_c2 = true;
		return 0;
	}
	if (c >= 0x80 && c <= 0x9f && !f->cont)
		return osc_c1(f, c, false, out);
	return osc_byte(f, c, out);
}

size_t ward_tty_filter(struct ward_tty_filter *f, const char *in, size_t n, char *out)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)in[i];

		/* ENQ, answered with the answerback message, in text as
		 * inside a sequence (carried out there like any C0 control):
		 * dropped, unseen by the terminal and by what follows here */
		if (c == 0x05)
			continue;
		switch (f->state) {
		case F_TEXT:
			if (c == 0x1b) {
				f->state = F_ESC;
				f->cont = 0;
			} else if (c == 0xc2) {
				/* a lead byte starts a character, whatever was
				 * left unfinished: the terminal's decoder drops
				 * that (e2 c2 9b is U+FFFD, then a CSI) */
				f->state = F_C2;
			} else if (c >= 0x80 && c <= 0x9f && !f->cont) {
				/* a raw C1 control, outside a UTF-8 character */
				f->utf8_c1 = false;
				k += filter_start(f, c, true, out + k);
			} else {
				if (c >= 0x80 && c <= 0xbf && f->cont)
					f->cont--;
				else
					f->cont = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;
				out[k++] = (char)c;
			}
			break;
		case F_ESC:
			if (c == 0x1b) {
				out[k++] = 0x1b; /* the first one is abandoned */
			} else if ((c < 0x20 && c != CAN && c != SUB) || c == 0x7f) {
				/* carried out inside a sequence; DEL ignored there */
				out[k++] = (char)c;
			} else if (c >= 0x80) {
				out[k++] = 0x1b;
				f->state = F_TEXT;
				i--; /* this byte, as text */
			} else {
				k += filter_start(f, c, false, out + k);
			}
			break;
		case F_C2:
			f->state = F_TEXT;
			if (c >= 0x80 && c <= 0x9f) {
				f->utf8_c1 = true;
				k += filter_start(f, c, true, out + k);
				break;
			}
			out[k++] = (char)0xc2;
			f->cont = 1;
			i--; /* this byte, as text */
			break;
		case F_CSI:
			/* Held, not passed on as it comes: what the terminal has
			 * of an unfinished CSI, the host's next output (its
			 * shell's prompt, the keys it echoes) would finish, a
			 * query perhaps (ESC [ 1 $, then "u"). */
			ward_tty_scan(&f->q, (const char *)&c, 1);
			if (c == 0x1b) {
				f->state = F_ESC; /* the CSI is abandoned */
			} else if (c >= 0x80) {
				/* abandoned: the byte as text, a C1 control (a new
				 * CSI) as any other */
				f->state = F_TEXT;
				f->cont = 0;
				i--;
			} else if (c < 0x20 || c == 0x7f) {
				/* carried out inside, as it comes: the same to the
				 * terminal as before the CSI */
				out[k++] = (char)c;
				if (c == CAN || c == SUB)
					f->state = F_TEXT;
			} else if (c <= 0x3f) {
				/* a parameter; a CSI too long to hold is cut */
				if (f->seq_len < sizeof(f->seq))
					f->seq[f->seq_len] = (char)c;
				if (f->seq_len <= sizeof(f->seq))
					f->seq_len++;
			} else {
				/* the final byte: a query is cut whole */
				if (!f->q.asked && f->seq_len <= sizeof(f->seq)) {
					memcpy(out + k, f->seq, f->seq_len);
					k += f->seq_len;
					out[k++] = (char)c;
				}
				f->state = F_TEXT;
			}
			break;
		case F_OSC:
		case F_OSC_Q:
			k += filter_osc(f, c, out + k);
			break;
		case F_OSC_ESC:
			if (c == '\\') {
				out[k++] = 0x1b;
				out[k++] = (char)c;
				f->state = F_TEXT;
			} else {
				/* a new sequence, the OSC abandoned: cancelled at
				 * the terminal, which would keep it open if what
				 * follows is cut (ESC ] 11 ; ESC P ... ST then ?
				 * BEL); the ESC held is the new one's start */
				out[k++] = CAN;
				f->state = F_ESC;
				i--;
			}
			break;
		case F_STRING:
			if (c == 0x1b)
				f->state = F_STRING_ESC;
			else if (c == 0x07 || c == CAN || c == SUB)
				f->state = F_TEXT;
			break;
		case F_STRING_ESC:
			if (c == '\\') {
				f->state = F_TEXT;
			} else {
				f->state = F_ESC;
				i--; /* a new sequence, the string abandoned */
			}
			break;
		}
	}
	return k;
}

size_t ward_tty_filter_end(struct ward_tty_filter *f, char *out)
{
	size_t k = 0;

	/* What the host writes next (its shell's prompt, the keys it echoes)
	 * must not finish a sequence begun here: a held ESC or CSI is
	 * dropped, an OSC string cancelled. */
	if (f->state == F_C2)
		out[k++] = (char)0xc2;
	else if (f->state == F_OSC || f->state == F_OSC_Q || f->state == F_OSC_ESC)
		out[k++] = CAN;
	f->osc_c2 = false;
	f->state = F_TEXT;
	return k;
}
