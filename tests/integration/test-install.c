/* test-install.c — `make install DESTDIR=...` gives headers, libward.so,
 * libward.a and ward.pc that a program can build and run against. Runs in
 * the tier that has the source tree (the caller's; the uid-65534 tier has only
 * a copy of the build tree). */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char src_dir[4096];

static const char *probe_source(void)
{
	char mk[4200];

	snprintf(src_dir, sizeof(src_dir), "%s/..", harness_build_dir());
	snprintf(mk, sizeof(mk), "%s/Makefile", src_dir);
	return access(mk, R_OK) == 0 && access(src_dir, W_OK) == 0 ?
		       NULL :
		       "no writable source tree beside the build tree";
}

static const char program[] =
	"#include <stdio.h>\n"
	"#include <ward/sandbox.h>\n"
	"int main(int argc, char **argv) {\n"
	"	struct ward_config cfg; struct ward_result res;\n"
	"	char *cmd[] = { \"/bin/echo\", \"from-the-library\", NULL };\n"
	"	ward_config_init(&cfg);\n"
	"	if (argc < 2 || ward_config_set_workdir(&cfg, argv[1], NULL) < 0) return 3;\n"
	"	if (ward_run(&cfg, cmd, &res, NULL) < 0) return 2;\n"
	"	fputs(res.output, stdout);\n"
	"	return res.exit_code;\n"
	"}\n";

START_TEST(test_install_and_link)
{
	char *dest = harness_tmpdir(), cmd[16384], *out = NULL;
	char *sh[] = { (char *)"/bin/sh", (char *)"-c", cmd, NULL };
	FILE *f;
	int status;

	snprintf(cmd, sizeof(cmd), "%s/prog.c", dest);
	f = fopen(cmd, "w");
	fputs(program, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "set -e; make -s -C '%s' B='%s' install PREFIX=/usr DESTDIR='%s' >/dev/null; "
		 "test -f '%s/usr/include/ward/sandbox.h'; test -f '%s/usr/lib/libward.a'; "
		 "export PKG_CONFIG_PATH='%s/usr/lib/pkgconfig' PKG_CONFIG_SYSROOT_DIR='%s' "
		 "PKG_CONFIG_ALLOW_SYSTEM_LIBS=1 PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1; "
		 "pkg-config --exists ward; "
		 "cc -o '%s/prog' '%s/prog.c' $(pkg-config --cflags --libs ward); "
		 "LD_LIBRARY_PATH='%s/usr/lib' '%s/prog' '%s' 2>&1",
		 src_dir, harness_build_dir(), dest, dest, dest, dest, dest, dest, dest, dest, dest, dest);
	status = harness_capture(sh, &out, NULL);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "install/link failed: %s", out);
	ck_assert_str_eq(out, "from-the-library\n");
	free(out);
	harness_rmtree(dest);
	free(dest);
}
END_TEST

/* Beside the library: the manual pages (man renders them from where they
 * were put), the completions where bash-completion, zsh and fish look, the
 * example policies; `make uninstall` leaves no file behind. */
START_TEST(test_install_pages_completions_examples)
{
	char *dest = harness_tmpdir(), cmd[16384], *out = NULL;
	char *sh[] = { (char *)"/bin/sh", (char *)"-c", cmd, NULL };
	int status;

	snprintf(cmd, sizeof(cmd),
		 "set -e; make -s -C '%s' B='%s' install PREFIX=/usr DESTDIR='%s' >/dev/null 2>&1; "
		 "d='%s/usr'; "
		 "for f in bin/ward libexec/ward/ward-tls share/man/man1/ward.1 share/man/man1/ward-serve.1 "
		 "share/man/man5/ward-policy.5 share/bash-completion/completions/ward "
		 "share/zsh/vendor-completions/_ward share/fish/vendor_completions.d/ward.fish; do "
		 "test -f \"$d/$f\" || { echo \"missing $f\"; exit 1; }; done; "
		 "n=$(ls \"$d/share/doc/ward/examples\"/*.json | wc -l); "
		 "[ \"$n\" -eq $(ls '%s/docs/examples'/*.json | wc -l) ] || { echo \"examples: $n\"; exit 1; }; "
		 "MANWIDTH=80 man -M \"$d/share/man\" ward 2>&1 | grep -q 'ward run' || { echo 'man ward'; exit 1; }; "
		 "MANWIDTH=80 man -M \"$d/share/man\" 5 ward-policy 2>&1 | grep -q 'rate_limit.per_minute' "
		 "|| { echo 'man 5 ward-policy'; exit 1; }; "
		 "grep -qx 'profile ward /usr/bin/ward flags=(unconfined) {' \"%s/etc/apparmor.d/ward\" "
		 "|| { echo 'apparmor profile'; exit 1; }; "
		 /* the installed ward finds its helper, wherever the tree was put */
		 "env -u WARD_TLS_HELPER \"$d/bin/ward\" doctor 2>&1 | grep -q '^ok *TLS helper' "
		 "|| { echo 'the installed ward does not find its TLS helper'; exit 1; }; "
		 "grep -qx '  userns,' \"%s/etc/apparmor.d/ward\" || { echo 'userns rule'; exit 1; }; "
		 "make -s -C '%s' B='%s' uninstall PREFIX=/usr DESTDIR='%s' >/dev/null; "
		 "left=$(find '%s' ! -type d); [ -z \"$left\" ] || { echo \"left: $left\"; exit 1; }; "
		 "echo ok",
		 src_dir, harness_build_dir(), dest, dest, src_dir, dest, dest, src_dir,
		 harness_build_dir(), dest, dest);
	status = harness_capture(sh, &out, NULL);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "install: %s", out);
	ck_assert_str_eq(out, "ok\n");
	free(out);
	harness_rmtree(dest);
	free(dest);
}
END_TEST

/* `make demo` installs what the build needs and nothing of the tests' (no
 * qemu, clang or ssh server); the test set holds the build set. */
START_TEST(test_demo_deps)
{
	char cmd[8192], *out = NULL;
	char *sh[] = { (char *)"/bin/sh", (char *)"-c", cmd, NULL };
	int status;

	snprintf(cmd, sizeof(cmd),
		 "set -e; cd '%s'; demo=$(scripts/deps.sh --list demo); test=$(scripts/deps.sh --list test); "
		 "for p in qemu-system-x86 clang openssh-server check nodejs gnuplot-nox zsh; do "
		 "printf '%%s\\n' \"$demo\" | grep -qx \"$p\" && { echo \"demo installs $p\"; exit 1; }; "
		 "printf '%%s\\n' \"$test\" | grep -qx \"$p\" || { echo \"test lacks $p\"; exit 1; }; done; "
		 "for p in $demo; do printf '%%s\\n' \"$test\" | grep -qx \"$p\" || "
		 "{ echo \"test lacks build package $p\"; exit 1; }; done; "
		 "printf '%%s\\n' \"$demo\" | grep -qx libseccomp-dev || { echo 'demo lacks libseccomp-dev'; exit 1; }; "
		 "n=$(make -n -s B='%s' demo | grep -c 'deps.sh') ; "
		 "make -n -s B='%s' demo | grep -q 'scripts/deps.sh build$' && "
		 "! make -n -s B='%s' demo | grep -q 'deps.sh test' || { echo \"make demo: $n\"; exit 1; }; "
		 "echo ok",
		 src_dir, harness_build_dir(), harness_build_dir(), harness_build_dir());
	status = harness_capture(sh, &out, NULL);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s", out);
	ck_assert_str_eq(out, "ok\n");
	free(out);
}
END_TEST

/* The CLI is not part of the library: no ward_cmd_*, no `ward run` option
 * parser, no server in libward.so or libward.a, exported or not (hidden
 * symbols are still dead code shipped). */
START_TEST(test_library_has_no_cli)
{
	char *dest = harness_tmpdir(), cmd[16384], *out = NULL;
	char *sh[] = { (char *)"/bin/sh", (char *)"-c", cmd, NULL };
	int status;

	snprintf(cmd, sizeof(cmd),
		 "set -e; make -s -C '%s' B='%s' install PREFIX=/usr DESTDIR='%s' >/dev/null; "
		 "L='%s/usr/lib'; CLI=' (ward_cmd_[a-z_]*|ward_run_options_[a-z_]*|ward_serve_loop|"
		 "serve_options_parse|ward_cli_front_door)$'; "
		 /* nm reads the library at all: its API is there */
		 "nm -D --defined-only \"$L/libward.so\" | grep -q ' ward_run$' || "
		 "{ echo 'nm -D: no ward_run in libward.so'; exit 1; }; "
		 "nm -D --defined-only \"$L/libward.so\" | grep -q ' ward_validate$' || "
		 "{ echo 'nm -D: no ward_validate in libward.so'; exit 1; }; "
		 "for f in \"$L/libward.so\" \"$L/libward.a\"; do "
		 "  if nm --defined-only \"$f\" 2>/dev/null | grep -E \"$CLI\"; then "
		 "    echo \"the CLI is in $f\"; exit 1; fi; done; "
		 "if nm -D --defined-only \"$L/libward.so\" | grep -E ' ward_cmd_'; then "
		 "  echo 'libward.so exports ward_cmd_*'; exit 1; fi; "
		 /* OpenSSL is ward-tls's alone (its start-up cost every command) */
		 "for f in \"$L/libward.so\" \"$L/libward.a\" \"$L/../bin/ward\"; do "
		 "  if nm \"$f\" 2>/dev/null | grep -E ' (SSL_CTX_new|EVP_PKEY_Q_keygen)$'; then "
		 "    echo \"OpenSSL is in $f\"; exit 1; fi; done; "
		 "if readelf -d \"$L/libward.so\" | grep -E 'libssl|libcrypto'; then "
		 "  echo 'libward.so needs OpenSSL'; exit 1; fi; echo clean",
		 src_dir, harness_build_dir(), dest, dest);
	status = harness_capture(sh, &out, NULL);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s", out);
	ck_assert_str_eq(out, "clean\n");
	free(out);
	harness_rmtree(dest);
	free(dest);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("install");
	TCase *tc;

	harness_add_probe("source", probe_source);
	tc = harness_tcase(s, "install", "source userns");
	tcase_add_test(tc, test_install_and_link);
	tc = harness_tcase(s, "files", "source");
	tcase_add_test(tc, test_install_pages_completions_examples);
	tcase_add_test(tc, test_demo_deps);
	tc = harness_tcase(s, "library", "source");
	tcase_add_test(tc, test_library_has_no_cli);
	return harness_main(s);
}
