/* test-mcp-sdk.c — ward serve as an MCP client built on the official
 * TypeScript SDK (@modelcontextprotocol/sdk) uses it (issue 17): the node
 * script tests/mcp-client/client.mjs connects over stdio, lists the tools,
 * calls the shell tool (the SDK validates structuredContent against the
 * tool's outputSchema), keeps a variable across calls, follows progress,
 * cancels a command, and answers elicitation for a command on the approval
 * list (accept runs it, decline refuses it). The SDK is installed by
 * scripts/deps.sh test (npm ci in tests/mcp-client); without it the tag
 * mcp-sdk is missing, a failure where WARD_TEST_REQUIRE asks for it. */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char src_dir[4096];

static const char *probe_source(void)
{
	char p[4200];

	snprintf(src_dir, sizeof(src_dir), "%s/..", harness_build_dir());
	snprintf(p, sizeof(p), "%s/tests/mcp-client/client.mjs", src_dir);
	return access(p, R_OK) == 0 ? NULL : "no source tree (tests/mcp-client) beside the build tree";
}

static const char *probe_sdk(void)
{
	char p[4300];

	if (access("/usr/bin/node", X_OK) != 0)
		return "no /usr/bin/node (nodejs)";
	if (probe_source())
		return "no source tree";
	snprintf(p, sizeof(p),
		 "%s/tests/mcp-client/node_modules/@modelcontextprotocol/sdk/package.json", src_dir);
	return access(p, R_OK) == 0 ? NULL :
				      "the MCP SDK is not installed (scripts/deps.sh test: npm ci "
				      "in tests/mcp-client)";
}

START_TEST(test_sdk_client)
{
	char *ward = harness_path("ward"), *workdir = harness_tmpdir(), script[4300], *out = NULL;
	int po[2], status;
	size_t len = 0;
	FILE *f;
	pid_t pid;

	snprintf(script, sizeof(script), "%s/tests/mcp-client/client.mjs", src_dir);
	ck_assert_int_eq(pipe(po), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(po[1], 1);
		dup2(po[1], 2);
		execl("/usr/bin/node", "node", script, ward, workdir, (char *)NULL);
		_exit(127);
	}
	close(po[1]);
	f = fdopen(po[0], "r");
	ck_assert_ptr_nonnull(f);
	{
		char buf[4096];
		size_t n;
		FILE *m = open_memstream(&out, &len);

		while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
			fwrite(buf, 1, n, m);
		fclose(m);
	}
	fclose(f);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
			      strstr(out, "mcp-sdk: all passed"),
		      "the SDK client failed (status %d):\n%s", status, out);
	free(out);
	harness_rmtree(workdir);
	free(workdir);
	free(ward);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("mcp-sdk");
	TCase *tc;

	harness_add_probe("source", probe_source);
	harness_add_probe("mcp-sdk", probe_sdk);
	tc = harness_tcase(s, "sdk", "source mcp-sdk userns");
	tcase_add_test(tc, test_sdk_client);
	return harness_main(s);
}
