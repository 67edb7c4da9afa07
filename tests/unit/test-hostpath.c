/* test-hostpath.c — the rule for host paths ward is told to use (pure), and
 * the walk that applies it, on the caller's own files: symbolic links,
 * group- or world-writable directories, hard links, FIFOs, descriptors
 * named as /dev/fd/N, and the state directory's choice. The same rule
 * against another user's files is tests/escape/test-state.c. */
#include "harness.h"
#include "runtime/util/util-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct stat mk(mode_t type_mode, uid_t uid, nlink_t links)
{
	struct stat st;

	memset(&st, 0, sizeof(st));
	st.st_mode = type_mode;
	st.st_uid = uid;
	st.st_nlink = links;
	return st;
}

static const struct {
	enum ward_hostpath_role role;
	mode_t mode;
	uid_t uid;
	nlink_t links;
	const char *why; /* NULL: accepted; else a part of the reason */
} judged[] = {
	/* on the way: root's or ours, writable by no one else unless sticky */
	{ WARD_HOSTPATH_ANCESTOR, S_IFDIR | 0755, 0, 2, NULL },
	{ WARD_HOSTPATH_ANCESTOR, S_IFDIR | 0700, 1000, 2, NULL },
	{ WARD_HOSTPATH_ANCESTOR, S_IFDIR | 01777, 0, 2, NULL },
	{ WARD_HOSTPATH_ANCESTOR, S_IFDIR | 01777, 1000, 2, NULL },
	{ WARD_HOSTPATH_ANCESTOR, S_IFDIR | 01777, 1001, 2, "owned by uid 1001 (not you or root)" },
	{ WARD_HOSTPATH_ANCESTOR, S_IFDIR | 0755, 1001, 2, "owned by uid 1001" },
	{ WARD_HOSTPATH_ANCESTOR, S_IFDIR | 0777, 0, 2, "writable by others" },
	{ WARD_HOSTPATH_ANCESTOR, S_IFDIR | 0775, 1000, 2, "writable by its group" },
	{ WARD_HOSTPATH_ANCESTOR, S_IFDIR | 02775, 1000, 2, "writable by its group" },
	{ WARD_HOSTPATH_ANCESTOR, S_IFREG | 0755, 0, 1, "not a directory" },
	/* the state directory: ours alone, sticky or not, never root's */
	{ WARD_HOSTPATH_PRIVATE_DIR, S_IFDIR | 0700, 1000, 2, NULL },
	{ WARD_HOSTPATH_PRIVATE_DIR, S_IFDIR | 0755, 1000, 2, NULL },
	{ WARD_HOSTPATH_PRIVATE_DIR, S_IFDIR | 0700, 0, 2, "owned by uid 0 (not you)" },
	{ WARD_HOSTPATH_PRIVATE_DIR, S_IFDIR | 01777, 1000, 2, "writable by others" },
	{ WARD_HOSTPATH_PRIVATE_DIR, S_IFDIR | 0770, 1000, 2, "writable by its group" },
	{ WARD_HOSTPATH_PRIVATE_DIR, S_IFLNK | 0777, 1000, 1, "not a directory" },
	/* the rate limit's file */
	{ WARD_HOSTPATH_PRIVATE_FILE, S_IFREG | 0600, 1000, 1, NULL },
	{ WARD_HOSTPATH_PRIVATE_FILE, S_IFREG | 0600, 1000, 2, "has 2 hard links" },
	{ WARD_HOSTPATH_PRIVATE_FILE, S_IFREG | 0600, 0, 1, "owned by uid 0" },
	{ WARD_HOSTPATH_PRIVATE_FILE, S_IFIFO | 0600, 1000, 1, "not a regular file" },
	/* a policy: ours or root's, writable by no one else; a pipe is fine */
	{ WARD_HOSTPATH_CONFIG, S_IFREG | 0644, 0, 1, NULL },
	{ WARD_HOSTPATH_CONFIG, S_IFREG | 0600, 1000, 3, NULL },
	{ WARD_HOSTPATH_CONFIG, S_IFIFO | 0600, 1000, 1, NULL },
	{ WARD_HOSTPATH_CONFIG, S_IFREG | 0644, 1001, 1, "owned by uid 1001 (not you or root)" },
	{ WARD_HOSTPATH_CONFIG, S_IFREG | 0664, 1000, 1, "writable by its group" },
	{ WARD_HOSTPATH_CONFIG, S_IFREG | 0646, 0, 1, "writable by others" },
	{ WARD_HOSTPATH_CONFIG, S_IFREG | 01666, 0, 1, "writable by others" },
	{ WARD_HOSTPATH_CONFIG, S_IFDIR | 0755, 1000, 2, "not a regular file" },
	{ WARD_HOSTPATH_CONFIG, S_IFCHR | 0600, 1000, 1, "not a regular file" },
	/* --net-log: ours or root's, one link */
	{ WARD_HOSTPATH_LOG, S_IFREG | 0600, 1000, 1, NULL },
	{ WARD_HOSTPATH_LOG, S_IFREG | 0600, 0, 1, NULL },
	{ WARD_HOSTPATH_LOG, S_IFREG | 0640, 0, 2, "has 2 hard links" },
	{ WARD_HOSTPATH_LOG, S_IFREG | 0620, 1000, 1, "writable by its group" },
	{ WARD_HOSTPATH_LOG, S_IFIFO | 0600, 1000, 1, "not a regular file" },
};

START_TEST(test_judge)
{
	for (size_t i = 0; i < sizeof(judged) / sizeof(judged[0]); i++) {
		struct stat st = mk(judged[i].mode, judged[i].uid, judged[i].links);
		char why[96];
		const char *got = ward_hostpath_judge(judged[i].role, &st, 1000, why, sizeof(why));

		if (!judged[i].why)
			ck_assert_msg(!got, "case %zu: refused: %s", i, got);
		else
			ck_assert_msg(got && strstr(got, judged[i].why), "case %zu: %s, not '%s'", i,
				      got ? got : "accepted", judged[i].why);
	}
}
END_TEST

START_TEST(test_may_follow)
{
	struct stat st = mk(S_IFLNK | 0777, 0, 1);

	ck_assert(ward_hostpath_may_follow(&st, 1000));
	st.st_uid = 1000;
	ck_assert(ward_hostpath_may_follow(&st, 1000));
	st.st_uid = 1001;
	ck_assert(!ward_hostpath_may_follow(&st, 1000));
}
END_TEST

static char *dir;

static void setup(void)
{
	dir = harness_tmpdir();
}

static void teardown(void)
{
	harness_rmtree(dir);
	free(dir);
}

static char *at(const char *rel)
{
	static char buf[8][4200];
	static int k;
	char *b = buf[k++ % 8];

	snprintf(b, sizeof(buf[0]), "%s/%s", dir, rel);
	return b;
}

/* open_file as LOG; the error's message when it fails (static), else NULL */
static const char *log_refused(const char *path)
{
	static char msg[WARD_ERROR_MESSAGE_MAX];
	struct ward_error *err = NULL;
	int fd = ward_hostpath_open_file("network log", path, WARD_HOSTPATH_LOG,
					 O_WRONLY | O_APPEND | O_CREAT, 0600, &err);

	if (fd >= 0) {
		close(fd);
		return NULL;
	}
	ck_assert_ptr_nonnull(err);
	snprintf(msg, sizeof(msg), "%s", err->message);
	ward_error_free(err);
	return msg;
}

START_TEST(test_open_file)
{
	struct stat st;
	const char *m;
	int fd;

	/* made 0600, appended to */
	ck_assert_ptr_null(log_refused(at("log")));
	ck_assert_int_eq(stat(at("log"), &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	fd = ward_hostpath_open_file("network log", at("log"), WARD_HOSTPATH_LOG,
				     O_WRONLY | O_APPEND | O_CREAT, 0600, NULL);
	ck_assert_int_ge(fd, 0);
	ck_assert(fcntl(fd, F_GETFL) & O_APPEND);
	ck_assert(!(fcntl(fd, F_GETFL) & O_NONBLOCK));
	ck_assert(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	/* a final symbolic link is never followed, even our own */
	ck_assert_int_eq(symlink(at("log"), at("link")), 0);
	m = log_refused(at("link"));
	ck_assert_msg(m && strstr(m, "symbolic link") && strstr(m, at("link")), "%s", m);
	/* a second name of the file */
	ck_assert_int_eq(link(at("log"), at("hard")), 0);
	m = log_refused(at("hard"));
	ck_assert_msg(m && strstr(m, "hard links"), "%s", m);
	unlink(at("hard"));
	/* writable by others: the file, or a directory on the way (not sticky) */
	ck_assert_int_eq(chmod(at("log"), 0620), 0);
	m = log_refused(at("log"));
	ck_assert_msg(m && strstr(m, "writable by its group"), "%s", m);
	ck_assert_int_eq(chmod(at("log"), 0600), 0);
	ck_assert_int_eq(mkdir(at("open"), 0777), 0);
	ck_assert_int_eq(chmod(at("open"), 0777), 0);
	m = log_refused(at("open/log"));
	ck_assert_msg(m && strstr(m, "writable by others") && strstr(m, at("open")), "%s", m);
	ck_assert_int_eq(access(at("open/log"), F_OK), -1); /* nothing made */
	/* sticky: fine */
	ck_assert_int_eq(chmod(at("open"), 01777), 0);
	ck_assert_ptr_null(log_refused(at("open/log")));
	/* a FIFO is no log (and does not hang ward) */
	ck_assert_int_eq(mkfifo(at("fifo"), 0600), 0);
	ck_assert_ptr_nonnull(log_refused(at("fifo")));
}
END_TEST

START_TEST(test_open_walk)
{
	struct ward_error *err = NULL;
	char cwd[4200];
	int fd;

	/* a symbolic link of ours on the way is followed, its target walked */
	ck_assert_int_eq(mkdir(at("real"), 0755), 0);
	ck_assert_int_eq(symlink(at("real"), at("via")), 0);
	ck_assert_int_eq(symlink("real", at("rel")), 0);
	ck_assert_ptr_null(log_refused(at("via/log")));
	ck_assert_ptr_null(log_refused(at("rel/log")));
	ck_assert_int_eq(access(at("real/log"), F_OK), 0);
	/* ... and its target judged: a world-writable one is refused */
	ck_assert_int_eq(chmod(at("real"), 0777), 0);
	ck_assert_ptr_nonnull(log_refused(at("via/log")));
	ck_assert_int_eq(chmod(at("real"), 0755), 0);
	/* a link loop ends */
	ck_assert_int_eq(symlink(at("loop2"), at("loop1")), 0);
	ck_assert_int_eq(symlink(at("loop1"), at("loop2")), 0);
	ck_assert_ptr_nonnull(log_refused(at("loop1/log")));
	/* relative to the working directory, whose path is walked too */
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	ck_assert_int_eq(chdir(at("real")), 0);
	ck_assert_ptr_null(log_refused("rlog"));
	ck_assert_ptr_null(log_refused("../real/./rlog"));
	ck_assert_int_eq(chdir(cwd), 0);
	ck_assert_int_eq(access(at("real/rlog"), F_OK), 0);
	/* directories: made 0700 below an existing base, or "could be made" */
	ck_assert_int_eq(ward_hostpath_open_dir("state directory", dir, "a/b", false, true, &err),
			 WARD_HOSTPATH_ABSENT);
	ck_assert_int_eq(access(at("a"), F_OK), -1);
	fd = ward_hostpath_open_dir("state directory", dir, "a/b", true, true, &err);
	ck_assert_int_ge(fd, 0);
	close(fd);
	{
		struct stat st;

		ck_assert_int_eq(stat(at("a/b"), &st), 0);
		ck_assert_uint_eq(st.st_mode & 0777, 0700);
	}
	/* the base must exist */
	ck_assert_int_eq(ward_hostpath_open_dir("state directory", at("none"), "x", true, true,
						&err),
			 -1);
	ck_assert_msg(strstr(err->message, "does not exist"), "%s", err->message);
	ward_error_free(err);
	err = NULL;
	/* the last one ours alone */
	ck_assert_int_eq(chmod(at("a/b"), 0770), 0);
	ck_assert_int_eq(ward_hostpath_open_dir("state directory", dir, "a/b", true, true, &err),
			 -1);
	ck_assert_msg(strstr(err->message, "writable by its group"), "%s", err->message);
	ward_error_free(err);
}
END_TEST

START_TEST(test_own_descriptors)
{
	int p[2], fd;
	char buf[8] = "";

	/* --policy <(...): the shell's pipe, read as given */
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(write(p[1], "{}", 2), 2);
	close(p[1]);
	{
		char path[32];

		snprintf(path, sizeof(path), "/dev/fd/%d", p[0]);
		fd = ward_hostpath_open_file("policy", path, WARD_HOSTPATH_CONFIG, O_RDONLY, 0, NULL);
	}
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(read(fd, buf, sizeof(buf)), 2);
	close(fd);
	close(p[0]);
	/* not for a file ward writes */
	ck_assert_int_lt(ward_hostpath_open_file("network log", "/dev/fd/1", WARD_HOSTPATH_LOG,
						 O_WRONLY | O_APPEND, 0, NULL),
			 0);
}
END_TEST

START_TEST(test_state_choice)
{
	struct ward_state_choice c;
	struct ward_error *err = NULL;
	char want[4200];

	unsetenv("XDG_RUNTIME_DIR");
	setenv("XDG_STATE_HOME", at("xdg"), 1);
	setenv("HOME", at("home"), 1);
	ck_assert_int_eq(mkdir(at("home"), 0755), 0);
	/* nothing made without create */
	ck_assert_int_eq(ward_state_choose(NULL, false, &c, &err), 0);
	ck_assert_str_eq(c.path, at("xdg/ward"));
	ck_assert_str_eq(c.source, "XDG_STATE_HOME");
	ck_assert_int_eq(c.fd, -1);
	ck_assert_ptr_null(c.skipped);
	ward_state_choice_release(&c);
	ck_assert_int_eq(access(at("xdg"), F_OK), -1);
	ck_assert_int_eq(ward_state_choose(NULL, true, &c, &err), 0);
	ck_assert_int_ge(c.fd, 0);
	ward_state_choice_release(&c);
	/* a state directory others may write is passed over, and said so */
	ck_assert_int_eq(chmod(at("xdg/ward"), 0777), 0);
	ck_assert_int_eq(ward_state_choose(NULL, true, &c, &err), 0);
	ck_assert_str_eq(c.source, "HOME");
	snprintf(want, sizeof(want), "%s/.local/state/ward", at("home"));
	ck_assert_str_eq(c.path, want);
	ck_assert_msg(c.skipped && strstr(c.skipped, at("xdg/ward")) &&
			      strstr(c.skipped, "writable by others"),
		      "%s", c.skipped ? c.skipped : "(none)");
	/* and what ward makes in it is judged alike */
	{
		int fd = ward_state_subdir(c.fd, c.path, "runs", true, &err);

		ck_assert_int_ge(fd, 0);
		close(fd);
		ck_assert_int_eq(symlink(dir, at("home/.local/state/ward/changes")), 0);
		ck_assert_int_lt(ward_state_subdir(c.fd, c.path, "changes", true, &err), 0);
		ck_assert_msg(strstr(err->message, "symbolic link"), "%s", err->message);
		ward_error_free(err);
		err = NULL;
	}
	ward_state_choice_release(&c);
	/* a directory the program names is used or refused, never replaced */
	ck_assert_int_eq(ward_state_choose(at("xdg/ward"), true, &c, &err), -1);
	ck_assert_msg(strstr(err->message, "writable by others"), "%s", err->message);
	ward_error_free(err);
	ward_state_choice_release(&c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hostpath");
	TCase *pure = harness_tcase(s, "judge", NULL);
	TCase *fs = harness_tcase(s, "walk", NULL);

	tcase_add_test(pure, test_judge);
	tcase_add_test(pure, test_may_follow);
	tcase_add_checked_fixture(fs, setup, teardown);
	tcase_add_test(fs, test_open_file);
	tcase_add_test(fs, test_open_walk);
	tcase_add_test(fs, test_own_descriptors);
	tcase_add_test(fs, test_state_choice);
	return harness_main(s);
}
