/* test-limits.c — limit values: sizes, counts, CPUs, defaults, the options and
 * policy keys that set them, the cgroup names, and the result's "resources". */
#include "harness.h"
#include "runtime/cgroup/cgroup-internal.h"
#include "runtime/cli/cli-internal.h"
#include "ward/limits.h"
#include "ward/policy.h"
#include "ward/request.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char msg[1024];

static const char *size_error(const char *text, bool allow_zero)
{
	struct ward_error *err = NULL;
	uint64_t v = 12345;

	if (ward_parse_size("--memory", text, allow_zero, &v, &err) == 0)
		return NULL;
	ck_assert_int_eq(err->kind, WARD_ERR_INVALID_PARAMETERS);
	ck_assert_uint_eq(v, 12345); /* untouched on failure */
	snprintf(msg, sizeof(msg), "%s", err->message);
	ward_error_free(err);
	return msg;
}

static uint64_t size_ok(const char *text)
{
	struct ward_error *err = NULL;
	uint64_t v = 0;

	ck_assert_msg(ward_parse_size("--memory", text, false, &v, &err) == 0, "'%s': %s", text,
		      err ? err->message : "");
	return v;
}

#define EXPECT_SIZE_ERROR(text, needle)                                                            \
	do {                                                                                       \
		const char *m_ = size_error(text, false);                                          \
		ck_assert_msg(m_ && strstr(m_, needle) && strstr(m_, "--memory"),                  \
			      "'%s': expected '%s', got '%s'", text, needle, m_ ? m_ : "(accepted)"); \
	} while (0)

START_TEST(test_sizes)
{
	ck_assert_uint_eq(size_ok("1"), 1);
	ck_assert_uint_eq(size_ok("4096"), 4096);
	ck_assert_uint_eq(size_ok("512b"), 512);
	ck_assert_uint_eq(size_ok("32K"), 32 * 1024);
	ck_assert_uint_eq(size_ok("32k"), 32 * 1024);
	ck_assert_uint_eq(size_ok("32M"), 32ull << 20);
	ck_assert_uint_eq(size_ok("32MiB"), 32ull << 20);
	ck_assert_uint_eq(size_ok("32mb"), 32ull << 20);
	ck_assert_uint_eq(size_ok("2G"), 2ull << 30);
	ck_assert_uint_eq(size_ok("3T"), 3ull << 40);
	ck_assert_uint_eq(size_ok("9223372036854775807"), 9223372036854775807ull);
	ck_assert_uint_eq(size_ok("8388607T"), 8388607ull << 40);

	EXPECT_SIZE_ERROR("0", "at least 1 byte");
	EXPECT_SIZE_ERROR("0M", "at least 1 byte");
	EXPECT_SIZE_ERROR("-5M", "negative");
	EXPECT_SIZE_ERROR("12Q", "unknown unit 'Q'");
	EXPECT_SIZE_ERROR("12MX", "unknown unit");
	EXPECT_SIZE_ERROR("12 M", "unknown unit");
	EXPECT_SIZE_ERROR("M", "not a size");
	EXPECT_SIZE_ERROR("", "empty");
	EXPECT_SIZE_ERROR("1.5G", "unknown unit");
	EXPECT_SIZE_ERROR("+5M", "not a size");
	EXPECT_SIZE_ERROR(" 5M", "not a size");
	EXPECT_SIZE_ERROR("9223372036854775808", "too large");
	EXPECT_SIZE_ERROR("99999999999999999999999", "too large");
	EXPECT_SIZE_ERROR("8388608T", "too large");
	EXPECT_SIZE_ERROR("18446744073709551616K", "too large");
	/* a swap size may be 0 */
	ck_assert_ptr_null(size_error("0", true));
}
END_TEST

static const char *cpus_error(const char *text)
{
	struct ward_error *err = NULL;
	double v = -1;

	if (ward_parse_cpus("--cpus", text, &v, &err) == 0)
		return NULL;
	ck_assert_int_eq(err->kind, WARD_ERR_INVALID_PARAMETERS);
	ck_assert(v == -1);
	snprintf(msg, sizeof(msg), "%s", err->message);
	ward_error_free(err);
	return msg;
}

START_TEST(test_cpus)
{
	static const char *const bad[] = { "0", "0.0", "-1", "-0.5", "nan", "NaN", "inf", "-inf",
					   "1e3", "0x1", " 1", "1 ", "", "0.001", "1025", "1..2",
					   ".", "1,5" };
	struct ward_error *err = NULL;
	double v;
	size_t i;

	ck_assert_int_eq(ward_parse_cpus("--cpus", "0.2", &v, &err), 0);
	ck_assert(v > 0.199 && v < 0.201);
	ck_assert_uint_eq(ward_cpus_quota_us(v), 20000);
	ck_assert_int_eq(ward_parse_cpus("--cpus", "2", &v, &err), 0);
	ck_assert_uint_eq(ward_cpus_quota_us(v), 200000);
	ck_assert_int_eq(ward_parse_cpus("--cpus", ".5", &v, &err), 0);
	ck_assert_uint_eq(ward_cpus_quota_us(v), 50000);
	ck_assert_int_eq(ward_parse_cpus("--cpus", "0.01", &v, &err), 0);
	ck_assert_uint_eq(ward_cpus_quota_us(v), 1000);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *m = cpus_error(bad[i]);

		ck_assert_msg(m && strstr(m, "--cpus"), "'%s' accepted", bad[i]);
	}
	ck_assert_ptr_nonnull(strstr(cpus_error("0"), "at least 0.01"));
	ck_assert_ptr_nonnull(strstr(cpus_error("-1"), "negative"));
	ck_assert_ptr_nonnull(strstr(cpus_error("NaN"), "not a number of CPUs"));
}
END_TEST

/* The default memory is half of /proc/meminfo's MemTotal, however ward
 * gets that number (sysinfo(2) where the file is the kernel's own). */
START_TEST(test_host_default)
{
	struct ward_limits l;
	char buf[8192], *p;
	FILE *f = fopen("/proc/meminfo", "r");
	size_t n;

	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strstr(buf, "MemTotal:");
	ck_assert_ptr_nonnull(p);
	ward_limits_init(&l);
	ck_assert_uint_eq(l.memory, strtoull(p + 9, NULL, 10) * 1024 / 2);
	ck_assert_uint_gt(l.memory, 0);
	ck_assert_uint_eq(l.pids, WARD_PIDS_DEFAULT);
}
END_TEST

START_TEST(test_counts)
{
	struct ward_limits l;
	struct ward_error *err = NULL;

	ward_limits_defaults(&l, 8ull << 30);
	ck_assert_uint_eq(l.memory, 4ull << 30);
	ck_assert_uint_eq(l.pids, WARD_PIDS_DEFAULT);
	ck_assert(l.cpus == 0);
	ck_assert_uint_eq(l.explicit_mask, 0);
	ck_assert_uint_eq(l.memory_swap, 0);

	ck_assert_int_eq(ward_limits_set(&l, WARD_LIMIT_PIDS, "64", &err), 0);
	ck_assert_uint_eq(l.pids, 64);
	ck_assert_uint_eq(l.explicit_mask, 1u << WARD_LIMIT_PIDS);
	ck_assert_int_eq(ward_limits_set(&l, WARD_LIMIT_PIDS, "0", &err), -1);
	ck_assert_ptr_nonnull(strstr(err->message, "--pids: must be at least 1"));
	ward_error_free(err);
	err = NULL;
	ck_assert_int_eq(ward_limits_set(&l, WARD_LIMIT_PIDS, "99999999999999999999999", &err), -1);
	ck_assert_ptr_nonnull(strstr(err->message, "at most 4194304"));
	ward_error_free(err);
	err = NULL;
	ck_assert_int_eq(ward_limits_set(&l, WARD_LIMIT_PIDS, "6x", &err), -1);
	ck_assert_ptr_nonnull(strstr(err->message, "not a whole number"));
	ward_error_free(err);
	err = NULL;
	ck_assert_int_eq(ward_limits_set(&l, WARD_LIMIT_IO_WEIGHT, "10001", &err), -1);
	ward_error_free(err);
	err = NULL;
	ck_assert_int_eq(ward_limits_set(&l, WARD_LIMIT_IO_WEIGHT, "500", &err), 0);
	ck_assert_uint_eq(l.io_weight, 500);
	ck_assert_int_eq(ward_limits_set(&l, WARD_LIMIT_MEMORY_SWAP, "0", &err), 0);
	ck_assert_int_eq(ward_limits_set(&l, WARD_LIMIT_FILE_SIZE, "0", &err), -1);
	ck_assert_ptr_nonnull(strstr(err->message, "--max-file-size"));
	ward_error_free(err);
	err = NULL;
	ck_assert_int_eq(ward_limits_set(&l, WARD_LIMIT_FILE_SIZE, "1M", &err), 0);
	ck_assert_uint_eq(l.file_size, 1 << 20);
	ck_assert_uint_eq(l.explicit_mask,
			  (1u << WARD_LIMIT_PIDS) | (1u << WARD_LIMIT_IO_WEIGHT) |
				  (1u << WARD_LIMIT_MEMORY_SWAP) | (1u << WARD_LIMIT_FILE_SIZE));
}
END_TEST

START_TEST(test_format)
{
	char b[32];

	ward_format_size(32ull << 20, b, sizeof(b));
	ck_assert_str_eq(b, "32 MiB");
	ward_format_size(1536ull << 20, b, sizeof(b));
	ck_assert_str_eq(b, "1.5 GiB");
	ward_format_size(512, b, sizeof(b));
	ck_assert_str_eq(b, "512 bytes");
	ward_format_size(1024, b, sizeof(b));
	ck_assert_str_eq(b, "1 KiB");
}
END_TEST

static const char *opts_error(const char *opt, const char *val)
{
	char *argv[] = { (char *)"run", (char *)opt, (char *)val, (char *)"--", (char *)"true", NULL };
	struct run_options o;
	struct ward_error *err = NULL;

	if (ward_run_options_parse(5, argv, &o, &err) == 0) {
		ward_run_options_release(&o);
		return NULL;
	}
	ck_assert_int_eq(err->kind, WARD_ERR_INVALID_PARAMETERS);
	snprintf(msg, sizeof(msg), "%s", err->message);
	ward_error_free(err);
	return msg;
}

START_TEST(test_options)
{
	char *argv[] = { (char *)"run",  (char *)"--no-policy", (char *)"--memory",
			 (char *)"32M",  (char *)"--pids",      (char *)"64",
			 (char *)"--cpus", (char *)"0.2",       (char *)"--memory-swap",
			 (char *)"16M",  (char *)"--io-weight", (char *)"200",
			 (char *)"--max-file-size", (char *)"1G", (char *)"--tmpfs-size",
			 (char *)"64M", (char *)"--", (char *)"true", NULL };
	struct run_options o;
	struct ward_error *err = NULL;

	ck_assert_int_eq(ward_run_options_parse(18, argv, &o, &err), 0);
	ck_assert_uint_eq(o.cfg.limits.memory, 32ull << 20);
	ck_assert_uint_eq(o.cfg.limits.memory_swap, 16ull << 20);
	ck_assert_uint_eq(o.cfg.limits.pids, 64);
	ck_assert(o.cfg.limits.cpus > 0.19 && o.cfg.limits.cpus < 0.21);
	ck_assert_uint_eq(o.cfg.limits.io_weight, 200);
	ck_assert_uint_eq(o.cfg.limits.file_size, 1ull << 30);
	ck_assert_uint_eq(o.cfg.limits.tmpfs_size, 64ull << 20);
	ck_assert_uint_eq(o.cfg.limits.explicit_mask, (1u << WARD_LIMIT_COUNT) - 1);
	ck_assert(o.cfg.cgroup);
	ward_run_options_release(&o);

	argv[1] = (char *)"--no-cgroup";
	ck_assert_int_eq(ward_run_options_parse(18, argv, &o, &err), 0);
	ck_assert(!o.cfg.cgroup);
	ward_run_options_release(&o);

	ck_assert_ptr_nonnull(strstr(opts_error("--memory", "0"), "--memory"));
	ck_assert_ptr_nonnull(strstr(opts_error("--memory", "-5M"), "negative"));
	ck_assert_ptr_nonnull(strstr(opts_error("--memory", "12Q"), "'12Q'"));
	ck_assert_ptr_nonnull(strstr(opts_error("--memory", "99999999999T"), "too large"));
	ck_assert_ptr_nonnull(strstr(opts_error("--cpus", "0"), "--cpus"));
	ck_assert_ptr_nonnull(strstr(opts_error("--cpus", "nan"), "--cpus"));
	ck_assert_ptr_nonnull(strstr(opts_error("--cpus", "-2"), "negative"));
	ck_assert_ptr_nonnull(strstr(opts_error("--pids", "0"), "--pids"));
	ck_assert_ptr_nonnull(strstr(opts_error("--max-file-size", "x"), "--max-file-size"));
}
END_TEST

static const char *policy_error(const char *text, struct ward_config *cfg)
{
	struct ward_error *err = NULL;
	int rc;

	ward_config_init(cfg);
	rc = ward_policy_apply(text, strlen(text), "p.json", cfg, &err);
	if (rc == 0)
		return NULL;
	snprintf(msg, sizeof(msg), "%s", err->message);
	ck_assert_int_eq(err->kind, WARD_ERR_INVALID_PARAMETERS);
	ward_error_free(err);
	ward_config_release(cfg);
	return msg;
}

START_TEST(test_policy)
{
	static const struct {
		const char *text, *needle;
	} bad[] = {
		{ "{\"limits\": {\"memory\": \"0\"}}", "limits.memory: --memory: the size must be" },
		{ "{\"limits\": {\"memory\": 0}}", "limits.memory" },
		{ "{\"limits\": {\"memory\": \"12Q\"}}", "unknown unit" },
		{ "{\"limits\": {\"memory\": -5}}", "negative" },
		{ "{\"limits\": {\"memory\": true}}", "limits.memory: must be a size" },
		{ "{\"limits\": {\"pids\": \"x\"}}", "limits.pids" },
		{ "{\"limits\": {\"pids\": 1.5}}", "limits.pids: must be an integer" },
		{ "{\"limits\": {\"cpus\": 0}}", "limits.cpus" },
		{ "{\"limits\": {\"cpus\": -1.5}}", "limits.cpus" },
		{ "{\"limits\": {\"cpus\": \"nan\"}}", "limits.cpus" },
		{ "{\"limits\": {\"io_weight\": 0}}", "limits.io_weight" },
		{ "{\"limits\": {\"memroy\": \"1G\"}}", "unknown key \"memroy\"" },
		{ "{\"limits\": [1]}", "limits: must be an object" },
	};
	struct ward_config cfg;
	size_t i;

	ck_assert_ptr_null(policy_error("{\"limits\": {\"memory\": \"256M\", \"memory_swap\": 0, "
					"\"pids\": 100, \"cpus\": 1.5, \"io_weight\": 50, "
					"\"max_file_size\": 1048576, \"tmpfs_size\": \"16M\"}}",
					&cfg));
	ck_assert_uint_eq(cfg.limits.memory, 256ull << 20);
	ck_assert_uint_eq(cfg.limits.memory_swap, 0);
	ck_assert_uint_eq(cfg.limits.pids, 100);
	ck_assert(cfg.limits.cpus > 1.49 && cfg.limits.cpus < 1.51);
	ck_assert_uint_eq(cfg.limits.io_weight, 50);
	ck_assert_uint_eq(cfg.limits.file_size, 1048576);
	ck_assert_uint_eq(cfg.limits.tmpfs_size, 16ull << 20);
	ck_assert_uint_eq(cfg.limits.explicit_mask, (1u << WARD_LIMIT_COUNT) - 1);
	ward_config_release(&cfg);

	/* "cpus": 2 (an integer) is fine too */
	ck_assert_ptr_null(policy_error("{\"limits\": {\"cpus\": 2}}", &cfg));
	ck_assert_uint_eq(ward_cpus_quota_us(cfg.limits.cpus), 200000);
	ward_config_release(&cfg);

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *m = policy_error(bad[i].text, &cfg);

		ck_assert_msg(m && strstr(m, bad[i].needle) && strstr(m, "policy 'p.json'"),
			      "%s: got '%s', wanted '%s'", bad[i].text, m ? m : "(accepted)",
			      bad[i].needle);
	}
}
END_TEST

START_TEST(test_cgroup_names)
{
	long pid;
	unsigned long long start;

	ck_assert(ward_cgroup_name_parse("w123-456-0", &pid, &start));
	ck_assert_int_eq(pid, 123);
	ck_assert_uint_eq(start, 456);
	ck_assert(ward_cgroup_name_parse("w1-0-17", &pid, &start));
	ck_assert(!ward_cgroup_name_parse("w123-456", &pid, &start));
	ck_assert(!ward_cgroup_name_parse("w0-456-1", &pid, &start));
	ck_assert(!ward_cgroup_name_parse("x123-456-1", &pid, &start));
	ck_assert(!ward_cgroup_name_parse("w123-456-1x", &pid, &start));
	ck_assert(!ward_cgroup_name_parse("ward-supervisor", &pid, &start));
	ck_assert(!ward_cgroup_name_parse("w-1-2-3", &pid, &start));
	ck_assert(!ward_cgroup_name_parse("w", &pid, &start));
}
END_TEST

START_TEST(test_result_json)
{
	struct ward_result res;
	json_t *o, *r, *l;
	char *s;

	memset(&res, 0, sizeof(res));
	res.output = (char *)"";
	res.stderr_text = (char *)"";
	res.resources.cgroup_version = 2;
	res.resources.have_memory_peak = true;
	res.resources.memory_peak = 1000;
	res.resources.have_cpu = true;
	res.resources.cpu_user_us = 2500;
	res.resources.oom_killed = true;
	snprintf(res.resources.measured_by, sizeof(res.resources.measured_by), "cgroup v2");
	res.resources.applied[WARD_LIMIT_MEMORY].value = 32 << 20;
	snprintf(res.resources.applied[WARD_LIMIT_MEMORY].mechanism, 64, "cgroup v2 memory.max");
	res.resources.applied[WARD_LIMIT_CPUS].value = 20000;
	snprintf(res.resources.applied[WARD_LIMIT_CPUS].mechanism, 64, "cgroup v2 cpu.max");
	res.resources.applied[WARD_APPLIED_NOFILE].value = 8192;
	snprintf(res.resources.applied[WARD_APPLIED_NOFILE].mechanism, 64, "rlimit RLIMIT_NOFILE");
	s = ward_result_to_json(&res);
	o = json_loads(s, 0, NULL);
	free(s);
	ck_assert_ptr_nonnull(o);
	r = json_object_get(o, "resources");
	ck_assert_int_eq(json_integer_value(json_object_get(r, "cgroup")), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(o, "layers"), "cgroup")), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(r, "memory_peak_bytes")), 1000);
	ck_assert(json_is_null(json_object_get(r, "pids_peak")));
	ck_assert_int_eq(json_integer_value(json_object_get(r, "cpu_user_ms")), 2);
	ck_assert(json_is_true(json_object_get(r, "oom_killed")));
	l = json_object_get(r, "limits");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(l, "memory"), "mechanism")),
			 "cgroup v2 memory.max");
	ck_assert(json_real_value(json_object_get(json_object_get(l, "cpus"), "value")) > 0.19);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(l, "cpus"), "quota_us")),
			 20000);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(l, "nofile"), "value")),
			 8192);
	ck_assert_ptr_null(json_object_get(l, "pids")); /* not applied: not listed */
	json_decref(o);
}
END_TEST

/* The tmpfs cap: set, else the memory limit a cgroup applied, else the
 * default; and what the result says of it. */
START_TEST(test_tmpfs_plan)
{
	struct ward_limits l;
	struct ward_resources r;

	ward_limits_defaults(&l, 8ull << 30);
	memset(&r, 0, sizeof(r));
	ck_assert_uint_eq(ward_tmpfs_plan(&l, &r), WARD_TMPFS_DEFAULT);
	ck_assert_str_eq(r.applied[WARD_LIMIT_TMPFS_SIZE].mechanism, "tmpfs size= (the default)");
	/* a memory limit no cgroup applied does not count */
	memset(&r, 0, sizeof(r));
	r.applied[WARD_LIMIT_MEMORY].value = 64ull << 20;
	ck_assert_uint_eq(ward_tmpfs_plan(&l, &r), WARD_TMPFS_DEFAULT);
	snprintf(r.applied[WARD_LIMIT_MEMORY].mechanism, 64, "cgroup v2 memory.max");
	ck_assert_uint_eq(ward_tmpfs_plan(&l, &r), 64ull << 20);
	ck_assert_uint_eq(r.applied[WARD_LIMIT_TMPFS_SIZE].value, 64ull << 20);
	ck_assert_str_eq(r.applied[WARD_LIMIT_TMPFS_SIZE].mechanism,
			 "tmpfs size= (the memory limit)");
	l.tmpfs_size = 1ull << 20;
	ck_assert_uint_eq(ward_tmpfs_plan(&l, &r), 1ull << 20);
	ck_assert_str_eq(r.applied[WARD_LIMIT_TMPFS_SIZE].mechanism, "tmpfs size= (--tmpfs-size)");
}
END_TEST

START_TEST(test_ucount_share)
{
	ck_assert_int_eq(ward_ucount_share(128), 128 / WARD_UCOUNT_SHARE);
	ck_assert_int_lt(ward_ucount_share(128), 128);
	ck_assert_int_eq(ward_ucount_share(3), 1);
	ck_assert_int_eq(ward_ucount_share(1), 1);
	ck_assert_int_eq(ward_ucount_share(0), 0);
	ck_assert_int_eq(ward_ucount_share(-1), -1);
	ck_assert_int_eq(ward_ucount_share(2147483647L), 2147483647L / WARD_UCOUNT_SHARE);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("limits");
	TCase *tc = harness_tcase(s, "limits", NULL);

	tcase_add_test(tc, test_sizes);
	tcase_add_test(tc, test_tmpfs_plan);
	tcase_add_test(tc, test_ucount_share);
	tcase_add_test(tc, test_cpus);
	tcase_add_test(tc, test_counts);
	tcase_add_test(tc, test_host_default);
	tcase_add_test(tc, test_format);
	tcase_add_test(tc, test_options);
	tcase_add_test(tc, test_policy);
	tcase_add_test(tc, test_cgroup_names);
	tcase_add_test(tc, test_result_json);
	return harness_main(s);
}
