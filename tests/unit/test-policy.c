/* test-policy.c — the policy file: every key applied, every mistake named. */
#include "harness.h"
#include "ward/policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int apply(struct ward_config *cfg, const char *text, char *msg, size_t size)
{
	struct ward_error *err = NULL;
	int rc;

	ward_config_init(cfg);
	rc = ward_policy_apply(text, strlen(text), "p.json", cfg, &err);
	if (rc < 0) {
		ck_assert_int_eq(err->kind, WARD_ERR_INVALID_PARAMETERS);
		snprintf(msg, size, "%s", err->message);
		ward_error_free(err);
	}
	return rc;
}

static void expect_error(const char *text, const char *needle)
{
	struct ward_config cfg;
	char msg[1024] = "";

	ck_assert_msg(apply(&cfg, text, msg, sizeof(msg)) < 0, "accepted: %s", text);
	ck_assert_msg(strstr(msg, needle) && strstr(msg, "policy 'p.json'"),
		      "for %s: '%s' lacks '%s'", text, msg, needle);
	ward_config_release(&cfg);
}

START_TEST(test_everything)
{
	struct ward_config cfg;
	char msg[1024];
	const char *text =
		"{\"sandbox\": \"off\", \"timeout\": 30, \"namespaces\": [\"user\", \"pid\"],"
		" \"hostname\": \"box\", \"uid0\": true,"
		" \"env\": {\"clear\": true, \"set\": {\"CI\": \"1\", \"LANG\": \"C\"}},"
		" \"mounts\": [{\"type\": \"ro-bind\", \"source\": \"/etc\", \"target\": \"/e\"},"
		"            {\"type\": \"tmpfs\", \"target\": \"/scratch\"}]}";

	ck_assert_int_eq(apply(&cfg, text, msg, sizeof(msg)), 0);
	ck_assert_int_eq(cfg.mode, WARD_SANDBOX_OFF);
	ck_assert_int_eq(cfg.timeout, 30);
	ck_assert_uint_eq(cfg.namespaces, WARD_NS_USER | WARD_NS_PID);
	ck_assert(!cfg.view); /* no mount namespace */
	ck_assert_str_eq(cfg.hostname, "box");
	ck_assert(cfg.uid0);
	ck_assert(cfg.clearenv);
	ck_assert_uint_eq(cfg.n_setenv, 2);
	ck_assert_uint_eq(cfg.n_mounts, 2);
	ck_assert_str_eq(cfg.mounts[0].target, "/e");
	ck_assert_int_eq(cfg.mounts[1].kind, WARD_MOUNT_TMPFS);
	ward_config_release(&cfg);
	ck_assert_int_eq(apply(&cfg, "{}", msg, sizeof(msg)), 0);
	ck_assert_int_eq(cfg.timeout, 120);
	ck_assert(!cfg.shell_bash);
	ward_config_release(&cfg);
	/* the shell a command string runs with */
	ck_assert_int_eq(apply(&cfg, "{\"shell\": \"bash\"}", msg, sizeof(msg)), 0);
	ck_assert(cfg.shell_bash);
	ward_config_release(&cfg);
	ck_assert_int_eq(apply(&cfg, "{\"shell\": \"sh\"}", msg, sizeof(msg)), 0);
	ck_assert(!cfg.shell_bash);
	ward_config_release(&cfg);
}
END_TEST

START_TEST(test_mistakes)
{
	expect_error("{", "not valid JSON");
	expect_error("[]", "must be a JSON object");
	expect_error("{\"timout\": 5}", "unknown key \"timout\"");
	expect_error("{\"sandbox\": \"maybe\"}", "unknown mode \"maybe\"");
	expect_error("{\"sandbox\": 1}", "sandbox: must be a string, got an integer");
	expect_error("{\"timeout\": 0}", "timeout: timeout must be at least 1 second");
	expect_error("{\"timeout\": 2.5}", "timeout: must be an integer");
	expect_error("{\"namespaces\": [\"user\", \"time\"]}", "unknown namespace \"time\"");
	expect_error("{\"namespaces\": \"user\"}", "must be an array");
	expect_error("{\"uid0\": \"yes\"}", "uid0: must be a boolean, got a string");
	expect_error("{\"shell\": \"zsh\"}", "shell: unknown shell \"zsh\" (known: sh, bash)");
	expect_error("{\"shell\": true}", "shell: must be a string, got a boolean");
	expect_error("{\"env\": {\"sett\": {}}}", "env: unknown key \"sett\"");
	expect_error("{\"env\": {\"set\": {\"A\": 1}}}", "env.set.A: must be a string, got an integer");
	expect_error("{\"env\": {\"set\": {\"1A\": \"x\"}}}", "not a valid variable name");
	expect_error("{\"mounts\": [{\"type\": \"bind\", \"target\": \"/x\"}]}",
		     "mounts[0].source: is missing");
	expect_error("{\"mounts\": [{\"type\": \"overlay\", \"target\": \"/x\"}]}",
		     "unknown type \"overlay\"");
	expect_error("{\"mounts\": [{\"type\": \"tmpfs\", \"target\": \"rel\"}]}",
		     "not an absolute path");
	expect_error("{\"mounts\": [{\"type\": \"tmpfs\", \"target\": \"/t\", \"source\": \"/s\"}]}",
		     "a tmpfs has no source");
	expect_error("{\"mounts\": [{\"type\": \"bind\", \"source\": \"/no/such\", \"target\": \"/x\"}]}",
		     "/no/such");
	expect_error("{\"mounts\": [{\"type\": \"tmpfs\", \"target\": \"/x\", \"mode\": 1}]}",
		     "mounts[0]: unknown key \"mode\"");
	expect_error("{\"hostname\": \"\"}", "hostname: must be a non-empty string");
	expect_error("{\"sandbox\": \"off\", \"sandbox\": \"required\"}", "duplicate");
}
END_TEST

START_TEST(test_unknown_key_lists_valid)
{
	/* an unknown key is refused with the valid keys of its level, every
	 * level: the top, a section, an array element, the session parser's */
	expect_error("{\"timout\": 5}", "unknown key \"timout\" (valid: sandbox, timeout, "
					  "namespaces, hostname, uid0, allow_nested, env, mounts, landlock, "
					  "seccomp, network, workdir, validators, rate_limit, "
					  "session, limits, shell)");
	expect_error("{\"network\": {\"allow_host\": []}}", "(valid: mode, allow_hosts, ");
	expect_error("{\"env\": {\"sett\": {}}}", "env: unknown key \"sett\" (valid: ");
	expect_error("{\"rate_limit\": {\"per_min\": 1}}", "per_minute");
	expect_error("{\"mounts\": [{\"type\": \"tmpfs\", \"target\": \"/x\", \"mode\": 1}]}",
		     "mounts[0]: unknown key \"mode\" (valid: ");
	expect_error("{\"session\": {\"isolate\": \"shared\"}}",
		     "session: unknown key \"isolate\" (valid: isolation, timeout, env, ssh, limits)");
	expect_error("{\"session\": {\"ssh\": {\"hots\": \"h\"}}}",
		     "session.ssh: unknown key \"hots\" (valid: ");
}
END_TEST

/* One wording for the shape of every section (runtime/jschema.c): the key's
 * whole path, what it must be and what it was, at every depth. */
START_TEST(test_shape_names_key)
{
	expect_error("{\"network\": {\"proxy_port\": \"x\"}}",
		     "policy 'p.json': network.proxy_port: must be an integer, got a string");
	expect_error("{\"mounts\": [{\"type\": 1, \"target\": \"/x\"}]}",
		     "mounts[0].type: must be a string, got an integer");
	expect_error("{\"mounts\": [{\"target\": \"/x\"}]}", "mounts[0].type: is missing");
	expect_error("{\"mounts\": [{\"typ\": \"tmpfs\", \"target\": \"/x\"}]}",
		     "mounts[0]: unknown key \"typ\" (valid: type, source, target)");
	expect_error("{\"mounts\": {}}", "mounts: must be an array, got an object");
	expect_error("{\"seccomp\": []}", "seccomp: must be an object, got an array");
	expect_error("{\"seccomp\": {\"allow_ptrace\": 1}}",
		     "seccomp.allow_ptrace: must be a boolean, got an integer");
	expect_error("{\"landlock\": {\"mode\": \"best-effort\", \"abi_max\": true}}",
		     "landlock.abi_max: must be an integer, got a boolean");
	expect_error("{\"network\": {\"credentials\": [{\"host\": \"h\", \"header\": \"X\"}]}}",
		     "network.credentials[0].value: is missing");
	expect_error("{\"validators\": {\"add\": [{\"program\": \"x\"}]}}",
		     "validators.add[0].id: is missing");
	expect_error("{\"validators\": {\"add\": [{\"id\": \"x\", \"text\": 3}]}}",
		     "validators.add[0].text: must be a string, got an integer");
	expect_error("{\"session\": {\"limits\": {\"sessions\": \"2\"}}}",
		     "session.limits.sessions: must be an integer, got a string");
	expect_error("{\"session\": {\"ssh\": {\"port\": \"22\"}}}",
		     "session.ssh.port: must be an integer, got a string");
	expect_error("{\"rate_limit\": {\"per_minute\": 1, \"per_day\": 1}}",
		     "rate_limit: unknown key \"per_day\" (valid: per_minute, per_hour)");
}
END_TEST

/* A policy's proxy rule asks for the proxy as the flags do: implied without
 * network.mode, refused with another mode naming both keys. */
START_TEST(test_network_rules_imply_proxy)
{
	static const char *const rules[] = {
		"\"allow_hosts\": [\"example.com\"]", "\"deny_hosts\": [\"example.com\"]",
		"\"allow_cidrs\": [\"10.0.0.0/8\"]",	"\"allow_ports\": [8080]",
		"\"credentials\": [{\"host\": \"a.example\", \"header\": \"X\", \"value\": \"v\"}]",
	};
	struct ward_config cfg;
	char text[512], msg[1024];

	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		snprintf(text, sizeof(text), "{\"network\": {%s}}", rules[i]);
		ck_assert_msg(apply(&cfg, text, msg, sizeof(msg)) == 0, "%s: %s", text, msg);
		ck_assert_int_eq(cfg.net, WARD_NET_PROXY);
		ward_config_release(&cfg);
		snprintf(text, sizeof(text), "{\"network\": {\"mode\": \"proxy\", %s}}", rules[i]);
		ck_assert_msg(apply(&cfg, text, msg, sizeof(msg)) == 0, "%s: %s", text, msg);
		ck_assert_int_eq(cfg.net, WARD_NET_PROXY);
		ward_config_release(&cfg);
		snprintf(text, sizeof(text), "{\"network\": {\"mode\": \"none\", %s}}", rules[i]);
		expect_error(text, "network.mode: \"none\" contradicts network.");
		snprintf(text, sizeof(text), "{\"network\": {%s, \"mode\": \"host\"}}", rules[i]);
		expect_error(text, "network.mode: \"host\" contradicts network.");
	}
	ck_assert_int_eq(apply(&cfg, "{\"network\": {\"log\": \"/dev/null\"}}", msg, sizeof(msg)), 0);
	ck_assert_int_eq(cfg.net, WARD_NET_NONE);
	ward_config_release(&cfg);
}
END_TEST

START_TEST(test_missing_file)
{
	struct ward_config cfg;
	struct ward_error *err = NULL;

	ward_config_init(&cfg);
	ck_assert_int_lt(ward_policy_load("/no/such/policy.json", &cfg, &err), 0);
	ck_assert_ptr_nonnull(strstr(err->message, "policy '/no/such/policy.json'"));
	ward_error_free(err);
	ward_config_release(&cfg);
}
END_TEST

/* A policy of `size` bytes ("{", blanks, "}") through a pipe, as from
 * --policy <(...): loaded whole however it arrives, refused past the limit. */
static int load_piped(size_t size, char *msg, size_t msg_size)
{
	struct ward_config cfg;
	struct ward_error *err = NULL;
	char path[64], *text = malloc(size);
	int fds[2], rc, status;
	pid_t pid;

	ck_assert_ptr_nonnull(text);
	memset(text, ' ', size);
	text[0] = '{';
	text[size - 1] = '}';
	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		size_t done = 0;

		close(fds[0]);
		while (done < size) {
			ssize_t n = write(fds[1], text + done, size - done > 777 ? 777 : size - done);

			if (n <= 0)
				_exit(0); /* the reader stopped: past the limit */
			done += (size_t)n;
		}
		_exit(0);
	}
	close(fds[1]);
	snprintf(path, sizeof(path), "/dev/fd/%d", fds[0]);
	ward_config_init(&cfg);
	rc = ward_policy_load(path, &cfg, &err);
	if (rc < 0) {
		snprintf(msg, msg_size, "%s", err->message);
		ward_error_free(err);
	}
	ward_config_release(&cfg);
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	free(text);
	return rc;
}

START_TEST(test_piped)
{
	char msg[1024] = "";

	ck_assert_int_eq(load_piped(2, msg, sizeof(msg)), 0);
	ck_assert_int_eq(load_piped(100000, msg, sizeof(msg)), 0);
	ck_assert_int_eq(load_piped(WARD_POLICY_MAX, msg, sizeof(msg)), 0);
	ck_assert_int_lt(load_piped(WARD_POLICY_MAX + 1, msg, sizeof(msg)), 0);
	ck_assert_msg(strstr(msg, "larger than 1048576 bytes"), "%s", msg);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("policy");
	TCase *tc = harness_tcase(s, "policy", NULL);

	tcase_add_test(tc, test_everything);
	tcase_add_test(tc, test_mistakes);
	tcase_add_test(tc, test_network_rules_imply_proxy);
	tcase_add_test(tc, test_unknown_key_lists_valid);
	tcase_add_test(tc, test_shape_names_key);
	tcase_add_test(tc, test_missing_file);
	tcase_add_test(tc, test_piped);
	return harness_main(s);
}
