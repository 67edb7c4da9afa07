/* test-seccomp.c — profile parsing (every malformed line and its number) and
 * the compiled programs, checked by running the exported BPF in a small
 * classic-BPF interpreter on made-up struct seccomp_data: no kernel needed. */
#include "harness.h"
#include "ward/seccomp.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#define FOREIGN_ARCH AUDIT_ARCH_I386
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#define FOREIGN_ARCH AUDIT_ARCH_ARM
#endif

#define ALLOW SECCOMP_RET_ALLOW
#define KILL SECCOMP_RET_KILL_PROCESS
#define ERR(e) (SECCOMP_RET_ERRNO | (e))

/* ---- a classic BPF interpreter, as the kernel runs seccomp filters ---------- */

static uint32_t run_bpf(const struct sock_fprog *prog, const struct seccomp_data *d)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 };

	for (unsigned pc = 0; pc < prog->len; pc++) {
		const struct sock_filter *f = &prog->filter[pc];

		switch (f->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (f->k % 4 || f->k + 4 > sizeof(*d))
				ck_abort_msg("load at %u", f->k);
			memcpy(&a, (const char *)d + f->k, 4);
			break;
		case BPF_LD | BPF_IMM:
			a = f->k;
			break;
		case BPF_LDX | BPF_IMM:
			x = f->k;
			break;
		case BPF_LD | BPF_MEM:
			a = mem[f->k % BPF_MEMWORDS];
			break;
		case BPF_LDX | BPF_MEM:
			x = mem[f->k % BPF_MEMWORDS];
			break;
		case BPF_ST:
			mem[f->k % BPF_MEMWORDS] = a;
			break;
		case BPF_STX:
			mem[f->k % BPF_MEMWORDS] = x;
			break;
		case BPF_ALU | BPF_AND | BPF_K:
			a &= f->k;
			break;
		case BPF_ALU | BPF_OR | BPF_K:
			a |= f->k;
			break;
		case BPF_ALU | BPF_ADD | BPF_K:
			a += f->k;
			break;
		case BPF_ALU | BPF_SUB | BPF_K:
			a -= f->k;
			break;
		case BPF_ALU | BPF_AND | BPF_X:
			a &= x;
			break;
		case BPF_ALU | BPF_RSH | BPF_K:
			a >>= f->k;
			break;
		case BPF_ALU | BPF_LSH | BPF_K:
			a <<= f->k;
			break;
		case BPF_MISC | BPF_TAX:
			x = a;
			break;
		case BPF_MISC | BPF_TXA:
			a = x;
			break;
		case BPF_JMP | BPF_JA:
			pc += f->k;
			break;
		case BPF_JMP | BPF_JEQ | BPF_K:
			pc += a == f->k ? f->jt : f->jf;
			break;
		case BPF_JMP | BPF_JGT | BPF_K:
			pc += a > f->k ? f->jt : f->jf;
			break;
		case BPF_JMP | BPF_JGE | BPF_K:
			pc += a >= f->k ? f->jt : f->jf;
			break;
		case BPF_JMP | BPF_JSET | BPF_K:
			pc += (a & f->k) ? f->jt : f->jf;
			break;
		case BPF_JMP | BPF_JEQ | BPF_X:
			pc += a == x ? f->jt : f->jf;
			break;
		case BPF_JMP | BPF_JGT | BPF_X:
			pc += a > x ? f->jt : f->jf;
			break;
		case BPF_JMP | BPF_JGE | BPF_X:
			pc += a >= x ? f->jt : f->jf;
			break;
		case BPF_RET | BPF_K:
			return f->k;
		case BPF_RET | BPF_A:
			return a;
		default:
			ck_abort_msg("unknown BPF opcode 0x%x at %u", f->code, pc);
		}
	}
	ck_abort_msg("program fell off its end");
	return 0;
}

static uint32_t call(const struct ward_seccomp_program *p, uint32_t arch, int nr, uint64_t a0,
		     uint64_t a1, uint64_t a2)
{
	struct seccomp_data d = { .nr = nr, .arch = arch, .args = { a0, a1, a2 } };

	return run_bpf(&p->fprog, &d);
}

static uint32_t native(const struct ward_seccomp_program *p, int nr, uint64_t a0, uint64_t a1,
		       uint64_t a2)
{
	return call(p, NATIVE_ARCH, nr, a0, a1, a2);
}

static struct ward_seccomp_program *compile_text(const char *text, bool allow_ptrace)
{
	struct ward_seccomp_profile *profile;
	struct ward_seccomp_program *prog;
	struct ward_seccomp_options opts = { .allow_ptrace = allow_ptrace };
	struct ward_error *err = NULL;

	if (ward_seccomp_profile_parse("test", text, &profile, &err) < 0)
		ck_abort_msg("parse: %s", err->message);
	if (ward_seccomp_compile(profile, &opts, &prog, &err) < 0)
		ck_abort_msg("compile: %s", err->message);
	ward_seccomp_profile_free(profile);
	return prog;
}

static struct ward_seccomp_program *compile_builtin(const char *name, bool allow_ptrace)
{
	return compile_text(ward_seccomp_profile_text(name), allow_ptrace);
}

/* ---- parsing --------------------------------------------------------------- */

START_TEST(test_parse_builtin)
{
	struct ward_seccomp_profile *p;
	struct ward_error *err = NULL;
	bool clone3 = false, ptrace_tagged = false;

	ck_assert_int_eq(ward_seccomp_profile_builtin("default", &p, &err), 0);
	ck_assert_str_eq(p->name, "default");
	ck_assert_uint_eq(p->default_action, SECCOMP_RET_ALLOW);
	ck_assert_uint_gt(p->n_rules, 50);
	for (size_t i = 0; i < p->n_rules; i++) {
		ck_assert_str_eq(p->rules[i].source, "default");
		ck_assert_uint_gt(p->rules[i].line, 0);
		if (strcmp(p->rules[i].syscall, "clone3") == 0)
			clone3 = p->rules[i].action == ERR(ENOSYS) && p->rules[i].nr == SYS_clone3;
		if (strcmp(p->rules[i].syscall, "ptrace") == 0)
			ptrace_tagged = strcmp(p->rules[i].tag, "ptrace") == 0;
	}
	ck_assert(clone3);
	ck_assert(ptrace_tagged);
	ward_seccomp_profile_free(p);

	ck_assert_int_eq(ward_seccomp_profile_builtin("strict", &p, &err), 0);
	ck_assert_str_eq(p->rules[0].source, "default"); /* the include comes first */
	ck_assert_str_eq(p->rules[p->n_rules - 1].source, "strict");
	ward_seccomp_profile_free(p);

	ck_assert_int_lt(ward_seccomp_profile_builtin("lenient", &p, &err), 0);
	ck_assert_str_eq(err->message,
			 "unknown seccomp profile 'lenient' (default, strict, off, or a file)");
	ck_assert_int_eq(err->kind, WARD_ERR_INVALID_PARAMETERS);
	ward_error_free(err);
}
END_TEST

START_TEST(test_parse_forms)
{
	struct ward_seccomp_profile *p;
	struct ward_error *err = NULL;
	const struct ward_seccomp_cond *c;

	ck_assert_int_eq(ward_seccomp_profile_parse("t",
						    "# comment\n"
						    "\n"
						    "   @default EPERM  # allow-list\r\n"
						    "read allow\n"
						    "write\tallow arg0 <= 2\n"
						    "socket kill arg0 notin AF_UNIX,AF_INET6 arg1 == 0x10\n"
						    "ioctl log arg1 & 0xff == 0x12 @tty\n"
						    "fcntl trap arg1 in 1..3,7,2 arg0>=CLONE_NEWNS|1\n",
						    &p, &err),
			 0);
	ck_assert_uint_eq(p->default_action, ERR(EPERM));
	ck_assert_uint_eq(p->n_rules, 5);
	ck_assert_uint_eq(p->rules[0].action, SECCOMP_RET_ALLOW);
	ck_assert_uint_eq(p->rules[0].line, 4);
	c = &p->rules[1].conds[0];
	ck_assert(c->arg == 0 && c->op == WARD_SECCOMP_LE && c->value == 2);
	ck_assert_uint_eq(p->rules[2].action, SECCOMP_RET_KILL_PROCESS);
	c = &p->rules[2].conds[0];
	ck_assert_int_eq(c->op, WARD_SECCOMP_IN);
	ck_assert_uint_eq(c->n_ranges, 3); /* 0, 2..9, 11..max */
	ck_assert(c->lo[0] == 0 && c->hi[0] == 0);
	ck_assert(c->lo[1] == 2 && c->hi[1] == 9);
	ck_assert(c->lo[2] == 11 && c->hi[2] == 0xffffffffu);
	ck_assert(p->rules[2].conds[1].arg == 1 && p->rules[2].conds[1].value == 0x10);
	ck_assert_uint_eq(p->rules[3].action, SECCOMP_RET_LOG);
	ck_assert_str_eq(p->rules[3].tag, "tty");
	c = &p->rules[3].conds[0];
	ck_assert(c->op == WARD_SECCOMP_MASKED_EQ && c->mask == 0xff && c->value == 0x12);
	c = &p->rules[4].conds[0];
	ck_assert_uint_eq(c->n_ranges, 2); /* 1..3 (2 merged in), 7 */
	ck_assert(c->lo[0] == 1 && c->hi[0] == 3 && c->lo[1] == 7 && c->hi[1] == 7);
	ck_assert_uint_eq(p->rules[4].conds[1].value, CLONE_NEWNS | 1);
	ward_seccomp_profile_free(p);
}
END_TEST

static const struct {
	const char *text;
	const char *message;
} bad[] = {
	{ "read EPERM\nfrobnicate EPERM\n", "line 2: unknown system call 'frobnicate'" },
	{ "\n\nread\n", "line 3: 'read' has no action" },
	{ "read deny\n", "line 1: unknown action 'deny' (an errno name such as EPERM, or allow, "
			 "kill, kill-thread, trap, log)" },
	{ "read EWHATEVER\n", "line 1: unknown action 'EWHATEVER' (an errno name such as EPERM, "
			      "or allow, kill, kill-thread, trap, log)" },
	{ "read allow\n", "line 1: 'read allow' repeats the default action" },
	{ "# c\nRead EPERM\n", "line 2: bad system call name 'Read'" },
	{ "read EPERM fd==1\n", "line 1: expected a condition such as 'arg0==1' at 'fd==1'" },
	{ "read EPERM arg6==1\n", "line 1: argument 'arg6' out of range (arg0 to arg5)" },
	{ "read EPERM arg12==1\n", "line 1: argument 'arg12' out of range (arg0 to arg5)" },
	{ "read EPERM arg0=1\n", "line 1: unknown operator at '=1' (==, !=, <, <=, >, >=, "
				 "&MASK==, in, notin)" },
	{ "read EPERM arg0==\n", "line 1: missing value" },
	{ "read EPERM arg0==12abc\n", "line 1: bad number '12abc'" },
	{ "read EPERM arg0==99999999999999999999\n", "line 1: bad number '99999999999999999999'" },
	{ "read EPERM arg0==AF_MARS\n", "line 1: unknown constant 'AF_MARS'" },
	{ "read EPERM arg0==1 arg0==2\n", "line 1: arg0 is compared twice in one rule (write two "
					  "rules, or use 'in'/'notin')" },
	{ "read EPERM arg0&0xf=1\n", "line 1: a mask must be followed by '==' at '=1'" },
	{ "read EPERM arg0&0xf==0x10\n", "line 1: value 0x10 has bits outside the mask 0xf: "
					 "never matches" },
	{ "read EPERM arg0 in\n", "line 1: 'in' needs a list of values" },
	{ "read EPERM arg0 in 1,\n", "line 1: missing value after ','" },
	{ "read EPERM arg0 in 5..3\n", "line 1: empty range '5..3'" },
	{ "read EPERM arg0 in 0x100000000\n", "line 1: '0x100000000' does not fit in 32 bits (in "
					      "and notin compare the low 32 bits)" },
	{ "read EPERM arg0 notin 0..0xffffffff\n", "line 1: 'notin' leaves no value to match" },
	{ "read EPERM arg0 in 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17\n",
	  "line 1: more than 16 values in one list" },
	{ "read EPERM @a b\n", "line 1: the tag '@a' must end the line" },
	{ "read EPERM @\n", "line 1: empty tag '@'" },
	{ "read EPERM @Big\n", "line 1: bad tag '@Big' (lowercase letters, digits, '-')" },
	{ "@defualt EPERM\n", "line 1: unknown directive '@defualt' (@default, @include)" },
	{ "@default\n", "line 1: '@default' needs an action" },
	{ "@default EPERM\n@default kill\n", "line 2: the default action is already set (line 1)" },
	{ "@default EPERM extra\n", "line 1: unexpected 'extra' after '@default EPERM'" },
	{ "\n@include lenient\n", "line 2: unknown built-in profile 'lenient' (default, strict)" },
	{ "@include\n", "line 1: '@include' needs a built-in profile name" },
	{ "read EPERM\nwrite EPERM\x01\n", "line 2: unexpected byte 0x01" },
	{ "read EPERM arg0==1 arg1==1 arg2==1 arg3==1 arg4==1 arg5==1 arg0==2\n",
	  "line 1: more than 6 conditions" },
	{ "readreadreadreadreadreadreadreadreadreadreadreadreadreadreadreadread EPERM\n",
	  "line 1: system call name 'readreadreadread...' is too long" },
	{ "read EPERM arg0==0x111111111111111111111111111111111111111111111111111111111111111\n",
	  "line 1: value '0x11111111111111...' is too long" },
	{ "read EPERM\n\nread EACCES arg0==1\n",
	  "line 3: 'read EACCES' conflicts with 'read EPERM' (profile 'mine' line 1): a rule "
	  "without conditions takes every call" },
	{ "read EPERM arg0==1\nread EACCES\n",
	  "line 2: 'read EACCES' conflicts with 'read EPERM' (profile 'mine' line 1): a rule "
	  "without conditions takes every call" },
};

START_TEST(test_parse_errors)
{
	struct ward_seccomp_profile *p = (void *)1;
	struct ward_error storage = { 0 }, *err = &storage;
	char want[WARD_ERROR_MESSAGE_MAX];

	ck_assert_int_eq(ward_seccomp_profile_parse("mine", bad[_i].text, &p, &err), -1);
	ck_assert_ptr_null(p);
	ck_assert_ptr_eq(err, &storage);
	snprintf(want, sizeof(want), "seccomp profile 'mine' %s", bad[_i].message);
	ck_assert_str_eq(storage.message, want);
	ck_assert_int_eq(storage.kind, WARD_ERR_INVALID_PARAMETERS);
	ck_assert_str_eq(storage.rule, "seccomp");
}
END_TEST

/* An error in an included profile names that profile and its line; the
 * default action of the includer applies to the included rules. */
START_TEST(test_parse_include_errors)
{
	struct ward_seccomp_profile *p;
	struct ward_error *err = NULL;

	ck_assert_int_eq(ward_seccomp_profile_parse("mine", "# x\n@default EPERM\n@include default\n",
						    &p, &err),
			 -1);
	ck_assert_ptr_nonnull(strstr(err->message, "seccomp profile 'default' line "));
	ck_assert_ptr_nonnull(strstr(err->message, "repeats the default action"));
	ward_error_free(err);
	err = NULL;
	ck_assert_int_eq(ward_seccomp_profile_parse("mine", "@include strict\nbogus_call EPERM\n",
						    &p, &err),
			 -1);
	ck_assert_str_eq(err->message, "seccomp profile 'mine' line 2: unknown system call "
				       "'bogus_call'");
	ward_error_free(err);
}
END_TEST

START_TEST(test_load_file)
{
	char *dir = harness_tmpdir(), path[4096];
	struct ward_seccomp_profile *p;
	struct ward_error *err = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "%s/p.profile", dir);
	f = fopen(path, "w");
	fputs("@include default\n\nchroot EPERM\nmknod EPERMX\n", f);
	fclose(f);
	ck_assert_int_eq(ward_seccomp_profile_load_file(path, &p, &err), -1);
	ck_assert_ptr_nonnull(strstr(err->message, "line 4: unknown action 'EPERMX'"));
	ck_assert_ptr_nonnull(strstr(err->message, path));
	ward_error_free(err);
	err = NULL;
	snprintf(path, sizeof(path), "%s/missing.profile", dir);
	ck_assert_int_eq(ward_seccomp_profile_load_file(path, &p, &err), -1);
	ck_assert_int_eq(err->code, ENOENT);
	ward_error_free(err);
	err = NULL;
	ck_assert_int_eq(ward_seccomp_profile_load_file(dir, &p, &err), -1);
	ck_assert_ptr_nonnull(strstr(err->message, "is not a regular file"));
	ward_error_free(err);
	harness_rmtree(dir);
	free(dir);
}
END_TEST

/* ---- the compiled programs -------------------------------------------------- */

/* Every unconditional rule of the default profile is in the program. */
START_TEST(test_default_every_rule)
{
	struct ward_seccomp_profile *p;
	struct ward_seccomp_program *prog = compile_builtin("default", false);
	struct ward_error *err = NULL;
	size_t checked = 0;

	ck_assert_int_eq(ward_seccomp_profile_builtin("default", &p, &err), 0);
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct ward_seccomp_rule *r = &p->rules[i];

		if (r->n_conds || r->nr < 0)
			continue;
		ck_assert_msg(native(prog, r->nr, 0, 0, 0) == r->action, "%s: 0x%x", r->syscall,
			      native(prog, r->nr, 0, 0, 0));
		checked++;
	}
	ck_assert_uint_gt(checked, 40);
	ck_assert_uint_eq(native(prog, SYS_clone3, 0, 0, 0), ERR(ENOSYS));
	ck_assert_uint_eq(native(prog, SYS_bpf, 0, 0, 0), ERR(EPERM));
	ck_assert_uint_eq(native(prog, SYS_mount, 0, 0, 0), ERR(EPERM));
	ck_assert_uint_eq(native(prog, SYS_ptrace, 0, 0, 0), ERR(EPERM));
	ward_seccomp_profile_free(p);
	ward_seccomp_program_free(prog);
}
END_TEST

START_TEST(test_default_allows_ordinary_calls)
{
	struct ward_seccomp_program *prog = compile_builtin("default", false);
	static const int calls[] = { SYS_read,     SYS_write,      SYS_openat,  SYS_execve,
				     SYS_mmap,     SYS_futex,      SYS_wait4,   SYS_setsockopt,
				     SYS_sendto,   SYS_bind,       SYS_connect, SYS_socketpair,
				     SYS_getdents64, SYS_pipe2,    SYS_prctl,   SYS_seccomp,
				     SYS_kill,     SYS_rt_sigaction, SYS_statx, SYS_exit_group };

	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		ck_assert_msg(native(prog, calls[i], 0, 0, 0) == ALLOW, "call %d", calls[i]);
	/* fork, vfork and threads through clone */
	ck_assert_uint_eq(native(prog, SYS_clone, CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD,
				 0, 0),
			  ALLOW);
	ck_assert_uint_eq(native(prog, SYS_clone, CLONE_VM | CLONE_VFORK | SIGCHLD, 0, 0), ALLOW);
	ck_assert_uint_eq(native(prog, SYS_clone,
				 CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
					 CLONE_SYSVSEM | CLONE_SETTLS | CLONE_PARENT_SETTID |
					 CLONE_CHILD_CLEARTID,
				 0, 0),
			  ALLOW);
	ck_assert_uint_eq(native(prog, SYS_ioctl, 1, TCGETS, 0), ALLOW);
	ck_assert_uint_eq(native(prog, SYS_ioctl, 1, TIOCGWINSZ, 0), ALLOW);
	ck_assert_uint_eq(native(prog, SYS_personality, PER_LINUX, 0, 0), ALLOW);
	ck_assert_uint_eq(native(prog, SYS_personality, 0xffffffff, 0, 0), ALLOW);
	ward_seccomp_program_free(prog);
}
END_TEST

START_TEST(test_default_conditions)
{
	struct ward_seccomp_program *prog = compile_builtin("default", false);
	static const uint64_t ns_flags[] = { CLONE_NEWNS,  CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
					     CLONE_NEWUSER, CLONE_NEWPID,   CLONE_NEWNET };

	for (size_t i = 0; i < sizeof(ns_flags) / sizeof(ns_flags[0]); i++)
		ck_assert_uint_eq(native(prog, SYS_clone, ns_flags[i] | SIGCHLD, 0, 0), ERR(EPERM));
	ck_assert_uint_eq(native(prog, SYS_unshare, CLONE_NEWUSER, 0, 0), ERR(EPERM));

	/* terminal injection; the kernel takes the command as 32 bits, so
	 * garbage above them must not get past */
	ck_assert_uint_eq(native(prog, SYS_ioctl, 0, TIOCSTI, 0), ERR(EPERM));
	ck_assert_uint_eq(native(prog, SYS_ioctl, 0, TIOCLINUX, 0), ERR(EPERM));
	ck_assert_uint_eq(native(prog, SYS_ioctl, 0, TIOCSTI | 0xdead00000000ull, 0), ERR(EPERM));

	ck_assert_uint_eq(native(prog, SYS_personality, ADDR_NO_RANDOMIZE, 0, 0), ERR(EPERM));
	ck_assert_uint_eq(native(prog, SYS_personality, PER_BSD, 0, 0), ERR(EPERM));
	ck_assert_uint_eq(native(prog, SYS_personality, 0xfffffffe, 0, 0), ERR(EPERM));
	ck_assert_uint_eq(native(prog, SYS_personality, 1, 0, 0), ERR(EPERM));

	/* socket families: only UNIX, INET, INET6 and NETLINK, whatever the
	 * upper half of the register holds */
	for (uint64_t fam = 0; fam < 64; fam++) {
		bool ok = fam == AF_UNIX || fam == AF_INET || fam == AF_INET6 || fam == AF_NETLINK;
		uint32_t want = ok ? ALLOW : ERR(EPERM);

		ck_assert_msg(native(prog, SYS_socket, fam, SOCK_STREAM, 0) == want, "family %d",
			      (int)fam);
		ck_assert_msg(native(prog, SYS_socket, fam | 0x100000000ull, SOCK_STREAM, 0) == want,
			      "family %d with upper bits", (int)fam);
	}
	ck_assert_uint_eq(native(prog, SYS_socket, 0xffffffffull, 0, 0), ERR(EPERM));
	/* netlink: route only */
	ck_assert_uint_eq(native(prog, SYS_socket, AF_NETLINK, SOCK_RAW, NETLINK_ROUTE), ALLOW);
	ck_assert_uint_eq(native(prog, SYS_socket, AF_NETLINK, SOCK_RAW, NETLINK_SOCK_DIAG),
			  ERR(EPERM));
	ck_assert_uint_eq(native(prog, SYS_socket, AF_NETLINK, SOCK_RAW, NETLINK_AUDIT), ERR(EPERM));
	ck_assert_uint_eq(native(prog, SYS_socket, AF_NETLINK, SOCK_RAW, NETLINK_KOBJECT_UEVENT),
			  ERR(EPERM));
	/* the protocol check is for netlink only */
	ck_assert_uint_eq(native(prog, SYS_socket, AF_INET, SOCK_STREAM, 6), ALLOW);
	ward_seccomp_program_free(prog);
}
END_TEST

START_TEST(test_other_abis_killed)
{
	struct ward_seccomp_program *prog = compile_builtin("default", false);

	ck_assert_uint_eq(call(prog, FOREIGN_ARCH, 0, 0, 0, 0), KILL);
	ck_assert_uint_eq(call(prog, FOREIGN_ARCH, 4 /* i386 write */, 1, 0, 0), KILL);
	ck_assert_uint_eq(call(prog, 0, SYS_read, 0, 0, 0), KILL);
#if defined(__x86_64__)
	/* x32: the native arch value with bit 30 of the number set */
	ck_assert_uint_eq(call(prog, NATIVE_ARCH, 0x40000000 | SYS_read, 0, 0, 0), KILL);
	ck_assert_uint_eq(call(prog, NATIVE_ARCH, 0x40000000 | 512 /* x32 rt_sigaction */, 0, 0, 0),
			  KILL);
#endif
	ward_seccomp_program_free(prog);
}
END_TEST

START_TEST(test_allow_ptrace_option)
{
	struct ward_seccomp_program *deny = compile_builtin("default", false);
	struct ward_seccomp_program *allow = compile_builtin("default", true);

	ck_assert_uint_eq(native(deny, SYS_ptrace, 0, 0, 0), ERR(EPERM));
	ck_assert_uint_eq(native(deny, SYS_process_vm_readv, 0, 0, 0), ERR(EPERM));
	ck_assert_uint_eq(native(allow, SYS_ptrace, 0, 0, 0), ALLOW);
	ck_assert_uint_eq(native(allow, SYS_process_vm_readv, 0, 0, 0), ALLOW);
	ck_assert_uint_eq(native(allow, SYS_process_vm_writev, 0, 0, 0), ALLOW);
	ck_assert_uint_eq(native(allow, SYS_bpf, 0, 0, 0), ERR(EPERM)); /* the rest stays */
	ward_seccomp_program_free(deny);
	ward_seccomp_program_free(allow);
}
END_TEST

START_TEST(test_strict)
{
	struct ward_seccomp_program *prog = compile_builtin("strict", false);

	ck_assert_uint_eq(native(prog, SYS_bpf, 0, 0, 0), ERR(EPERM)); /* from default */
	ck_assert_uint_eq(native(prog, SYS_clone3, 0, 0, 0), ERR(ENOSYS));
	ck_assert_uint_eq(native(prog, SYS_socket, AF_NETLINK, SOCK_RAW, NETLINK_ROUTE), ERR(EPERM));
	ck_assert_uint_eq(native(prog, SYS_socket, AF_INET, SOCK_RAW, 1), ERR(EPERM));
	ck_assert_uint_eq(native(prog, SYS_socket, AF_INET, SOCK_RAW | SOCK_CLOEXEC, 1), ERR(EPERM));
	ck_assert_uint_eq(native(prog, SYS_socket, AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), ALLOW);
	ck_assert_uint_eq(native(prog, SYS_socket, AF_UNIX, SOCK_DGRAM, 0), ALLOW);
	ck_assert_uint_eq(native(prog, SYS_chroot, 0, 0, 0), ERR(EPERM));
	ck_assert_uint_eq(native(prog, SYS_kcmp, 0, 0, 0), ERR(EPERM));
	ck_assert_uint_eq(native(prog, SYS_read, 0, 0, 0), ALLOW);
	ward_seccomp_program_free(prog);
}
END_TEST

/* Ranges become aligned blocks: check every value around their edges. */
START_TEST(test_ranges)
{
	struct ward_seccomp_program *prog =
		compile_text("fcntl EPERM arg1 in 3..9,17,100..0x1ff\n"
			     "dup3 EACCES arg2 notin 0,0xffffffff\n",
			     false);

	for (uint64_t v = 0; v < 600; v++) {
		bool in = (v >= 3 && v <= 9) || v == 17 || (v >= 100 && v <= 0x1ff);

		ck_assert_msg(native(prog, SYS_fcntl, 0, v, 0) == (in ? ERR(EPERM) : ALLOW), "%d",
			      (int)v);
	}
	ck_assert_uint_eq(native(prog, SYS_dup3, 0, 0, 0), ALLOW);
	ck_assert_uint_eq(native(prog, SYS_dup3, 0, 0, 0xffffffff), ALLOW);
	ck_assert_uint_eq(native(prog, SYS_dup3, 0, 0, 0x7fffffff), ERR(EACCES));
	ck_assert_uint_eq(native(prog, SYS_dup3, 0, 0, 0x80000000), ERR(EACCES));
	ck_assert_uint_eq(native(prog, SYS_dup3, 0, 0, 1), ERR(EACCES));
	ck_assert_uint_eq(native(prog, SYS_dup3, 0, 0, 0xfffffffe), ERR(EACCES));
	ward_seccomp_program_free(prog);

	/* an allow-list profile */
	prog = compile_text("@default kill\nread allow\nexit_group allow\nwrite allow arg0<=2\n",
			    false);
	ck_assert_uint_eq(native(prog, SYS_read, 5, 0, 0), ALLOW);
	ck_assert_uint_eq(native(prog, SYS_write, 2, 0, 0), ALLOW);
	ck_assert_uint_eq(native(prog, SYS_write, 3, 0, 0), KILL);
	ck_assert_uint_eq(native(prog, SYS_openat, 0, 0, 0), KILL);
	ward_seccomp_program_free(prog);
}
END_TEST

/* Two rules of one call with the same conditions and different actions are
 * refused with both lines; a program longer than the kernel takes, with the
 * profile's name. */
START_TEST(test_compile_errors)
{
	struct ward_seccomp_profile *p;
	struct ward_seccomp_program *prog = (void *)1;
	struct ward_error *err = NULL;
	char *text = malloc(64 * 1024), *t = text;

	ck_assert_int_eq(ward_seccomp_profile_parse("test",
						    "read EPERM arg0==1 arg1&4==4\n"
						    "read EACCES arg1&4==4 arg0==1\n",
						    &p, &err),
			 -1);
	ck_assert_str_eq(err->message, "seccomp profile 'test' line 2: 'read' has the same "
				       "conditions as an earlier rule with another action "
				       "(profile 'test' line 1)");
	ck_assert_int_eq(err->kind, WARD_ERR_INVALID_PARAMETERS);
	ward_error_free(err);
	err = NULL;
	/* other conditions, or the same action: fine */
	ck_assert_int_eq(ward_seccomp_profile_parse("test",
						    "read EPERM arg0==1\nread EACCES arg0==2\n"
						    "write EPERM arg0==1\nwrite EPERM arg0==1\n",
						    &p, &err),
			 0);
	ward_seccomp_profile_free(p);

	/* 40 calls, each with 6 lists of 16 ranges: ~8,000 instructions */
	for (int nr = 0; nr < 40; nr++) {
		t += sprintf(t, "%s EPERM", seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr));
		for (int a = 0; a < 6; a++) {
			t += sprintf(t, " arg%d in ", a);
			for (int r = 0; r < 16; r++)
				t += sprintf(t, "%s%d..%d", r ? "," : "", 10 * r + 1, 10 * r + 5);
		}
		t += sprintf(t, "\n");
	}
	ck_assert_int_eq(ward_seccomp_profile_parse("test", text, &p, &err), 0);
	ck_assert_int_eq(ward_seccomp_compile(p, NULL, &prog, &err), -1);
	ck_assert_ptr_null(prog);
	ck_assert_str_eq(err->message, "seccomp profile 'test': the program is longer than the "
				       "kernel's 4096 instructions");
	ck_assert_int_eq(err->kind, WARD_ERR_INVALID_PARAMETERS);
	ward_error_free(err);
	ward_seccomp_profile_free(p);
	free(text);
}
END_TEST

/* ---- against the rules, and against libseccomp ------------------------------- */

/* What a profile says of one call, read straight off its rules: the most
 * restrictive action among the rules that match (the first among equals),
 * else the default; every other ABI killed. */
static bool holds(const struct ward_seccomp_cond *c, const struct seccomp_data *d)
{
	uint64_t x = d->args[c->arg];

	switch (c->op) {
	case WARD_SECCOMP_EQ:
		return x == c->value;
	case WARD_SECCOMP_NE:
		return x != c->value;
	case WARD_SECCOMP_LT:
		return x < c->value;
	case WARD_SECCOMP_LE:
		return x <= c->value;
	case WARD_SECCOMP_GT:
		return x > c->value;
	case WARD_SECCOMP_GE:
		return x >= c->value;
	case WARD_SECCOMP_MASKED_EQ:
		return (x & c->mask) == c->value;
	case WARD_SECCOMP_IN:
		for (unsigned r = 0; r < c->n_ranges; r++)
			if ((uint32_t)x >= c->lo[r] && (uint32_t)x <= c->hi[r])
				return true;
		return false;
	}
	return false;
}

static bool is_lifted(const struct ward_seccomp_rule *r, const struct ward_seccomp_options *opts)
{
	return opts && ((opts->allow_ptrace && strcmp(r->tag, "ptrace") == 0) ||
			(opts->allow_nested && strcmp(r->tag, "nested") == 0));
}

static uint32_t spec(const struct ward_seccomp_profile *p, const struct ward_seccomp_options *opts,
		     const struct seccomp_data *d)
{
	const struct ward_seccomp_rule *best = NULL;

	if (d->arch != NATIVE_ARCH)
		return KILL;
#if defined(__x86_64__)
	if ((uint32_t)d->nr >= 0x40000000 && (uint32_t)d->nr != 0xffffffff)
		return KILL;
#endif
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct ward_seccomp_rule *r = &p->rules[i];
		bool all = r->nr == d->nr && !is_lifted(r, opts);

		for (unsigned k = 0; all && k < r->n_conds; k++)
			all = holds(&r->conds[k], d);
		if (all && (!best || (int32_t)(r->action & SECCOMP_RET_ACTION_FULL) <
					     (int32_t)(best->action & SECCOMP_RET_ACTION_FULL)))
			best = r;
	}
	return best ? best->action : p->default_action;
}

/* The second reference: the same profile compiled by libseccomp, "in"
 * lists as aligned blocks of masked equality on the low 32 bits. */
struct expand {
	scmp_filter_ctx ctx;
	const struct ward_seccomp_rule *rule;
	struct scmp_arg_cmp cmp[WARD_SECCOMP_MAX_CONDS];
};

static enum scmp_compare scmp_op(enum ward_seccomp_op op)
{
	switch (op) {
	case WARD_SECCOMP_EQ:
		return SCMP_CMP_EQ;
	case WARD_SECCOMP_NE:
		return SCMP_CMP_NE;
	case WARD_SECCOMP_LT:
		return SCMP_CMP_LT;
	case WARD_SECCOMP_LE:
		return SCMP_CMP_LE;
	case WARD_SECCOMP_GT:
		return SCMP_CMP_GT;
	case WARD_SECCOMP_GE:
		return SCMP_CMP_GE;
	case WARD_SECCOMP_MASKED_EQ:
	case WARD_SECCOMP_IN:
		return SCMP_CMP_MASKED_EQ;
	}
	return SCMP_CMP_EQ;
}

static void expand(struct expand *x, unsigned i)
{
	const struct ward_seccomp_cond *c;

	if (i == x->rule->n_conds) {
		ck_assert_int_eq(seccomp_rule_add_array(x->ctx, x->rule->action, x->rule->nr,
							x->rule->n_conds, x->cmp),
				 0);
		return;
	}
	c = &x->rule->conds[i];
	if (c->op != WARD_SECCOMP_IN) {
		x->cmp[i] = (struct scmp_arg_cmp){ c->arg, scmp_op(c->op), c->mask, c->value };
		if (c->op != WARD_SECCOMP_MASKED_EQ)
			x->cmp[i].datum_a = c->value;
		expand(x, i + 1);
		return;
	}
	for (unsigned r = 0; r < c->n_ranges; r++) {
		uint64_t lo = c->lo[r], hi = c->hi[r];

		while (lo <= hi) {
			uint64_t size = lo ? lo & -lo : 0x100000000ull;

			while (lo + size - 1 > hi)
				size >>= 1;
			x->cmp[i] = (struct scmp_arg_cmp){ c->arg, SCMP_CMP_MASKED_EQ,
							   0xffffffffull & ~(size - 1), lo };
			expand(x, i + 1);
			lo += size;
		}
	}
}

static struct sock_fprog libseccomp_program(const struct ward_seccomp_profile *p,
					    const struct ward_seccomp_options *opts)
{
	scmp_filter_ctx ctx = seccomp_init(p->default_action);
	struct sock_fprog f;
	struct stat st;
	int fd = memfd_create("reference", MFD_CLOEXEC);

	ck_assert_ptr_nonnull(ctx);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS), 0);
	ck_assert_int_eq(seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0), 0);
	for (size_t i = 0; i < p->n_rules; i++) {
		struct expand x = { .ctx = ctx, .rule = &p->rules[i] };

		if (!is_lifted(&p->rules[i], opts))
			expand(&x, 0);
	}
	ck_assert_int_eq(seccomp_export_bpf(ctx, fd), 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	f.len = (unsigned short)((size_t)st.st_size / sizeof(struct sock_filter));
	f.filter = malloc((size_t)st.st_size);
	ck_assert_int_eq(pread(fd, f.filter, (size_t)st.st_size, 0), st.st_size);
	close(fd);
	seccomp_release(ctx);
	return f;
}

/* Values worth trying for one argument of one call: 0, all ones, each
 * constant the rules compare it with and its neighbours, the bits of
 * each mask; each also under other upper halves. */
static size_t edges(const struct ward_seccomp_profile *p, int nr, unsigned arg, uint64_t *v,
		    size_t max)
{
	static const uint64_t highs[] = { 0, 1ull << 32, 0xffffffffull << 32,
					  0xdeadbeefull << 32 };
	size_t n = 0;

#define ADD(x)                                                                  \
	do {                                                                    \
		for (size_t h_ = 0; h_ < 4 && n < max; h_++)                    \
			v[n++] = ((uint64_t)(x) & 0xffffffffull) | highs[h_];   \
		if (n < max)                                                    \
			v[n++] = (uint64_t)(x);                                 \
	} while (0)
	ADD(0);
	ADD(0xffffffffull);
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct ward_seccomp_rule *r = &p->rules[i];

		for (unsigned k = 0; r->nr == nr && k < r->n_conds; k++) {
			const struct ward_seccomp_cond *c = &r->conds[k];

			if (c->arg != arg)
				continue;
			if (c->op == WARD_SECCOMP_IN) {
				for (unsigned g = 0; g < c->n_ranges; g++) {
					ADD((uint64_t)c->lo[g] - 1);
					ADD(c->lo[g]);
					ADD(c->hi[g]);
					ADD((uint64_t)c->hi[g] + 1);
				}
				continue;
			}
			ADD(c->value);
			ADD(c->value + 1);
			ADD(c->value - 1);
			ADD(c->value ^ (1ull << 32));
			if (c->op != WARD_SECCOMP_MASKED_EQ)
				continue;
			ADD(c->mask);
			ADD(~c->mask);
			ADD(c->value | ~c->mask);
			for (unsigned b = 0; b < 64 && n + 2 <= max; b++)
				if ((c->mask >> b) & 1) {
					v[n++] = c->value ^ (1ull << b);
					v[n++] = 1ull << b;
				}
		}
	}
#undef ADD
	return n;
}

static uint64_t random64(void)
{
	return ((uint64_t)(unsigned)random() << 33) ^ ((uint64_t)(unsigned)random() << 11) ^
	       (uint64_t)(unsigned)random();
}

/* The compiled program against the profile's rules read directly (spec)
 * and, where `libseccomp` (the built-in profiles), against libseccomp's
 * program. libseccomp 2.5 is not a reference for every profile: with two
 * rules of one call that compare 64-bit values, its program can take a
 * call that neither rule matches. */
static void agree(const char *name, const char *text, const struct ward_seccomp_options *opts,
		  bool libseccomp, int per_call)
{
	static uint64_t v[WARD_SECCOMP_MAX_CONDS][1024];
	struct ward_seccomp_profile *p;
	struct ward_seccomp_program *prog;
	struct ward_error *err = NULL;
	struct sock_fprog ref;
	size_t nv[WARD_SECCOMP_MAX_CONDS];
	unsigned long tried = 0;

	ck_assert_msg(ward_seccomp_profile_parse(name, text, &p, &err) == 0, "%s: %s", name,
		      err ? err->message : "");
	ck_assert_msg(ward_seccomp_compile(p, opts, &prog, &err) == 0, "%s: %s", name,
		      err ? err->message : "");
	ref = libseccomp ? libseccomp_program(p, opts) : prog->fprog;
	srandom(7);
	for (int nr = -2; nr < 600; nr++) {
		bool ruled = false;

		for (size_t i = 0; i < p->n_rules; i++)
			ruled |= p->rules[i].nr == nr;
		for (unsigned a = 0; a < WARD_SECCOMP_MAX_CONDS; a++)
			nv[a] = edges(p, nr, a, v[a], 1024);
		for (int k = 0; k < (ruled ? per_call : 3); k++) {
			struct seccomp_data d = { .nr = nr, .arch = NATIVE_ARCH };
			uint32_t got;

			for (unsigned a = 0; a < WARD_SECCOMP_MAX_CONDS; a++)
				d.args[a] = random() % 8 == 0 ? random64() :
								v[a][(size_t)random() % nv[a]];
			got = run_bpf(&prog->fprog, &d);
			/* (an assertion per call would cost a write to Check's pipe) */
			if (got == spec(p, opts, &d) && (!libseccomp || got == run_bpf(&ref, &d))) {
				tried++;
				continue;
			}
			ck_abort_msg("%s: call %d (%#llx, %#llx, %#llx, %#llx): 0x%x, the rules "
				     "0x%x, libseccomp 0x%x",
				     name, nr, (unsigned long long)d.args[0],
				     (unsigned long long)d.args[1], (unsigned long long)d.args[2],
				     (unsigned long long)d.args[3], got, spec(p, opts, &d),
				     run_bpf(&ref, &d));
		}
	}
	for (int nr = 0; nr < 600; nr += 7) {
		struct seccomp_data d = { .nr = nr, .arch = FOREIGN_ARCH };

		ck_assert_uint_eq(run_bpf(&prog->fprog, &d), KILL);
		ck_assert_uint_eq(run_bpf(&ref, &d), KILL);
		d.arch = NATIVE_ARCH;
		d.nr = nr | 0x40000000;
		ck_assert_uint_eq(run_bpf(&prog->fprog, &d), spec(p, opts, &d));
		ck_assert_uint_eq(run_bpf(&ref, &d), spec(p, opts, &d));
		d.nr = -1; /* no call: a tracer's skip */
		ck_assert_uint_eq(run_bpf(&prog->fprog, &d), p->default_action);
		ck_assert_uint_eq(run_bpf(&ref, &d), p->default_action);
	}
	ck_assert_uint_gt(tried, (unsigned long)per_call);
	if (libseccomp)
		free(ref.filter);
	ward_seccomp_program_free(prog);
	ward_seccomp_profile_free(p);
}

/* ward's programs decide every call as the rules say and as libseccomp's
 * did, for the built-in profiles with and without their options and for
 * every kind of condition; and the default profile stays short (the
 * kernel compiles it again in every sandbox). */
/* Whether the kernel takes the program (its checker refuses a jump out of
 * the program and one that does not end in a return), loaded in a child. */
static bool kernel_accepts(const struct sock_fprog *f)
{
	int status;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, f) < 0)
			_exit(42);
		/* loaded: the filter may now deny, trap or kill exit_group
		 * itself (a profile whose default is not allow), so how the
		 * child ends from here says nothing */
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	return !(WIFEXITED(status) && WEXITSTATUS(status) == 42);
}

static uint64_t edge_value(void)
{
	static const uint32_t words[] = { 0, 1, 2, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff };
	uint32_t hi = random() % 3 ? words[random() % 7] : (uint32_t)random64();
	uint32_t lo = random() % 3 ? words[random() % 7] : (uint32_t)random64();

	return (uint64_t)hi << 32 | lo;
}

/* One random rule of name into t; returns the end. Simple: values from a
 * few (so that rules meet), short sorted lists; else edge values on both
 * words, masks across both, lists of up to 16 ranges, and some rules
 * without conditions. */
static char *random_rule(char *t, const char *name, const char *action, bool simple)
{
	static const char *const ops[] = { "==", "!=", "<", "<=", ">", ">=" };
	static const uint64_t values[] = { 0, 1, 2, 5, 0xff, 0x100000000ull, 0x100000005ull,
					   0xffffffffull, 0xffffffff00000000ull };
	int n_conds = simple || random() % 64 ? 1 + (int)(random() % 3) : 0;
	bool used[WARD_SECCOMP_MAX_CONDS] = { false };

	t += sprintf(t, "%s %s", name, action);
	for (int c = 0; c < n_conds; c++) {
		unsigned a = (unsigned)(random() % WARD_SECCOMP_MAX_CONDS);

		if (used[a])
			continue;
		used[a] = true;
		switch (random() % (simple ? 3 : 4)) {
		case 0:
			t += sprintf(t, " arg%u%s%#llx", a, ops[random() % 6],
				     (unsigned long long)(simple ? values[random() % 9] : edge_value()));
			break;
		case 1: {
			uint64_t m = simple ? values[random() % 9] | 4 :
				     random() % 2 ? edge_value() : (1ull << (random() % 64));
			uint64_t v = simple ? values[random() % 9] & 4 :
				     random() % 2 ? m : edge_value() & m;

			t += sprintf(t, " arg%u&%#llx==%#llx", a, (unsigned long long)m,
				     (unsigned long long)v);
			break;
		}
		default:
			if (simple) {
				int n = 1 + (int)(random() % 6);
				unsigned lo = (unsigned)(random() % 4);

				t += sprintf(t, " arg%u %s ", a, random() % 2 ? "in" : "notin");
				for (int r = 0; r < n; r++) {
					unsigned hi = lo + (unsigned)(random() % 3);

					t += sprintf(t, "%s%u..%u", r ? "," : "", lo, hi);
					lo = hi + 2 + (unsigned)(random() % 5);
				}
				break;
			}
			t += sprintf(t, " arg%u %s ", a, random() % 2 ? "in" : "notin");
			for (int r = 0, n = 1 + (int)(random() % 16); r < n; r++) {
				uint32_t lo = random() % 4 ? (uint32_t)random() % 64 :
							     (uint32_t)edge_value();
				uint32_t hi = random() % 2 ? lo : lo + (uint32_t)(random() % 8);

				if (hi < lo)
					hi = 0xffffffff;
				t += sprintf(t, "%s%u..%u", r ? "," : "", lo, hi);
			}
		}
	}
	return t + sprintf(t, "\n");
}

/* Random profiles, small to near the kernel's limit: every jump's
 * distance, trampolines included, lands where it should, and the kernel
 * takes every program. */
START_TEST(test_random_profiles)
{
	static const char *const actions[] = { "EPERM", "EACCES", "kill", "trap", "log" };
	char *text = malloc(256 * 1024);
	int parsed = 0;

	for (int round = 0; round < 300; round++) {
		/* seeded each round: agree() reseeds random(), and one seed for
		 * the loop drew 27 distinct profiles in 300 rounds */
		int n_rules = (srandom(11u + (unsigned)round),
			       1 + (int)(random() % (round < 100 ? 40 : 250)));
		char *t = text;
		struct ward_seccomp_profile *p;
		struct ward_seccomp_program *prog;
		struct ward_error *err = NULL;

		for (int i = 0; i < n_rules; i++) {
			const char *name = NULL;

			while (!name)
				name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE,
									(int)(random() % 120));
			t = random_rule(t, name, actions[random() % 5], true);
		}
		/* (a profile the parser refuses, two rules taking the same
		 * calls with different actions, is drawn again) */
		if (ward_seccomp_profile_parse("random", text, &p, &err) < 0) {
			ward_error_free(err);
			continue;
		}
		ck_assert_int_eq(ward_seccomp_compile(p, NULL, &prog, &err), 0);
		ck_assert_msg(kernel_accepts(&prog->fprog), "refused: %s", text);
		ward_seccomp_program_free(prog);
		ward_seccomp_profile_free(p);
		agree("random", text, NULL, false, 150);
		parsed++;
	}
	ck_assert_int_gt(parsed, 30);
	free(text);
}
END_TEST

START_TEST(test_random_hard_profiles)
{
	static const char *const actions[] = {
		"EPERM", "EACCES", "ENOENT", "EIO", "ENXIO", "E2BIG", "ENOEXEC", "EBADF",
		"ECHILD", "EAGAIN", "ENOMEM", "EFAULT", "EBUSY", "EEXIST", "EXDEV", "ENODEV",
		"ENOTDIR", "EISDIR", "EINVAL", "ENFILE", "kill", "kill-thread", "trap", "log", "allow"
	};
	char *text = malloc(1024 * 1024);
	int parsed = 0, long_ones = 0;
	unsigned longest = 0;

	int rounds = getenv("WARD_SECCOMP_ROUNDS") ? atoi(getenv("WARD_SECCOMP_ROUNDS")) : 250;
	unsigned seed0 = getenv("WARD_SECCOMP_SEED") ? (unsigned)atoi(getenv("WARD_SECCOMP_SEED")) : 1234u;

	for (int round = 0; round < rounds; round++) {
		int n_rules = (srandom(seed0 + (unsigned)round), /* (agree() reseeds) */
			       1 + (int)(random() % (round < 80 ? 60 : 450)));
		int n_names = 1 + (int)(random() % (round % 3 ? 400 : 8));
		const char *deflt = actions[random() % 25];
		char *t = text;
		struct ward_seccomp_profile *p;
		struct ward_seccomp_program *prog;
		struct ward_error *err = NULL;

		t += sprintf(t, "@default %s\n", deflt);
		for (int i = 0; i < n_rules; i++) {
			const char *name = NULL, *action;

			while (!name)
				name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE,
									(int)(random() % n_names));
			do
				action = actions[random() % 25];
			while (action == deflt);
			t = random_rule(t, name, action, false);
		}
		if (ward_seccomp_profile_parse("stress", text, &p, &err) < 0) {
			if (getenv("WARD_SECCOMP_VERBOSE"))
				fprintf(stderr, "parse: %s\n", err->message);
			ward_error_free(err);
			err = NULL;
			continue;
		}
		if (ward_seccomp_compile(p, NULL, &prog, &err) < 0) {
			if (getenv("WARD_SECCOMP_VERBOSE"))
				fprintf(stderr, "compile: %s\n", err->message);
			ck_assert_msg(strstr(err->message, "longer than") ||
					      strstr(err->message, "more than 64"),
				      "%s", err->message);
			ward_error_free(err);
			ward_seccomp_profile_free(p);
			continue;
		}
		if (prog->fprog.len > longest)
			longest = prog->fprog.len;
		long_ones += prog->fprog.len > 1024;
		ck_assert_msg(kernel_accepts(&prog->fprog), "refused (%u insns): %s", prog->fprog.len, text);
		ward_seccomp_program_free(prog);
		ward_seccomp_profile_free(p);
		agree("stress", text, NULL, false, 200);
		parsed++;
	}
	fprintf(stderr, "hard profiles: %d profiles, %d over 1024 insns, longest %u\n", parsed,
		long_ones, longest);
	ck_assert_int_gt(parsed, 50);
	free(text);
}
END_TEST

/* A program of exactly BPF_MAXINSNS instructions: compiled, taken by the
 * kernel, deciding as the rules say; one more rule is refused, not cut. */
START_TEST(test_longest_program)
{
	static const char *const actions[] = { "EPERM", "EACCES", "kill", "trap", "ENOENT" };
	char *text = calloc(1, 1024 * 1024), line[512];
	size_t len = 0;
	unsigned got = 0;
	bool over = false;

	{
		/* kernel_accepts used to call a program refused when it denied
		 * the child's own exit_group */
		struct ward_seccomp_program *deny = compile_text("@default EPERM\nread allow\n", false);

		ck_assert(kernel_accepts(&deny->fprog));
		ward_seccomp_program_free(deny);
	}
	srandom(99);
	for (int tries = 0; tries < 20000 && got != BPF_MAXINSNS; tries++) {
		struct ward_seccomp_profile *p;
		struct ward_seccomp_program *prog;
		struct ward_error *err = NULL;
		const char *name = NULL;
		char *end;

		while (!name)
			name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE,
								(int)(random() % 400));
		end = random_rule(line, name, actions[random() % 5], false);
		if (!strstr(line, " arg"))
			continue; /* no conditions: it would take every call */
		memcpy(text + len, line, (size_t)(end - line) + 1);
		if (ward_seccomp_profile_parse("max", text, &p, &err) < 0) {
			text[len] = '\0';
			ward_error_free(err);
			continue;
		}
		if (ward_seccomp_compile(p, NULL, &prog, &err) < 0) {
			ck_assert_msg(strstr(err->message, "longer than") != NULL, "%s", err->message);
			over = true;
			text[len] = '\0';
			ward_error_free(err);
			ward_seccomp_profile_free(p);
			continue;
		}
		got = prog->fprog.len;
		len += (size_t)(end - line);
		ward_seccomp_program_free(prog);
		ward_seccomp_profile_free(p);
	}
	fprintf(stderr, "longest program: %u instructions, %zu bytes of rules\n", got, len);
	ck_assert(over);
	ck_assert_uint_eq(got, BPF_MAXINSNS);
	{
		struct ward_seccomp_program *prog = compile_text(text, false);

		ck_assert_uint_eq(prog->fprog.len, BPF_MAXINSNS);
		ck_assert(kernel_accepts(&prog->fprog));
		ward_seccomp_program_free(prog);
	}
	agree("max", text, NULL, false, 300);
	free(text);
}
END_TEST

/* The kernel decides as run_bpf does: random profiles over calls that
 * ignore their arguments (errno actions only, more than 16 of them, and
 * trampolines), loaded in a child that makes each call for real. */
START_TEST(test_kernel_decides)
{
	static const char *const names[] = { "getpid", "getppid", "getuid", "geteuid",
					     "getgid", "getegid", "sched_yield", "getpgrp",
					     "gettid" };
	static const char *const actions[] = {
		"EPERM", "EACCES", "ENOENT", "EIO", "ENXIO", "E2BIG", "ENOEXEC", "EBADF",
		"ECHILD", "EAGAIN", "ENOMEM", "EFAULT", "EBUSY", "EEXIST", "EXDEV", "ENODEV",
		"ENOTDIR", "EISDIR", "EINVAL", "ENFILE", "EMFILE", "ENOTTY"
	};
	enum { N_CALLS = 3000 };
	static struct seccomp_data d[N_CALLS];
	static uint32_t want[N_CALLS];
	char *text = malloc(512 * 1024);
	int loaded = 0;

	for (int round = 0; round < 40; round++) {
		struct ward_seccomp_profile *p;
		struct ward_seccomp_program *prog;
		struct ward_error *err = NULL;
		uint64_t v[WARD_SECCOMP_MAX_CONDS][256];
		size_t nv[WARD_SECCOMP_MAX_CONDS];
		int n_rules = (srandom(777u + (unsigned)round), 1 + (int)(random() % 300));
		char *t = text;
		int fds[2], status;
		pid_t pid;

		for (int i = 0; i < n_rules; i++) {
			const char *name = names[random() % 9];
			char *start = t;

			t = random_rule(t, name, actions[random() % 22], false);
			if (!strstr(start, " arg"))
				*(t = start) = '\0';
		}
		*t = '\0';
		if (ward_seccomp_profile_parse("kernel", text, &p, &err) < 0) {
			ward_error_free(err);
			continue;
		}
		if (ward_seccomp_compile(p, NULL, &prog, &err) < 0) {
			ward_error_free(err);
			ward_seccomp_profile_free(p);
			continue;
		}
		for (int i = 0; i < N_CALLS; i++) {
			int nr = seccomp_syscall_resolve_name(names[random() % 9]);

			for (unsigned a = 0; a < WARD_SECCOMP_MAX_CONDS; a++)
				nv[a] = edges(p, nr, a, v[a], 256);
			d[i] = (struct seccomp_data){ .nr = nr, .arch = NATIVE_ARCH };
			for (unsigned a = 0; a < WARD_SECCOMP_MAX_CONDS; a++)
				d[i].args[a] = random() % 8 == 0 ? random64() :
								   v[a][(size_t)random() % nv[a]];
			want[i] = run_bpf(&prog->fprog, &d[i]);
			ck_assert_uint_eq(want[i], spec(p, NULL, &d[i]));
		}
		ck_assert_int_eq(pipe(fds), 0);
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			static int32_t got[N_CALLS];

			close(fds[0]);
			if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
			    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog->fprog) < 0)
				_exit(42);
			for (int i = 0; i < N_CALLS; i++) {
				long r = syscall(d[i].nr, d[i].args[0], d[i].args[1], d[i].args[2],
						 d[i].args[3], d[i].args[4], d[i].args[5]);

				got[i] = r < 0 ? errno : 0;
			}
			for (size_t off = 0; off < sizeof(got);) {
				ssize_t n = write(fds[1], (char *)got + off, sizeof(got) - off);

				if (n <= 0)
					_exit(43);
				off += (size_t)n;
			}
			_exit(0);
		}
		close(fds[1]);
		{
			static int32_t got[N_CALLS];
			size_t off = 0;
			ssize_t n;

			while (off < sizeof(got) &&
			       (n = read(fds[0], (char *)got + off, sizeof(got) - off)) > 0)
				off += (size_t)n;
			close(fds[0]);
			ck_assert_int_eq(waitpid(pid, &status, 0), pid);
			ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
				      "child status 0x%x (%u insns)", status, prog->fprog.len);
			ck_assert_uint_eq(off, sizeof(got));
			for (int i = 0; i < N_CALLS; i++) {
				uint32_t w = want[i] == SECCOMP_RET_ALLOW ?
						     0 :
						     want[i] & SECCOMP_RET_DATA;

				ck_assert_msg((uint32_t)got[i] == w,
					      "call %d (%#llx %#llx %#llx %#llx %#llx %#llx): "
					      "kernel %d, run_bpf %#x\n%s",
					      d[i].nr, (unsigned long long)d[i].args[0],
					      (unsigned long long)d[i].args[1],
					      (unsigned long long)d[i].args[2],
					      (unsigned long long)d[i].args[3],
					      (unsigned long long)d[i].args[4],
					      (unsigned long long)d[i].args[5], got[i], want[i], text);
			}
		}
		loaded++;
		ward_seccomp_program_free(prog);
		ward_seccomp_profile_free(p);
	}
	fprintf(stderr, "kernel decides: %d profiles run by the kernel\n", loaded);
	ck_assert_int_gt(loaded, 20);
	free(text);
}
END_TEST

START_TEST(test_against_rules)
{
	static const struct ward_seccomp_options none = { 0 }, ptrace = { .allow_ptrace = true },
						 nested = { .allow_nested = true };
	struct ward_seccomp_program *prog = compile_builtin("default", false);

	ck_assert_uint_lt(prog->fprog.len, 250);
	ward_seccomp_program_free(prog);
	agree("default", ward_seccomp_profile_text("default"), &none, true, 4000);
	agree("default", ward_seccomp_profile_text("default"), &ptrace, true, 4000);
	agree("default", ward_seccomp_profile_text("default"), &nested, true, 4000);
	agree("strict", ward_seccomp_profile_text("strict"), &none, true, 4000);
	agree("strict", ward_seccomp_profile_text("strict"), &ptrace, true, 4000);
	agree("ops",
	      "read EPERM arg0==5 arg1!=0x100000003\n"
	      "write EACCES arg0<3\n"
	      "write EPERM arg0>0x1ffffffff arg1<=7\n"
	      "pread64 EPERM arg0>=0x200000000 arg2>9\n"
	      "pwrite64 kill arg0&0xff00000000==0x1200000000\n"
	      "pwrite64 EPERM arg1&0xf0==0x30 arg2&0x8000000000000001==0x8000000000000001\n"
	      "lseek EPERM arg0&1==0 arg2&0xffffffff==0xffffffff\n"
	      "fcntl EPERM arg1 in 3..9,17,100..0x1ff,0xfffffff0..0xffffffff\n"
	      "dup3 trap arg2 notin 0,0xffffffff arg0 in 0..4\n"
	      "close log arg0 in 5\n"
	      "mmap EPERM arg0<=0xffffffff00000000 arg1>=0xffffffff\n"
	      "madvise EPERM arg0>=0x100000005\nmprotect EACCES arg0<0x100000005\n"
	      "msync EPERM arg0<=0x1fffffff0\nmremap EPERM arg0>0x100000000\n"
	      "munmap EPERM arg0&6==2\n",
	      &none, false, 4000);
	agree("allow-list",
	      "@default kill\nread allow\nexit_group allow\nwrite allow arg0<=2\n"
	      "openat allow arg2&3==0\nclose allow arg0 notin 0..2\n",
	      &none, false, 4000);
	/* rules that overlap: the most restrictive action wins */
	agree("overlap",
	      "read EPERM arg0<10\nread kill arg0==5\nread EACCES arg0<20\n"
	      "write log arg0>0\nwrite trap arg0 in 3..7\nwrite EPERM arg1==1\n",
	      &none, false, 4000);
}
END_TEST

START_TEST(test_cache)
{
	struct ward_seccomp_options opts = { 0 }, ptrace_opts = { .allow_ptrace = true };
	const struct ward_seccomp_program *a, *b, *c, *off, *f1, *f2;
	struct ward_error *err = NULL;
	char *dir = harness_tmpdir(), path[4096];
	FILE *f;

	a = ward_seccomp_program_get("default", &opts, &err);
	ck_assert_ptr_nonnull(a);
	ck_assert_str_eq(a->name, "default");
	b = ward_seccomp_program_get("default", NULL, &err);
	ck_assert_ptr_eq(a, b); /* compiled once */
	c = ward_seccomp_program_get("default", &ptrace_opts, &err);
	ck_assert_ptr_ne(a, c);
	off = ward_seccomp_program_get("off", &opts, &err);
	ck_assert_uint_eq(off->fprog.len, 0);
	ck_assert_str_eq(off->name, "off");
	ck_assert_int_eq(ward_seccomp_load(off, NULL), 0); /* loads nothing */

	ck_assert_ptr_null(ward_seccomp_program_get("lenient", &opts, &err));
	ck_assert_str_eq(err->message,
			 "unknown seccomp profile 'lenient' (default, strict, off, or a file)");

	snprintf(path, sizeof(path), "%s/p.profile", dir);
	f = fopen(path, "w");
	fputs("read EPERM\n", f);
	fclose(f);
	f1 = ward_seccomp_program_get(path, &opts, &err);
	ck_assert_ptr_nonnull(f1);
	ck_assert_str_eq(f1->name, path);
	ck_assert_uint_eq(native(f1, SYS_read, 0, 0, 0), ERR(EPERM));
	ck_assert_ptr_eq(ward_seccomp_program_get(path, &opts, &err), f1);
	f = fopen(path, "w");
	fputs("read EACCES # changed\n", f);
	fclose(f);
	f2 = ward_seccomp_program_get(path, &opts, &err);
	ck_assert_ptr_ne(f1, f2);
	ck_assert_uint_eq(native(f2, SYS_read, 0, 0, 0), ERR(EACCES));
	ck_assert_uint_eq(native(f1, SYS_read, 0, 0, 0), ERR(EPERM)); /* still valid */
	harness_rmtree(dir);
	free(dir);
	ward_error_free(err);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("seccomp");
	TCase *tc = harness_tcase(s, "parse", NULL);

	tcase_add_test(tc, test_parse_builtin);
	tcase_add_test(tc, test_parse_forms);
	tcase_add_loop_test(tc, test_parse_errors, 0, (int)(sizeof(bad) / sizeof(bad[0])));
	tcase_add_test(tc, test_parse_include_errors);
	tcase_add_test(tc, test_load_file);

	tc = harness_tcase(s, "compile", NULL);
	tcase_add_test(tc, test_default_every_rule);
	tcase_add_test(tc, test_default_allows_ordinary_calls);
	tcase_add_test(tc, test_default_conditions);
	tcase_add_test(tc, test_other_abis_killed);
	tcase_add_test(tc, test_allow_ptrace_option);
	tcase_add_test(tc, test_strict);
	tcase_add_test(tc, test_ranges);
	tcase_add_test(tc, test_compile_errors);
	tcase_add_test(tc, test_against_rules);
	tcase_add_test(tc, test_random_profiles);
	tcase_add_test(tc, test_random_hard_profiles);
	tcase_add_test(tc, test_longest_program);
	tcase_add_test(tc, test_kernel_decides);
	tcase_add_test(tc, test_cache);
	return harness_main(s);
}
