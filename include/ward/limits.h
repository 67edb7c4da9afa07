/* ward/limits.h — resource limits: what a command may use, and what it used.
 *
 *     struct ward_limits l;
 *     ward_limits_init(&l);                                   // defaults (below)
 *     if (ward_limits_set(&l, WARD_LIMIT_MEMORY, "512M", &err) < 0) ...   // a flag
 *
 * Limits are applied with cgroups (v2, or v1 on hybrid hosts) and rlimits.
 * Each limit has a value and an "explicit" bit: a limit set by a flag or the
 * policy file must be applied or the command fails; a default is applied
 * wherever ward can make a cgroup, and where it cannot (an unprivileged user
 * with no delegated cgroup) the command runs with rlimits only and the
 * result says so.
 *
 * Defaults: memory half of the host's RAM (swap 0), 4096 processes, no CPU
 * or I/O limit, no core dumps, open files capped at 8192 (the hard limit;
 * the soft one is never raised), no file-size limit. Every tmpfs of the
 * view (/tmp, /dev/shm, --tmpfs) is capped: at the memory limit where a
 * cgroup applies one, else at WARD_TMPFS_DEFAULT (512 MiB); --tmpfs-size
 * sets it. The sandbox's user namespace gets kernel budgets of its own
 * (inotify instances and watches, fanotify groups and marks, queued signals
 * and POSIX message queue bytes: a quarter of the host user's; new user
 * namespaces: none), so a command cannot exhaust what its caller shares
 * with it.
 *
 * The parsers here are pure and give InvalidParameters naming the option and
 * the value: "--memory: '12Q' is not a size (a number with K, M or G)".
 */
#ifndef WARD_LIMITS_H
#define WARD_LIMITS_H

#include <stdbool.h>
#include <stdint.h>

#include "ward/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ward_limit {
	WARD_LIMIT_MEMORY = 0, /* bytes of memory */
	WARD_LIMIT_MEMORY_SWAP,/* bytes of swap on top of memory (default 0) */
	WARD_LIMIT_PIDS,       /* processes and threads */
	WARD_LIMIT_CPUS,       /* CPUs' worth of time per period (cpu.max) */
	WARD_LIMIT_IO_WEIGHT,  /* proportional I/O weight 1 … 10000 */
	WARD_LIMIT_FILE_SIZE,  /* largest file the command may write (RLIMIT_FSIZE) */
	WARD_LIMIT_TMPFS_SIZE, /* size of every tmpfs of the sandbox's view */
	WARD_LIMIT_COUNT,
};

/* The period of cpu.max / cpu.cfs_period_us ward uses, in microseconds. */
#define WARD_CPU_PERIOD_US 100000
/* The open-file cap (RLIMIT_NOFILE's hard limit) ward gives every command. */
#define WARD_NOFILE_MAX 8192
/* The default process limit. */
#define WARD_PIDS_DEFAULT 4096
/* The size of each tmpfs of the view (/tmp, /dev/shm, --tmpfs) when neither
 * --tmpfs-size nor a memory limit applied by a cgroup says otherwise: tmpfs
 * pages are memory, and without a cgroup no one is charged for them. */
#define WARD_TMPFS_DEFAULT (512ull << 20)

struct ward_limits {
	uint64_t memory;        /* bytes, 0 = none */
	uint64_t memory_swap;   /* bytes of swap allowed, default 0 */
	uint64_t pids;          /* 0 = none */
	double cpus;            /* 0 = none; quota = cpus × WARD_CPU_PERIOD_US */
	unsigned io_weight;     /* 0 = none */
	uint64_t file_size;     /* bytes, 0 = none */
	uint64_t tmpfs_size;    /* bytes per tmpfs; 0 = the memory limit when a cgroup
				   applies it, else WARD_TMPFS_DEFAULT */
	unsigned explicit_mask; /* 1 << WARD_LIMIT_* set by a flag or policy */
};

/* Defaults from the host: memory = total RAM / 2 (from /proc/meminfo, read
 * once per process; none when it cannot be read), pids = WARD_PIDS_DEFAULT,
 * the rest none. */
WARD_API void ward_limits_init(struct ward_limits *l);

/* The defaults for a host with `ram_bytes` of memory (pure). */
WARD_API void ward_limits_defaults(struct ward_limits *l, uint64_t ram_bytes);

/* Option name of a limit ("--memory", …) and policy key ("memory", …). */
WARD_API const char *ward_limit_option(enum ward_limit which);
WARD_API const char *ward_limit_key(enum ward_limit which);

/* Parse `text` as the value of limit `which` and set it explicitly. Sizes take
 * an optional K, M, G or T suffix (powers of 1024; "KiB", "MB" … also read as
 * powers of 1024; a bare number is bytes), must be ≥ 1 and fit in 63 bits; a
 * swap size may be 0. pids: 1 … 4194304. cpus: a decimal ≥ 0.01 and ≤ 1024.
 * io weight: 1 … 10000. InvalidParameters naming the option. */
WARD_API int ward_limits_set(struct ward_limits *l, enum ward_limit which, const char *text,
			     struct ward_error **err);

/* The pure parsers under ward_limits_set(); `what` names the option in
 * messages. */
WARD_API int ward_parse_size(const char *what, const char *text, bool allow_zero, uint64_t *out,
			     struct ward_error **err);
WARD_API int ward_parse_count(const char *what, const char *text, uint64_t min, uint64_t max,
			      uint64_t *out, struct ward_error **err);
WARD_API int ward_parse_cpus(const char *what, const char *text, double *out,
			     struct ward_error **err);

/* "32 MiB", "1.5 GiB", "512 bytes": a size for messages. */
WARD_API void ward_format_size(uint64_t bytes, char *buf, size_t size);

/* cpu.max quota in microseconds for `cpus` (pure). */
WARD_API uint64_t ward_cpus_quota_us(double cpus);

#ifdef __cplusplus
}
#endif
#endif
