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
		 "  echo 'libward.so exports ward_cmd_*'; exit 1; fi; echo clean",
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
	tc = harness_tcase(s, "library", "source");
	tcase_add_test(tc, test_library_has_no_cli);
	return harness_main(s);
}
