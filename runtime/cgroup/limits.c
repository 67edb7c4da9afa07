/* limits.c — resource limit values: defaults and the pure parsers. */
#include "ward/limits.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <sys/sysinfo.h>

#include "runtime/util/util-internal.h"

static const char *const options[WARD_LIMIT_COUNT] = {
	"--memory", "--memory-swap", "--pids", "--cpus", "--io-weight", "--max-file-size",
	"--tmpfs-size",
};
static const char *const keys[WARD_LIMIT_COUNT] = {
	"memory", "memory_swap", "pids", "cpus", "io_weight", "max_file_size", "tmpfs_size",
};

const char *ward_limit_option(enum ward_limit which)
{
	return (unsigned)which < WARD_LIMIT_COUNT ? options[which] : "?";
}

const char *ward_limit_key(enum ward_limit which)
{
	return (unsigned)which < WARD_LIMIT_COUNT ? keys[which] : "?";
}

void ward_limits_defaults(struct ward_limits *l, uint64_t ram_bytes)
{
	memset(l, 0, sizeof(*l));
	l->memory = ram_bytes / 2;
	l->pids = WARD_PIDS_DEFAULT;
}

static uint64_t host_ram;
static pthread_once_t host_ram_once = PTHREAD_ONCE_INIT;

/* MemTotal of /proc/meminfo: the kernel formats the whole file for it
 * (~14 us here), while sysinfo(2) gives the same number (totalram) in
 * 0.5 us. Only where /proc/meminfo is the kernel's own: in a container,
 * lxcfs mounts its own file (FUSE) over it with the container's memory,
 * and that file is what counts. Once per process: a command initialises a
 * config at least twice. */
static void read_host_ram(void)
{
	char buf[4096], *p;
	struct statfs fs;
	struct sysinfo si;

	if (statfs("/proc/meminfo", &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC &&
	    sysinfo(&si) == 0) {
		host_ram = (uint64_t)si.totalram * (si.mem_unit ? si.mem_unit : 1);
		return;
	}
	if (ward_read_file("/proc/meminfo", buf, sizeof(buf)) > 0 && (p = strstr(buf, "MemTotal:")))
		host_ram = strtoull(p + 9, NULL, 10) * 1024;
}

void ward_limits_init(struct ward_limits *l)
{
	pthread_once(&host_ram_once, read_host_ram);
	ward_limits_defaults(l, host_ram);
}

static int bad(struct ward_error **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int bad(struct ward_error **err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ward_error_makev(err, WARD_ERR_INVALID_PARAMETERS, 0, fmt, ap);
	va_end(ap);
	return -1;
}

/* The largest size accepted: what fits a signed 64-bit cgroup file value. */
#define SIZE_MAX_ACCEPTED ((uint64_t)INT64_MAX)

int ward_parse_size(const char *what, const char *text, bool allow_zero, uint64_t *out,
		    struct ward_error **err)
{
	const char *p = text, *unit;
	uint64_t v = 0, mult = 1;
	int shift = 0;

	if (!text || !*text)
		return bad(err, "%s: the size is empty", what);
	if (*p == '-')
		return bad(err, "%s: '%s' is negative", what, text);
	if (!isdigit((unsigned char)*p))
		return bad(err, "%s: '%s' is not a size (a number with K, M or G)", what, text);
	for (; isdigit((unsigned char)*p); p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (SIZE_MAX_ACCEPTED - d) / 10)
			return bad(err, "%s: '%s' is too large", what, text);
		v = v * 10 + d;
	}
	unit = p;
	switch (toupper((unsigned char)*p)) {
	case '\0':
		break;
	case 'B':
		p++;
		break;
	case 'K':
		shift = 10;
		break;
	case 'M':
		shift = 20;
		break;
	case 'G':
		shift = 30;
		break;
	case 'T':
		shift = 40;
		break;
	default:
		return bad(err, "%s: '%s' has an unknown unit '%s' (K, M, G or T)", what, text, unit);
	}
	if (shift) {
		p++;
		/* K, KB, KiB all mean 1024: sizes of memory are binary */
		if (*p == 'i' || *p == 'I')
			p++;
		if (*p == 'b' || *p == 'B')
			p++;
	}
	if (*p)
		return bad(err, "%s: '%s' has an unknown unit '%s' (K, M, G or T)", what, text, unit);
	mult = (uint64_t)1 << shift;
	if (v > SIZE_MAX_ACCEPTED / mult)
		return bad(err, "%s: '%s' is too large", what, text);
	v *= mult;
	if (v == 0 && !allow_zero)
		return bad(err, "%s: the size must be at least 1 byte, got '%s'", what, text);
	*out = v;
	return 0;
}

int ward_parse_count(const char *what, const char *text, uint64_t min, uint64_t max,
		     uint64_t *out, struct ward_error **err)
{
	const char *p = text;
	uint64_t v = 0;

	if (!text || !*text)
		return bad(err, "%s: the number is empty", what);
	if (*p == '-')
		return bad(err, "%s: '%s' is negative", what, text);
	for (; isdigit((unsigned char)*p); p++) {
		v = v * 10 + (uint64_t)(*p - '0');
		if (v > max)
			return bad(err, "%s: must be at most %llu, got '%s'", what,
				   (unsigned long long)max, text);
	}
	if (*p || p == text)
		return bad(err, "%s: '%s' is not a whole number", what, text);
	if (v < min)
		return bad(err, "%s: must be at least %llu, got '%s'", what, (unsigned long long)min,
			   text);
	*out = v;
	return 0;
}

#define CPUS_MIN 0.01
#define CPUS_MAX 1024.0

int ward_parse_cpus(const char *what, const char *text, double *out, struct ward_error **err)
{
	char *end;
	double v;

	if (!text || !*text)
		return bad(err, "%s: the number of CPUs is empty", what);
	/* strtod takes "nan", "inf", hex and leading blanks: only plain decimals */
	if (text[strspn(text, "0123456789.")] != '\0') {
		if (text[0] == '-')
			return bad(err, "%s: '%s' is negative", what, text);
		return bad(err, "%s: '%s' is not a number of CPUs (a decimal such as 0.5)", what,
			   text);
	}
	errno = 0;
	v = strtod(text, &end);
	if (*end || end == text || errno == ERANGE || !isfinite(v))
		return bad(err, "%s: '%s' is not a number of CPUs (a decimal such as 0.5)", what,
			   text);
	if (v < CPUS_MIN)
		return bad(err, "%s: must be at least %.2f, got '%s'", what, CPUS_MIN, text);
	if (v > CPUS_MAX)
		return bad(err, "%s: must be at most %.0f, got '%s'", what, CPUS_MAX, text);
	*out = v;
	return 0;
}

int ward_limits_set(struct ward_limits *l, enum ward_limit which, const char *text,
		    struct ward_error **err)
{
	const char *what = ward_limit_option(which);
	uint64_t n;
	double c;

	switch (which) {
	case WARD_LIMIT_MEMORY:
		if (ward_parse_size(what, text, false, &n, err) < 0)
			return -1;
		l->memory = n;
		break;
	case WARD_LIMIT_MEMORY_SWAP:
		if (ward_parse_size(what, text, true, &n, err) < 0)
			return -1;
		l->memory_swap = n;
		break;
	case WARD_LIMIT_PIDS:
		/* PID_MAX_LIMIT on 64-bit */
		if (ward_parse_count(what, text, 1, 4194304, &n, err) < 0)
			return -1;
		l->pids = n;
		break;
	case WARD_LIMIT_CPUS:
		if (ward_parse_cpus(what, text, &c, err) < 0)
			return -1;
		l->cpus = c;
		break;
	case WARD_LIMIT_IO_WEIGHT:
		if (ward_parse_count(what, text, 1, 10000, &n, err) < 0)
			return -1;
		l->io_weight = (unsigned)n;
		break;
	case WARD_LIMIT_FILE_SIZE:
		if (ward_parse_size(what, text, false, &n, err) < 0)
			return -1;
		l->file_size = n;
		break;
	case WARD_LIMIT_TMPFS_SIZE:
		if (ward_parse_size(what, text, false, &n, err) < 0)
			return -1;
		l->tmpfs_size = n;
		break;
	default:
		return bad(err, "unknown limit %d", (int)which);
	}
	l->explicit_mask |= 1u << which;
	return 0;
}

void ward_format_size(uint64_t bytes, char *buf, size_t size)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	int u = -1;
	uint64_t scale = 1;

	while (u + 1 < (int)ARRAY_SIZE(units) && bytes >= scale * 1024) {
		scale *= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, size, "%llu bytes", (unsigned long long)bytes);
	else if (bytes % scale == 0)
		snprintf(buf, size, "%llu %s", (unsigned long long)(bytes / scale), units[u]);
	else
		snprintf(buf, size, "%.1f %s", (double)bytes / (double)scale, units[u]);
}

uint64_t ward_cpus_quota_us(double cpus)
{
	return (uint64_t)(cpus * WARD_CPU_PERIOD_US + 0.5);
}
