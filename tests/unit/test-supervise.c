/* test-supervise.c — the supervisor's loop without a child of its own (a
 * session's shared sandbox runs the command): it ends when every pipe is at
 * end of file, reads the captured pipes whole, and at the deadline kills
 * through the caller's function, not through a pidfd. */
#include "harness.h"
#include "runtime/core/core-internal.h"
#include "runtime/util/util-internal.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct killer {
	pid_t pid;
	int calls, sig;
};

static void kill_it(void *ctx, int sig)
{
	struct killer *k = ctx;

	k->calls++;
	k->sig = sig;
	kill(k->pid, sig);
}

/* A writer holding out, err and two captured pipes; what it writes, then
 * (hang) sleeping with them open until killed. */
static void run(bool hang, struct supervisor *sv, struct killer *k, char *rec, size_t rec_cap,
		char *text, size_t text_cap)
{
	int out[2], err[2], c0[2], c1[2], sync[2];
	struct ward_error *e = NULL;
	pid_t pid;
	char byte;
	int st;

	ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(err, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(c0, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(c1, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(sync, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		static const char record[8] = "RECORD!";

		if (write(out[1], "out\n", 4) != 4 || write(err[1], "err\n", 4) != 4 ||
		    write(c0[1], record, sizeof(record)) != sizeof(record) ||
		    write(c1[1], "/some/dir", 9) != 9 || write(sync[1], "w", 1) != 1)
			_exit(1);
		if (hang)
			pause();
		_exit(0);
	}
	close(out[1]);
	close(err[1]);
	close(c0[1]);
	close(c1[1]);
	close(sync[1]);
	/* all written before the loop starts: what it reads is not a race
	 * with its deadline */
	ck_assert_int_eq(read(sync[0], &byte, 1), 1);
	close(sync[0]);
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	fcntl(err[0], F_SETFL, O_NONBLOCK);
	fcntl(c0[0], F_SETFL, O_NONBLOCK);
	fcntl(c1[0], F_SETFL, O_NONBLOCK);
	k->pid = pid;
	memset(sv, 0, sizeof(*sv));
	sv->pidfd = -1;
	sv->sandboxed = true;
	sv->kill = kill_it;
	sv->kill_ctx = k;
	sv->out_fd = out[0];
	sv->err_fd = err[0];
	sv->out_sink = sv->err_sink = sv->pty_fd = sv->pty_sink = -1;
	sv->in_src = sv->in_dst = sv->tty_fd = sv->report_fd = sv->cancel_fd = -1;
	sv->capture[0] = (struct supervise_capture){ .buf = rec, .cap = rec_cap, .fd = c0[0] };
	sv->capture[1] = (struct supervise_capture){ .buf = text, .cap = text_cap, .fd = c1[0] };
	sv->out = ward_outbuf_new(4096, 4096, NULL);
	sv->err = ward_outbuf_new(4096, 4096, NULL);
	/* past at once when the writer hangs: the kill is the event awaited */
	sv->deadline_ns = hang ? ward_now_ns() : ward_now_ns() + 3600LL * 1000000000;
	ck_assert_int_eq(ward_supervise(sv, &e), 0);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	if (sv->out_fd >= 0)
		close(sv->out_fd);
	if (sv->err_fd >= 0)
		close(sv->err_fd);
}

START_TEST(test_no_child_ends_at_eof)
{
	struct supervisor sv;
	struct killer k = { 0 };
	char rec[8], text[64];
	size_t n;
	char *o;

	run(false, &sv, &k, rec, sizeof(rec), text, sizeof(text));
	ck_assert_int_eq(k.calls, 0);
	ck_assert(!sv.timed_out);
	ck_assert_uint_eq(sv.capture[0].len, sizeof(rec)); /* the record whole */
	ck_assert_mem_eq(rec, "RECORD!", 8);
	ck_assert_uint_eq(sv.capture[1].len, 9);
	ck_assert_mem_eq(text, "/some/dir", 9);
	ck_assert_int_eq(sv.capture[0].fd, -1); /* closed by the loop */
	ck_assert_int_eq(sv.capture[1].fd, -1);
	o = ward_outbuf_render(sv.out, 4096, &n, NULL);
	ck_assert_str_eq(o, "out\n");
	free(o);
	ward_outbuf_free(sv.out);
	ward_outbuf_free(sv.err);
}
END_TEST

START_TEST(test_no_child_deadline_kills_through_caller)
{
	struct supervisor sv;
	struct killer k = { 0 };
	char rec[8], text[64];

	run(true, &sv, &k, rec, sizeof(rec), text, sizeof(text));
	ck_assert_int_eq(k.calls, 1);
	ck_assert_int_eq(k.sig, SIGKILL);
	ck_assert(sv.timed_out);
	ck_assert_uint_eq(sv.capture[0].len, sizeof(rec));
	ward_outbuf_free(sv.out);
	ward_outbuf_free(sv.err);
}
END_TEST

/* What asks a terminal for an answer, and what does not: colours, titles,
 * cursor moves and clears ask nothing (no round trip after them); every
 * query does, whole or split anywhere across pieces. */
START_TEST(test_tty_queries)
{
	static const char *const quiet[] = {
		"plain text\r\n", "\033[1;31mred\033[0m", "\033]0;a title\a", "\033]2;t\033\\",
		"\033[2J\033[H", "\033[?25l\033[?25h", "\033[?1049h\033[?1049l", "\033(B\017",
		"\033[10;20H\033[K", "\033[!p", "\033]8;;http://x/\033\\link\033]8;;\033\\",
	};
	static const char *const queries[] = {
		"\033[6n", "\033[5n", "\033[c", "\033[>c", "\033[=c", "\033[21t", "\033[14t",
		"\033]11;?\a", "\033]4;1;?\033\\", "\033]52;c;?\a", "\033P$qm\033\\",
		"\033P+q544e\033\\", "\033[>0q", "\033[?2004$p", "\033[x", "\005", "\033Z",
		"\2336n", "\235" "11;?\a", "text\033[1m\033[6n",
		/* a control inside a sequence is carried out, the sequence goes on */
		"\033[\r6n", "\033[6\bn", "\033\r[6n", "\033[2\0011t", "\033]11;\r?\a",
		"\033[6\177n",
		/* kitty's graphics and keyboard queries, XTQMODKEYS, XTSMGRAPHICS,
		 * DECRQPSR, DECRQTSR, DECRQCRA */
		"\033_Gi=31,a=q;AAAA\033\\", "\033[?u", "\033[?4m", "\033[?1;1;0S",
		"\033[1$w", "\033[1$u", "\033[1;1;1;1;1;1*y",
		/* a UTF-8 character with a 0x9c byte inside an OSC is no ST */
		"\033]10;\305\234;?\a",
		/* DECRQDE */
		"\033[\"v",
	};

	char missed[2048] = "";

	for (size_t i = 0; i < sizeof(quiet) / sizeof(quiet[0]); i++) {
		struct ward_tty_scan q = { 0 };

		ward_tty_scan(&q, quiet[i], strlen(quiet[i]));
		ck_assert_msg(!q.asked, "'%s' asks", quiet[i] + 1);
	}
	for (size_t i = 0; i < sizeof(queries) / sizeof(queries[0]); i++) {
		size_t n = strlen(queries[i]);

		for (size_t cut = 0; cut <= n; cut++) {
			struct ward_tty_scan q = { 0 };

			ward_tty_scan(&q, "\033[0m", 4); /* after a whole sequence */
			ward_tty_scan(&q, queries[i], cut);
			ward_tty_scan(&q, queries[i] + cut, n - cut);
			if (!q.asked) {
				char shown[64];
				size_t k = 0;

				for (const char *c = queries[i]; *c && k < sizeof(shown) - 5; c++)
					k += (size_t)snprintf(shown + k, sizeof(shown) - k,
							      *c > 32 && *c < 127 ? "%c" : "\\%03o",
							      (unsigned char)*c);
				snprintf(missed + strlen(missed), sizeof(missed) - strlen(missed),
					 " '%s'@%zu", shown, cut);
				break;
			}
		}
	}
	ck_assert_msg(!*missed, "these do not ask:%s", missed);
}
END_TEST

/* ward_tty_filter() fed in two pieces cut at cut, plus its end. */
static size_t filtered(const char *in, size_t n, size_t cut, char *out)
{
	struct ward_tty_filter f = { 0 };
	size_t k;

	k = ward_tty_filter(&f, in, cut, out);
	k += ward_tty_filter(&f, in + cut, n - cut, out + k);
	k += ward_tty_filter_end(&f, out + k);
	return k;
}

/* Output to a terminal through a pipe: what asks nothing passes as it is,
 * split anywhere (UTF-8 text whose bytes look like C1 controls, a
 * hyperlink with a '?' in its URL, a lone ESC at the end); every query
 * test_tty_queries knows is cut, the text around it kept. */
START_TEST(test_tty_filter)
{
	static const char *const quiet[] = {
		"plain text\r\n", "\033[1;31mred\033[0m", "\033]0;a title\a", "\033]2;t\033\\",
		"\033[2J\033[H", "\033[?25l\033[?25h", "\033[?1049h\033[?1049l", "\033(B\017",
		"\033[10;20H\033[K", "\033[!p", "\033]8;;http://x/\033\\link\033]8;;\033\\",
		"\033]8;;http://x/?a=1&b=?\033\\l\033]8;;\033\\", "\033]0;why?\a",
		"\033]8;id=?;http://x/\033\\l\033]8;;\033\\", "\033]21;foreground=red\a",
		"\304\233\304\235\304\220\304\237 \302\251 \342\202\254 \360\237\230\200",
		"\033[31m\304\233\033[0m", "\302", "\033\033[1m",
	};
	static const char *const queries[] = {
		"\033[6n", "\033[5n", "\033[c", "\033[>c", "\033[=c", "\033[21t", "\033[14t",
		"\033]11;?\a", "\033]4;1;?\033\\", "\033]52;c;?\a", "\033P$qm\033\\",
		"\033P+q544e\033\\", "\033[>0q", "\033[?2004$p", "\033[x", "\005", "\033Z",
		"\2336n", "\235" "11;?\a", "\302\2336n", "\302\235" "11;?\a", "\302\220$qm\033\\",
		"\342\302\2336n", "\033]0;\342\302\2336n", "\033\177[6n", "\033\177Z",
		"\033[\r6n", "\033[6\bn", "\033\r[6n", "\033[2\0011t", "\033]11;\r?\a",
		"\033[6\177n", "\033_Gi=31,a=q;AAAA\033\\", "\033[?u", "\033[?4m",
		"\033[?1;1;0S", "\033[1$w", "\033[1$u", "\033[1;1;1;1;1;1*y",
		"\033]10;\305\234;?\a", "\033]4;1;?;2;?\a", "\033]1337;ReportCellSize\a",
		"\033]5522;type=read\033\\", "\033[\"v",
		"\033]21;foreground=?;background=?\033\\",
		"\033]99;i=1:p=?;\033\\", "\033]22;?__current__\033\\", "\033]11;?", "\033P$qm",
	};
	char out[256], in[256];

	for (size_t i = 0; i < sizeof(quiet) / sizeof(quiet[0]); i++) {
		size_t n = strlen(quiet[i]);

		for (size_t cut = 0; cut <= n; cut++) {
			size_t k = filtered(quiet[i], n, cut, out);

			ck_assert_msg(k == n && memcmp(out, quiet[i], n) == 0,
				      "'%s' cut at %zu changed", quiet[i] + 1, cut);
		}
	}
	for (size_t i = 0; i < sizeof(queries) / sizeof(queries[0]); i++) {
		size_t n = (size_t)snprintf(in, sizeof(in), "A%s", queries[i]);
		bool unended = i + 2 >= sizeof(queries) / sizeof(queries[0]); /* the last two */

		/* after it, text (an unended string swallows it, as the
		 * terminal would) */
		if (!unended)
			n += (size_t)snprintf(in + n, sizeof(in) - n, "Z\033[1m");
		for (size_t cut = 0; cut <= n; cut++) {
			struct ward_tty_scan q = { 0 };
			size_t k = filtered(in, n, cut, out);

			ward_tty_scan(&q, out, k);
			ck_assert_msg(!q.asked && out[0] == 'A', "query %zu cut at %zu still asks",
				      i, cut);
			ck_assert_msg(unended || (k >= 5 && memcmp(out + k - 5, "Z\033[1m", 5) == 0),
				      "query %zu cut at %zu: what follows it lost", i, cut);
		}
	}
}
END_TEST

/* A C1 control inside a sequence (in 8 bits, or in UTF-8 as 0xc2 xx) ends it
 * for a terminal that takes C1 controls, as it would in text: a CSI there
 * starts a new one, ST ends an OSC, a query's included; a character whose
 * byte looks like one (U+015C, c5 9c) ends nothing. An OSC string left for
 * anything but ST is cancelled at the terminal: what follows may be cut, and
 * must not leave it open for a '?' after. ENQ, carried out inside a
 * sequence, is dropped there too. */
START_TEST(test_tty_filter_c1_inside)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "\033[\2336n", "" },
		{ "\033[1\302\2336n", "" },
		{ "\033]0;x\2336n", "\033]0;x\030" },
		{ "\033]0;x\302\2336n", "\033]0;x\030" },
		{ "\033]0;x\302\234\302\2336n", "\033]0;x\302\234\030" },
		{ "\033]0;x\234\2336n", "\033]0;x\234\030" },
		{ "\033]11;?\302\234x", "\033]11;\030x" },
		{ "\033]11;?\234x", "\033]11;\030x" },
		{ "\033]4;1;?\302\2336n", "\033]4;1;\030" },
		{ "\033]1337\302\234x", "\033]1337\030x" },
		{ "\033]0;x\302\220$qm\033\\x", "\033]0;x\030x" },
		{ "\033]0;\305\234?\a", "\033]0;\305\234?\a" },
		{ "\033]0;?\302\251\a", "\033]0;?\302\251\a" },
		{ "\033]0;\302\251\a", "\033]0;\302\251\a" },
		{ "\033[1\0052m", "\033[12m" },
		{ "\033]0;a\005b\a", "\033]0;ab\a" },
		{ "\033\005[6n", "" },
		{ "\033]0;\302\005\2336n", "\033]0;\030" },
		{ "\033]11;\033P$qm\033\\?\a", "\033]11;\030?\a" },
		{ "\033]11;\033Z?\a", "\033]11;\030?\a" },
		{ "\033]11;\220\033\\?\a", "\033]11;\030?\a" },
		{ "\033]0;x\033[1m", "\033]0;x\030\033[1m" },
	};
	char out[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = strlen(cases[i].in), want = strlen(cases[i].out);

		for (size_t cut = 0; cut <= n; cut++) {
			size_t k = filtered(cases[i].in, n, cut, out);

			ck_assert_msg(k == want && memcmp(out, cases[i].out, k) == 0,
				      "case %zu cut at %zu: %zu bytes, not as expected", i, cut, k);
		}
	}
}
END_TEST

/* What the terminal has of a sequence when the command stops writing, the
 * host's next output (its shell's prompt, keys echoed) must not be able to
 * finish into a query: a CSI is held until its final byte (its controls
 * carried out as they come), one too long to hold is cut; at the end a
 * held ESC or CSI is dropped and an unended OSC string cancelled. */
START_TEST(test_tty_filter_unfinished)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "tail\033", "tail" },
		{ "A\033[1$", "A" },
		{ "A\2331$", "A" },
		{ "\033[\r\n1m", "\r\n\033[1m" },
		{ "\033]0;x", "\033]0;x\030" },
		{ "\033]11;", "\033]11;\030" },
		{ "\033]0;x\033", "\033]0;x\030" },
	};
	struct ward_tty_filter f = { 0 };
	char in[256], out[sizeof(in) + WARD_TTY_FILTER_HOLD];
	size_t k;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = strlen(cases[i].in), want = strlen(cases[i].out);

		for (size_t cut = 0; cut <= n; cut++) {
			k = filtered(cases[i].in, n, cut, out);
			ck_assert_msg(k == want && memcmp(out, cases[i].out, k) == 0,
				      "case %zu cut at %zu: %zu bytes, not as expected", i, cut, k);
		}
	}
	/* nothing of a CSI before its final byte; all of it then */
	ck_assert_uint_eq(ward_tty_filter(&f, "A\033[38;5", 7, out), 1);
	ck_assert_uint_eq(ward_tty_filter(&f, ";1m", 3, out), 9);
	ck_assert(memcmp(out, "\033[38;5;1m", 9) == 0);
	memset(in, '1', sizeof(in));
	memcpy(in, "\033[", 2);
	in[sizeof(in) - 2] = 'm';
	in[sizeof(in) - 1] = 'Z';
	k = ward_tty_filter(&f, in, sizeof(in), out);
	ck_assert_msg(k == 1 && out[0] == 'Z', "a CSI too long to hold passed (%zu bytes)", k);
}
END_TEST

/* What a call writes fits the room its caller gives it,
 * WARD_TTY_FILTER_ROOM(n) bytes, however the output is made to grow: 64 KiB
 * of each pattern that makes it grow most (an OSC string restarted by a C1
 * control or abandoned for a new sequence, over and over), and random bytes
 * of the alphabet sequences are made of, fed in pieces up to 64 KiB. */
START_TEST(test_tty_filter_room)
{
	/* each the worst of its kind: a string restarted by a C1 control,
	 * 8-bit or UTF-8, ended by ST, or abandoned for a new sequence */
	static const char *const worst[] = {
		"\033]\235",	 "\235",	 "\033]\033]",	  "\033]\234",	 "\033]\302\234",
		"\033]\302\235", "\033]1;?\302\235", "\033]\302?\302", "\033[1\033]\235",
	};
	static const char alphabet[] = "\033\033\033][?;\\P1\a\030\302\233\234\235\220x"
				       "\177\005Z\342\237\303\033\033]]]\235\235\302\302";
	static char in[65536], out[WARD_TTY_FILTER_ROOM(sizeof(in))];
	struct ward_tty_filter f = { 0 };
	unsigned seed = 1;
	size_t k;

	for (size_t w = 0; w < sizeof(worst) / sizeof(worst[0]); w++) {
		size_t len = strlen(worst[w]);
		struct ward_tty_filter g = { 0 };

		for (size_t i = 0; i < sizeof(in); i++)
			in[i] = worst[w][i % len];
		k = ward_tty_filter(&g, in, sizeof(in), out);
		ck_assert_msg(k <= WARD_TTY_FILTER_ROOM(sizeof(in)), "pattern %zu: %zu bytes out", w,
			      k);
	}
	for (int round = 0; round < 3000; round++) {
		size_t n = round % 100 == 0 ? sizeof(in) : (size_t)rand_r(&seed) % 256;

		for (size_t i = 0; i < n; i++)
			in[i] = alphabet[(size_t)rand_r(&seed) % (sizeof(alphabet) - 1)];
		k = ward_tty_filter(&f, in, n, out);
		ck_assert_msg(k <= WARD_TTY_FILTER_ROOM(n), "round %d: %zu bytes in, %zu out", round,
			      n, k);
	}
	ck_assert_uint_le(ward_tty_filter_end(&f, out), 1);
}
END_TEST

/* What a terminal sends after a command's queries, up to the answer to
 * ward's DA1: its reports dropped (kitty's keyboard flags, XTSMGRAPHICS,
 * XTQMODKEYS, DECRPDE among them), the keys typed meanwhile kept, arrow
 * and function keys too, and what follows the answer left queued. */
START_TEST(test_tty_take_answers)
{
	static const char sent[] = "\033[12;1R" "a\033[?1u" "b\033[?1;0;256S" "\033[>4;2m"
				   "\033[24;80;1;1;1\"w" "\033[A\033[1;5u\033[2~" "\033]11;rgb:0/0/0\a"
				   "c\033[?62;22c" "zz";
	char keep[64], rest[8];
	int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC), s;
	size_t n;

	ck_assert_int_ge(m, 0);
	ck_assert_int_eq(unlockpt(m), 0);
	s = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	ck_assert_int_ge(s, 0);
	ck_assert_int_eq(write(m, sent, sizeof(sent) - 1), (ssize_t)sizeof(sent) - 1);
	n = ward_tty_take_answers(s, keep, sizeof(keep), 0);
	ck_assert_msg(n == 16 && memcmp(keep, "ab\033[A\033[1;5u\033[2~c", n) == 0, "kept %zu: %.*s",
		      n, (int)n, keep);
	ck_assert_int_eq(read(s, rest, sizeof(rest)), 2);
	ck_assert(memcmp(rest, "zz", 2) == 0);
	close(s);
	close(m);
}
END_TEST

/* The command's own DA1 questions (CSI c, CSI 0 c, DECID; not DA2, DA3),
 * less the answers it was given while it ran: what comes before the answer
 * to ward's question. */
START_TEST(test_tty_da1_owed)
{
	static const char out[] = "\033[c\033[0c\033[>c\033[=c\033Z\033[6n\2330c";
	static const char in[] = "\033[?62;22c\033[>1;10;0cx\033[?6";

	for (size_t cut = 0; cut <= sizeof(out) - 1; cut++) {
		struct ward_tty_scan q = { 0 };

		ward_tty_scan(&q, out, cut);
		ward_tty_scan(&q, out + cut, sizeof(out) - 1 - cut);
		ck_assert_uint_eq(q.da1s, 4);
		ck_assert_uint_eq(ward_tty_owed(&q), 4);
		ward_tty_scan_input(&q, in, cut % sizeof(in));
		ward_tty_scan_input(&q, in + cut % sizeof(in), sizeof(in) - 1 - cut % sizeof(in));
		ward_tty_scan_input(&q, "2c", 2);
		ck_assert_uint_eq(ward_tty_owed(&q), 2);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("supervise");
	TCase *tc = harness_tcase(s, "supervise", NULL);

	tcase_add_test(tc, test_tty_queries);
	tcase_add_test(tc, test_tty_da1_owed);
	tcase_add_test(tc, test_tty_take_answers);
	tcase_add_test(tc, test_tty_filter);
	tcase_add_test(tc, test_tty_filter_room);
	tcase_add_test(tc, test_tty_filter_c1_inside);
	tcase_add_test(tc, test_tty_filter_unfinished);

	tcase_add_test(tc, test_no_child_ends_at_eof);
	tcase_add_test(tc, test_no_child_deadline_kills_through_caller);
	return harness_main(s);
}
