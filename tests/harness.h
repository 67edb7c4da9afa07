/* harness.h — what every ward test binary shares.
 *
 * Each test binary builds one Check suite of test cases tagged with the
 * prerequisites they need, and hands it to harness_main():
 *
 *     Suite *s = suite_create("spawn");
 *     TCase *tc = harness_tcase(s, "view", "userns");
 *     tcase_add_test(tc, test_view);
 *     return harness_main(s);
 *
 * harness_main() probes each tag once. A tag whose probe fails excludes its
 * test cases, printing "# SKIP <tcase> (<tag>: <reason>)" for each case that
 * was selected ($CK_RUN_CASE, when set, selects one; the others are neither
 * run nor counted); if the tag is required by WARD_TEST_REQUIRE, the failed
 * probe is a test failure instead, so CI never skips silently.
 * WARD_TEST_REQUIRE is comma-separated tags; "all" is every tag this tier
 * can have, "-tag" excuses one from it. Tags that belong to one tier of
 * tests/run.sh by definition (root, cgroup1, netadmin in the root tier;
 * unpriv, nocgroup in the uid-65534 tier; source outside a copied build
 * tree, $WARD_TEST_COPY) are never required in the other: such a case is
 * skipped as "not for this tier". WARD_TEST_LIST_TAGS=1 prints each tag the
 * binary uses ("# TAG name ok|missing: why|n/a: why") and runs nothing.
 * Tests always run forked (CK_FORK): unshare, seccomp and Landlock cannot be
 * undone.
 *
 * Tags: root, unpriv, userns, landlock, seccomp, cgroup1, cgroup2, netadmin,
 * devtools (make, cc, git, python3, node and ip on PATH), and whatever a test
 * binary registers with harness_add_probe() (`tests/run.sh tags` lists them
 * all with their probes).
 */
#ifndef WARD_TEST_HARNESS_H
#define WARD_TEST_HARNESS_H

#include <check.h>
#include <stdbool.h>

/* A probe returns NULL when the prerequisite is there, or a short reason. */
typedef const char *(*harness_probe_fn)(void);

/* Add (or replace) a probe for a tag, before harness_main(). */
void harness_add_probe(const char *tag, harness_probe_fn fn);

/* A test case of suite s needing the space-separated tags (NULL or "" for none).
 * The timeout defaults to 120 s. */
TCase *harness_tcase(Suite *s, const char *name, const char *tags);

/* Probe, exclude, run, print Check's summary; returns the process exit status. */
int harness_main(Suite *s);

/* Where the built tree is: $WARD_BUILD, else two levels up from this binary
 * (build/tests/unit/x -> build). Returns a static string. */
const char *harness_build_dir(void);

/* harness_build_dir() + "/" + rel, malloc'd. */
char *harness_path(const char *rel);

/* Whether the probe for tag passes (runs it once, caches). */
bool harness_have(const char *tag);

/* "--policy=FILE" for tests of the sandbox's own layers through the CLI:
 * a policy with the front door's validators and rate limits off, so that a
 * test can run what the validators would refuse (an attack on a protected
 * path) and hundreds of commands. FILE is $WARD_TEST_FENCES_POLICY (set by
 * tests/run.sh), else one written under $TMPDIR. Returns a static string. */
const char *harness_fences_policy_opt(void);

/* Whether any process on the host has `marker` in its command line (its
 * arguments joined by spaces), and, when prefix is not NULL, a command line
 * that starts with prefix ("sleep ": the sleep itself, not the shell that
 * started it). */
bool harness_cmdline_alive(const char *prefix, const char *marker);

/* As root: the calling test process moves into a mount namespace of its own,
 * private from the host's, so that what other processes on the machine mount
 * or unmount meanwhile does not show in its /proc/self/mountinfo — what ward
 * leaves behind still does, being made in this namespace. With fresh_shm, an
 * empty tmpfs of its own over /dev/shm too. Returns false for any other user,
 * who cannot mount in the namespace it runs in at all (so ward, run by it,
 * has nothing there to leave). A failure to set it up fails the test. */
bool harness_private_mounts(bool fresh_shm);

/* A number of seconds for `sleep` that no other process of the machine has
 * in its command line: 3600 plus a count, a point, then this process's pid
 * in eight digits and the count again ("3601.0001234501"), so that a test
 * looking for its sleeper among every process finds its own only. Returns a
 * static string, overwritten by the next call. */
const char *harness_sleep_marker(void);

/* pidfds (O_CLOEXEC) of every process whose command line starts with
 * prefix and has marker, at most max; returns how many. */
int harness_pidfds_of(const char *prefix, const char *marker, int *fds, int max);

/* Block until every pidfd of fds says its process has exited, then close
 * them. No clock: a process that never ends is the test's own timeout. */
void harness_wait_gone(int *fds, int n);

/* A fresh world-readable (0755) temporary directory under $TMPDIR or /tmp,
 * malloc'd; harness_rmtree() removes a tree. */
char *harness_tmpdir(void);
void harness_rmtree(const char *path);

/* Run argv with stdin from /dev/null, capture stdout (and stderr if
 * err_out != NULL) as malloc'd NUL-terminated strings; returns the wait status. */
int harness_capture(char *const argv[], char **out, char **err_out);

/* The same, feeding `input` on stdin. */
int harness_capture_input(char *const argv[], const char *input, char **out, char **err_out);

/* A whole file, malloc'd and NUL-terminated; NULL (errno set) when it cannot
 * be opened or read. */
char *harness_slurp(const char *path);

/* The options `ward SUB --help` lists on its usage lines and option table
 * ("-c", "--workdir"...), one a line, malloc'd; fails the test if the help
 * does not exit 0. */
char *harness_help_options(const char *sub);

#endif
