/* test-landlock.c — the Landlock plan, without a kernel: right masks for every
 * ABI, what is enforced and reported, and every refusal. */
#include "harness.h"
#include "ward/landlock.h"

#include <errno.h>
#include <string.h>

#include "landlock/landlock-abi.h"

static struct ward_landlock_plan *plan_for(const struct ward_landlock_config *cfg, int abi)
{
	struct ward_landlock_plan *plan = NULL;
	struct ward_error *err = NULL;

	if (ward_landlock_plan_new(cfg, abi, &plan, &err) < 0)
		ck_abort_msg("plan for abi %d: %s", abi, err->message);
	return plan;
}

static const char *plan_error(const struct ward_landlock_config *cfg, int abi,
			      struct ward_error *storage)
{
	struct ward_landlock_plan *plan = NULL;
	struct ward_error *err = storage;

	ck_assert_int_lt(ward_landlock_plan_new(cfg, abi, &plan, &err), 0);
	ck_assert_ptr_null(plan);
	ck_assert_ptr_eq(err, storage);
	return storage->message;
}

static uint64_t rule_access(const struct ward_landlock_plan *plan, const char *want)
{
	const char *path;
	uint64_t access;

	for (size_t i = 0; ward_landlock_plan_rule(plan, i, &path, &access) == 0; i++)
		if (strcmp(path, want) == 0)
			return access;
	return 0;
}

START_TEST(test_masks_per_abi)
{
	static const struct {
		uint64_t fs, net, scopes;
	} want[] = {
		[0] = { 0, 0, 0 },
		[1] = { 0x1fff, 0, 0 },
		[2] = { 0x3fff, 0, 0 },
		[3] = { 0x7fff, 0, 0 },
		[4] = { 0x7fff, 0x3, 0 },
		[5] = { 0xffff, 0x3, 0 },
		[6] = { 0xffff, 0x3, 0x3 },
		[7] = { 0xffff, 0x3, 0x3 },
	};

	for (int abi = 0; abi <= 7; abi++) {
		ck_assert_msg(ward_landlock_fs_rights(abi) == want[abi].fs, "fs abi %d", abi);
		ck_assert_msg(ward_landlock_net_rights(abi) == want[abi].net, "net abi %d", abi);
		ck_assert_msg(ward_landlock_scopes(abi) == want[abi].scopes, "scopes abi %d", abi);
	}
	/* a kernel newer than ward is used at the newest ABI ward knows */
	ck_assert(ward_landlock_fs_rights(9) == ward_landlock_fs_rights(WARD_LANDLOCK_ABI_KNOWN));
	ck_assert(ward_landlock_fs_rights(-38) == 0);
	ck_assert(LANDLOCK_ACCESS_FS_REFER == 1ULL << 13);
	ck_assert(LANDLOCK_ACCESS_FS_TRUNCATE == 1ULL << 14);
	ck_assert(LANDLOCK_ACCESS_FS_IOCTL_DEV == 1ULL << 15);
}
END_TEST

START_TEST(test_names)
{
	char buf[WARD_LANDLOCK_NAMES_MAX], tiny[8];
	size_t n;

	ward_landlock_rights_names(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_REFER,
				   LANDLOCK_ACCESS_NET_CONNECT_TCP, LANDLOCK_SCOPE_SIGNAL, buf,
				   sizeof(buf));
	ck_assert_str_eq(buf, "fs.execute,fs.refer,net.connect_tcp,scope.signal");
	n = ward_landlock_rights_names(ward_landlock_fs_rights(1), 0, 0, buf, sizeof(buf));
	ck_assert_str_eq(buf, "fs.execute,fs.write_file,fs.read_file,fs.read_dir,"
			      "fs.remove_dir,fs.remove_file,fs.make_char,fs.make_dir,"
			      "fs.make_reg,fs.make_sock,fs.make_fifo,fs.make_block,fs.make_sym");
	ck_assert_uint_eq(n, strlen(buf));
	/* cut, NUL-terminated, and the full length reported */
	ck_assert_uint_eq(ward_landlock_rights_names(ward_landlock_fs_rights(1), 0, 0, tiny,
						     sizeof(tiny)), n);
	ck_assert_str_eq(tiny, "fs.exec");
}
END_TEST

/* The default configuration on each ABI: everything the ABI has is handled,
 * what it lacks is reported with the ABI that brings it. */
START_TEST(test_default_plan_each_abi)
{
	static const char *const unavailable[] = {
		[1] = "fs.refer (abi 2),fs.truncate (abi 3),fs.ioctl_dev (abi 5),"
		      "scope.abstract_unix_socket (abi 6),scope.signal (abi 6)",
		[2] = "fs.truncate (abi 3),fs.ioctl_dev (abi 5),"
		      "scope.abstract_unix_socket (abi 6),scope.signal (abi 6)",
		[3] = "fs.ioctl_dev (abi 5),scope.abstract_unix_socket (abi 6),scope.signal (abi 6)",
		[4] = "fs.ioctl_dev (abi 5),scope.abstract_unix_socket (abi 6),scope.signal (abi 6)",
		[5] = "scope.abstract_unix_socket (abi 6),scope.signal (abi 6)",
		[6] = "",
		[7] = "",
	};
	struct ward_landlock_config cfg;
	int abi = _i;
	struct ward_landlock_plan *plan;
	const struct ward_landlock_report *r;
	uint64_t fs, net, scopes;
	char names[WARD_LANDLOCK_NAMES_MAX];

	ward_landlock_config_init(&cfg);
	cfg.workdir = "/work/project";
	plan = plan_for(&cfg, abi);
	r = ward_landlock_plan_report(plan);
	ward_landlock_plan_masks(plan, &fs, &net, &scopes);

	ck_assert_int_eq(r->abi, abi);
	ck_assert_int_eq(r->kernel_abi, abi);
	ck_assert_str_eq(r->status, "enforced");
	ck_assert(fs == ward_landlock_fs_rights(abi));
	ck_assert(net == 0); /* no network rules asked */
	ck_assert(scopes == ward_landlock_scopes(abi));
	ward_landlock_rights_names(fs, 0, scopes, names, sizeof(names));
	ck_assert_str_eq(r->enforced, names);
	ck_assert_str_eq(r->unavailable, unavailable[abi]);

	/* read and execute everywhere, never write */
	ck_assert(rule_access(plan, "/") ==
		  (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE |
		   LANDLOCK_ACCESS_FS_READ_DIR));
	/* the workdir and /tmp: everything but device creation and device ioctls */
	ck_assert(rule_access(plan, "/work/project") ==
		  (fs & ~(LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
			  LANDLOCK_ACCESS_FS_IOCTL_DEV)));
	ck_assert(rule_access(plan, "/tmp") == rule_access(plan, "/work/project"));
	ck_assert(rule_access(plan, "/dev/shm") == rule_access(plan, "/work/project"));
	/* /dev/null: write, truncate for `> /dev/null` and ioctls where the ABI
	 * has them; never read (that comes from "/") */
	ck_assert(rule_access(plan, "/dev/null") ==
		  (fs & (LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |
			 LANDLOCK_ACCESS_FS_IOCTL_DEV)));
	ck_assert(rule_access(plan, "/dev/urandom") == rule_access(plan, "/dev/null"));
	/* terminals: their ioctls from ABI 5 */
	ck_assert(!!(rule_access(plan, "/dev/pts") & LANDLOCK_ACCESS_FS_IOCTL_DEV) == (abi >= 5));
	ck_assert(rule_access(plan, "/etc") == 0);
	ward_landlock_plan_free(plan);
}
END_TEST

START_TEST(test_network_rules)
{
	struct ward_landlock_config cfg;
	struct ward_landlock_plan *plan;
	struct ward_error storage;
	uint64_t net;

	ward_landlock_config_init(&cfg);
	cfg.restrict_connect = true;
	cfg.connect_ports[0] = 3128;
	cfg.connect_ports[1] = 443;
	cfg.n_connect_ports = 2;

	plan = plan_for(&cfg, 4);
	ward_landlock_plan_masks(plan, NULL, &net, NULL);
	ck_assert(net == LANDLOCK_ACCESS_NET_CONNECT_TCP); /* bind stays free */
	ck_assert_ptr_nonnull(strstr(ward_landlock_plan_report(plan)->enforced, "net.connect_tcp"));
	ck_assert_ptr_null(strstr(ward_landlock_plan_report(plan)->enforced, "net.bind_tcp"));
	ward_landlock_plan_free(plan);

	/* stricter policy: bind too */
	cfg.restrict_bind = true;
	cfg.bind_ports[0] = 8080;
	cfg.n_bind_ports = 1;
	plan = plan_for(&cfg, 7);
	ward_landlock_plan_masks(plan, NULL, &net, NULL);
	ck_assert(net == (LANDLOCK_ACCESS_NET_CONNECT_TCP | LANDLOCK_ACCESS_NET_BIND_TCP));
	ward_landlock_plan_free(plan);

	/* ABI 3: best-effort by default, reported */
	plan = plan_for(&cfg, 3);
	ward_landlock_plan_masks(plan, NULL, &net, NULL);
	ck_assert(net == 0);
	ck_assert_ptr_nonnull(strstr(ward_landlock_plan_report(plan)->unavailable,
				     "net.bind_tcp (abi 4),net.connect_tcp (abi 4)"));
	ward_landlock_plan_free(plan);

	/* ... unless required */
	cfg.require |= WARD_LANDLOCK_NEED_NET;
	ck_assert_str_eq(plan_error(&cfg, 3, &storage),
			 "landlock right 'net.bind_tcp' needs abi 4, this kernel offers abi 3");
	/* a network requirement does not bind when no network rule is asked */
	cfg.restrict_connect = cfg.restrict_bind = false;
	plan = plan_for(&cfg, 3);
	ward_landlock_plan_free(plan);
}
END_TEST

START_TEST(test_cap)
{
	struct ward_landlock_config cfg;
	struct ward_landlock_plan *plan;
	const struct ward_landlock_report *r;
	struct ward_error storage;

	ward_landlock_config_init(&cfg);
	cfg.abi_max = 2;
	plan = plan_for(&cfg, 7);
	r = ward_landlock_plan_report(plan);
	ck_assert_int_eq(r->abi, 2);
	ck_assert_int_eq(r->kernel_abi, 7);
	ck_assert_int_eq(r->abi_max, 2);
	ck_assert_str_eq(r->unavailable, "fs.truncate (abi 3),fs.ioctl_dev (abi 5),"
					 "scope.abstract_unix_socket (abi 6),scope.signal (abi 6)");
	ward_landlock_plan_free(plan);

	cfg.abi_max = 3;
	plan = plan_for(&cfg, 7);
	ck_assert_int_eq(ward_landlock_plan_report(plan)->abi, 3);
	ward_landlock_plan_free(plan);

	/* a cap above the kernel changes nothing */
	cfg.abi_max = 7;
	plan = plan_for(&cfg, 5);
	ck_assert_int_eq(ward_landlock_plan_report(plan)->abi, 5);
	ward_landlock_plan_free(plan);

	/* a requirement the cap removes is named with the cap */
	cfg.abi_max = 2;
	cfg.require |= WARD_LANDLOCK_NEED_TRUNCATE;
	ck_assert_str_eq(plan_error(&cfg, 7, &storage),
			 "landlock right 'fs.truncate' needs abi 3, capped at abi 2 "
			 "(the kernel offers 7)");
	cfg.require = WARD_LANDLOCK_NEED_FS;
	cfg.min_abi = 4;
	ck_assert_str_eq(plan_error(&cfg, 7, &storage),
			 "landlock: minimum abi 4 is above the abi cap 2");
	ck_assert_int_eq(storage.kind, WARD_ERR_INVALID_PARAMETERS);
}
END_TEST

START_TEST(test_required_refusals)
{
	struct ward_landlock_config cfg;
	struct ward_landlock_plan *plan;
	struct ward_error storage;

	ward_landlock_config_init(&cfg);
	plan_error(&cfg, -ENOSYS, &storage);
	ck_assert_int_eq(storage.code, ENOSYS);
	ck_assert_ptr_nonnull(strstr(storage.message, "not built into this kernel"));
	ck_assert_int_eq(storage.kind, WARD_ERR_EXECUTION_FAILED);
	plan_error(&cfg, -EOPNOTSUPP, &storage);
	ck_assert_int_eq(storage.code, EOPNOTSUPP);
	ck_assert_ptr_nonnull(strstr(storage.message, "disabled at boot"));

	cfg.min_abi = 3;
	ck_assert_str_eq(plan_error(&cfg, 2, &storage),
			 "landlock right 'fs.truncate' needs abi 3, this kernel offers abi 2");
	ck_assert_int_eq(storage.kind, WARD_ERR_EXECUTION_FAILED);
	/* a minimum ABI binds even for rights the configuration does not use */
	cfg.min_abi = 4;
	ck_assert_str_eq(plan_error(&cfg, 3, &storage),
			 "landlock right 'net.bind_tcp' needs abi 4, this kernel offers abi 3");
	cfg.min_abi = 7;
	ck_assert_str_eq(plan_error(&cfg, 6, &storage),
			 "landlock: minimum abi 7, this kernel offers abi 6");
	ck_assert_int_eq(storage.kind, WARD_ERR_EXECUTION_FAILED);
	cfg.abi_max = 6;
	ck_assert_str_eq(plan_error(&cfg, 7, &storage),
			 "landlock: minimum abi 7 is above the abi cap 6");
	cfg.abi_max = 0;
	cfg.min_abi = 1;
	cfg.require |= WARD_LANDLOCK_NEED_SCOPE;
	ck_assert_str_eq(plan_error(&cfg, 5, &storage),
			 "landlock right 'scope.abstract_unix_socket' needs abi 6, "
			 "this kernel offers abi 5");
	cfg.scope_abstract_unix = false;
	ck_assert_str_eq(plan_error(&cfg, 5, &storage),
			 "landlock right 'scope.signal' needs abi 6, this kernel offers abi 5");
	cfg.scope_signal = false;
	plan = plan_for(&cfg, 5);
	ward_landlock_plan_free(plan);

	/* best-effort: the same gaps are reported, not refused */
	cfg.mode = WARD_LANDLOCK_BEST_EFFORT;
	cfg.min_abi = 6;
	plan = plan_for(&cfg, 2);
	ck_assert_int_eq(ward_landlock_plan_report(plan)->abi, 2);
	ward_landlock_plan_free(plan);
	plan = plan_for(&cfg, -EOPNOTSUPP);
	ck_assert_str_eq(ward_landlock_plan_report(plan)->status, "unavailable");
	ck_assert_str_eq(ward_landlock_plan_report(plan)->unavailable,
			 "landlock (disabled at boot)");
	ck_assert_int_eq(ward_landlock_plan_report(plan)->abi, 0);
	ck_assert_int_eq(ward_landlock_apply(plan, NULL), 0); /* applies nothing */
	ward_landlock_plan_free(plan);
}
END_TEST

START_TEST(test_off)
{
	struct ward_landlock_config cfg;
	struct ward_landlock_plan *plan;

	ward_landlock_config_init(&cfg);
	cfg.mode = WARD_LANDLOCK_OFF;
	plan = plan_for(&cfg, -ENOSYS);
	ck_assert_str_eq(ward_landlock_plan_report(plan)->status, "off");
	ck_assert_int_eq(ward_landlock_plan_report(plan)->abi, 0);
	ck_assert_str_eq(ward_landlock_plan_report(plan)->enforced, "");
	ck_assert_int_eq(ward_landlock_plan_rule(plan, 0, NULL, NULL), -1);
	ck_assert_int_eq(ward_landlock_apply(plan, NULL), 0);
	ward_landlock_plan_free(plan);
}
END_TEST

START_TEST(test_bad_config)
{
	static const char *const rel[] = { "/ok", "build/out", NULL };
	struct ward_landlock_config cfg;
	struct ward_error storage;
	struct ward_landlock_plan *plan;

	ward_landlock_config_init(&cfg);
	cfg.workdir = "project";
	ck_assert_str_eq(plan_error(&cfg, 7, &storage),
			 "landlock: workdir 'project' is not an absolute path");
	ck_assert_int_eq(storage.kind, WARD_ERR_INVALID_PARAMETERS);
	cfg.workdir = "/project";
	cfg.rw_paths = rel;
	ck_assert_str_eq(plan_error(&cfg, 7, &storage),
			 "landlock: writable path 'build/out' is not an absolute path");
	cfg.rw_paths = NULL;
	cfg.restrict_connect = true;
	cfg.n_connect_ports = 1; /* connect_ports[0] is 0 */
	ck_assert_str_eq(plan_error(&cfg, 7, &storage), "landlock: connect port 0 is not a port");
	cfg.n_connect_ports = WARD_LANDLOCK_MAX_PORTS + 1;
	ck_assert_str_eq(plan_error(&cfg, 7, &storage), "landlock: 65 connect ports, at most 64");
	cfg.n_connect_ports = 0;
	cfg.min_abi = 8;
	ck_assert_str_eq(plan_error(&cfg, 7, &storage),
			 "landlock: minimum abi 8 is not between 0 and 7");
	cfg.min_abi = 1;
	cfg.mode = (enum ward_landlock_mode)9;
	ck_assert_str_eq(plan_error(&cfg, 7, &storage), "landlock: unknown mode 9");

	/* extra writable paths get the workdir's rights */
	ward_landlock_config_init(&cfg);
	cfg.rw_paths = (const char *const[]){ "/srv/cache", "/opt/out", NULL };
	plan = plan_for(&cfg, 7);
	ck_assert(rule_access(plan, "/opt/out") != 0);
	ck_assert(rule_access(plan, "/opt/out") == rule_access(plan, "/tmp"));
	ward_landlock_plan_free(plan);
}
END_TEST

START_TEST(test_text_forms)
{
	enum ward_landlock_mode mode;
	struct ward_error storage, *err = &storage;
	unsigned need = 0;
	int abi = -1;

	ck_assert_int_eq(ward_landlock_parse_mode("best-effort", &mode, &err), 0);
	ck_assert_int_eq(mode, WARD_LANDLOCK_BEST_EFFORT);
	ck_assert_str_eq(ward_landlock_mode_name(mode), "best-effort");
	ck_assert_int_eq(ward_landlock_parse_mode("off", &mode, &err), 0);
	ck_assert_int_eq(mode, WARD_LANDLOCK_OFF);
	ck_assert_int_eq(ward_landlock_parse_mode("required", &mode, &err), 0);
	ck_assert_int_eq(mode, WARD_LANDLOCK_REQUIRED);
	ck_assert_int_eq(ward_landlock_parse_mode("strict", &mode, &err), -1);
	ck_assert_str_eq(storage.message,
			 "unknown landlock mode 'strict' (required, best-effort, off)");
	ck_assert_int_eq(storage.kind, WARD_ERR_INVALID_PARAMETERS);

	ck_assert_int_eq(ward_landlock_parse_abi("WARD_LANDLOCK_ABI_MAX", "3", &abi, &err), 0);
	ck_assert_int_eq(abi, 3);
	ck_assert_int_eq(ward_landlock_parse_abi("--landlock-abi-max", "0", &abi, &err), 0);
	ck_assert_int_eq(abi, 0);
	ck_assert_int_eq(ward_landlock_parse_abi("--landlock-abi-max", "8", &abi, &err), -1);
	ck_assert_str_eq(storage.message,
			 "--landlock-abi-max '8' is not a landlock abi between 0 and 7");
	ck_assert_int_eq(ward_landlock_parse_abi("WARD_LANDLOCK_ABI_MAX", "2x", &abi, &err), -1);
	ck_assert_int_eq(ward_landlock_parse_abi("WARD_LANDLOCK_ABI_MAX", "", &abi, &err), -1);
	ck_assert_int_eq(ward_landlock_parse_abi("min_abi", "-1", &abi, &err), -1);
	ck_assert_int_eq(abi, 0); /* untouched on failure */

	ck_assert_int_eq(ward_landlock_parse_need("net", &need, &err), 0);
	ck_assert_int_eq(ward_landlock_parse_need("scope", &need, &err), 0);
	ck_assert_uint_eq(need, WARD_LANDLOCK_NEED_NET | WARD_LANDLOCK_NEED_SCOPE);
	ck_assert_int_eq(ward_landlock_parse_need("signals", &need, &err), -1);
	ck_assert_str_eq(storage.message, "unknown landlock requirement 'signals' (fs, refer, "
					  "truncate, net, ioctl_dev, scope)");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("landlock");
	TCase *tc = harness_tcase(s, "plan", NULL);

	tcase_add_test(tc, test_masks_per_abi);
	tcase_add_test(tc, test_names);
	tcase_add_loop_test(tc, test_default_plan_each_abi, 1, 8);
	tcase_add_test(tc, test_network_rules);
	tcase_add_test(tc, test_cap);
	tcase_add_test(tc, test_required_refusals);
	tcase_add_test(tc, test_off);
	tcase_add_test(tc, test_bad_config);
	tcase_add_test(tc, test_text_forms);
	return harness_main(s);
}
