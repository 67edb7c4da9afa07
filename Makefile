# ward — one non-recursive Makefile.
#
#   make              build/ward, build/libward.a, build/libward.so, build/ward.pc
#   make deps         install the Debian packages the build and the tests need
#   make test         everything: unit tests, integration and escape tests as root and as
#                     uid 65534, fuzzing, the cgroup v2 VM, the mutation tier, a bench smoke run
#   make test-escape  the escape tier alone (hostile probes), as root and as uid 65534
#   make test-mutants the mutation tier: every mutant of tests/mutants/list caught
#   make check        build everything the tests need, run nothing
#   make install      PREFIX=/usr/local DESTDIR=
#   make bench        the overhead benchmark (QUICK=1: a smoke run); make bench-deps
#   make SANITIZE=address,undefined test
#   make test-vm      the cgroup v2 tests in a throw-away VM (tests/vm/run.sh)
#
# Sources are found by directory: every runtime/*.c, filters/*.c and landlock/*.c
# is part of libward except runtime/main.c (the CLI entry point); every
# tests/unit/test-*.c, tests/integration/test-*.c and tests/escape/test-*.c is
# one Check binary;
# every tests/helpers/*.c is a small program the tests run inside sandboxes;
# bench/*.c together are the benchmark driver, build/bench/ward-bench.

PREFIX     ?= /usr/local
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR     ?= $(PREFIX)/bin
DESTDIR    ?=
B          ?= build
VERSION    := 0.1.0
SOVERSION  := 0

CC         ?= cc
PKG_CONFIG ?= pkg-config
PKGS       := libseccomp libcap libnl-3.0 libnl-route-3.0 jansson

WARNINGS := -Wall -Wextra -Wformat=2 -Wshadow -Wstrict-prototypes \
            -Wmissing-prototypes -Wvla -Wno-unused-parameter
HARDEN   := -fstack-protector-strong -D_FORTIFY_SOURCE=2 -fPIC
OPT      ?= -O2 -g
CFLAGS   ?=
# pkg-config is asked lazily, once, when a recipe first needs the answer: on a
# fresh machine the packages are installed by the deps-quiet prerequisite of
# the same make run, after this file has been read.
lazy = $(eval $(1) := $$(shell $$(PKG_CONFIG) $(2) 2>/dev/null))$($(1))
PKG_CFLAGS    = $(call lazy,PKG_CFLAGS,--cflags $(PKGS))
PKG_LIBS      = $(call lazy,PKG_LIBS,--libs $(PKGS))
CHECK_CFLAGS  = $(call lazy,CHECK_CFLAGS,--cflags check)
CHECK_LIBS    = $(call lazy,CHECK_LIBS,--libs check)
CFLAGS   += -std=gnu11 -D_GNU_SOURCE $(OPT) $(WARNINGS) $(HARDEN) -fvisibility=hidden \
            -Iinclude -I. $(PKG_CFLAGS)
LDLIBS   += $(PKG_LIBS)

ifneq ($(SANITIZE),)
CFLAGS  += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
LDFLAGS += -fsanitize=$(SANITIZE)
endif

LIB_SRCS  := $(filter-out runtime/main.c,$(sort $(wildcard runtime/*.c filters/*.c landlock/*.c)))
LIB_OBJS  := $(LIB_SRCS:%.c=$(B)/%.o) $(B)/gen/seccomp-builtin.o $(B)/gen/rules-builtin.o
HEADERS   := $(wildcard include/ward/*.h)
UNIT_SRCS := $(sort $(wildcard tests/unit/test-*.c))
INTG_SRCS := $(sort $(wildcard tests/integration/test-*.c))
ESC_SRCS  := $(sort $(wildcard tests/escape/test-*.c))
HELP_SRCS := $(sort $(wildcard tests/helpers/*.c))
UNIT_BINS := $(UNIT_SRCS:tests/%.c=$(B)/tests/%)
INTG_BINS := $(INTG_SRCS:tests/%.c=$(B)/tests/%)
ESC_BINS  := $(ESC_SRCS:tests/%.c=$(B)/tests/%)
HELP_BINS := $(HELP_SRCS:tests/%.c=$(B)/tests/%)
HARNESS   := $(B)/tests/harness.o
# The parser's libFuzzer target (see `make fuzz` below).
FUZZ_CC   ?= clang
FUZZ_TIME ?= 20
FUZZ_BIN  := $(B)/fuzz/fuzz-shparse
FUZZ_SRCS := tests/fuzz/fuzz-shparse.c filters/shparse.c filters/shchain.c filters/shbrace.c \
	     runtime/error.c

.PHONY: all demo deps deps-quiet check test test-unit test-integration test-escape test-mutants test-vm install \
	uninstall clean fuzz fuzz-run bench bench-deps
.DEFAULT_GOAL := all

all: $(B)/ward $(B)/libward.a $(B)/libward.so $(B)/ward.pc

# The README's first command: what is missing installed, everything built,
# one command run in the sandbox, and one the front door refuses (the
# library's tests show that /etc/shadow is masked inside as well).
demo: deps-quiet all
	@echo '$$ build/ward run -c '"'"'echo "hello from $$(hostname) as pid $$$$"; ls /'"'"
	@$(B)/ward run -c 'echo "hello from $$(hostname) as pid $$$$"; ls /' || true
	@echo '$$ build/ward run -c '"'"'cat /etc/shadow'"'"
	@$(B)/ward run -c 'cat /etc/shadow' || true

deps-quiet:
	@./scripts/deps.sh

deps:
	./scripts/deps.sh

$(B)/%.o: %.c $(HEADERS) $(wildcard */*.h) | deps-quiet
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

# The built-in seccomp profiles are embedded with .incbin.
$(B)/filters/seccomp-profile.o: $(wildcard filters/*.profile)

# So is the validators' rule table.
$(B)/filters/rules.o: filters/validators.rules

# And the MCP tools' names, descriptions and input schemas.
$(B)/runtime/mcp.o: runtime/mcp-tools.json

# The built-in seccomp profiles compiled once, at build time, into libward
# (filters/seccomp-builtin.h says why).
EMBED_SRCS := filters/gen/seccomp-embed.c filters/seccomp-compile.c filters/seccomp-profile.c \
	      runtime/error.c runtime/hostpath.c runtime/util.c
$(B)/gen/seccomp-embed: $(EMBED_SRCS) $(HEADERS) filters/seccomp-builtin.h $(wildcard filters/*.profile)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DWARD_SECCOMP_NO_BUILTIN -o $@ $(EMBED_SRCS) $(LDLIBS)

$(B)/gen/seccomp-builtin.c: $(B)/gen/seccomp-embed
	$< > $@.tmp && mv $@.tmp $@

$(B)/gen/seccomp-builtin.o: $(B)/gen/seccomp-builtin.c
	$(CC) $(CFLAGS) -c -o $@ $<

# The validators' rule table parsed at build time into C data (and each
# regular expression's literals), so ward parses nothing at start-up.
RULES_EMBED_SRCS := filters/gen/rules-embed.c filters/rules.c filters/relit.c runtime/error.c \
		    runtime/util.c
$(B)/gen/rules-embed: $(RULES_EMBED_SRCS) $(HEADERS) filters/validate-internal.h \
		      filters/relit-internal.h filters/validators.rules
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DWARD_RULES_NO_BUILTIN -o $@ $(RULES_EMBED_SRCS) $(LDLIBS)

$(B)/gen/rules-builtin.c: $(B)/gen/rules-embed
	$< > $@.tmp && mv $@.tmp $@

$(B)/gen/rules-builtin.o: $(B)/gen/rules-builtin.c filters/validate-internal.h
	$(CC) $(CFLAGS) -c -o $@ $<

$(B)/libward.a: $(LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(B)/libward.so: $(LIB_OBJS)
	$(CC) $(LDFLAGS) -shared -Wl,-soname,libward.so.$(SOVERSION) -o $@.$(VERSION) $^ $(LDLIBS)
	ln -sf libward.so.$(VERSION) $(B)/libward.so.$(SOVERSION)
	ln -sf libward.so.$(VERSION) $@

# The CLI is linked static-pie: no dynamic loader at start-up, which is a
# measurable part of a sandboxed /bin/true (see bench/). STATIC=0 links it
# dynamically; sanitizer builds are always dynamic.
STATIC ?= $(if $(SANITIZE),0,1)
ifeq ($(STATIC),1)
WARD_LINK = -static-pie
endif
$(B)/ward: $(B)/runtime/main.o $(B)/libward.a
	$(CC) $(LDFLAGS) $(WARD_LINK) -o $@ $^ $(LDLIBS)

PC_SED = sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	     -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' -e 's|@PKGS@|$(PKGS)|'

$(B)/ward.pc: ward.pc.in Makefile
	$(PC_SED) $< > $@

# ---- tests ----------------------------------------------------------------

$(HARNESS): tests/harness.c tests/harness.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) -c -o $@ $<

TEST_DEPS := tests/harness.h $(HEADERS) $(HARNESS) $(B)/libward.a
TEST_LINK  = $(CC) $(CFLAGS) -Itests $(CHECK_CFLAGS) $(LDFLAGS) $(TEST_STATIC) -o $@ $< $(HARNESS) \
             $(B)/libward.a $(CHECK_LIBS) $(LDLIBS) $(TEST_STATIC_LIBS)

# STATIC_TESTS=1 links the test programs and helpers static, for a guest with
# no libraries (tests/vm/run.sh builds its tree so, in its own build directory).
ifeq ($(STATIC_TESTS),1)
TEST_STATIC      := -static
TEST_STATIC_LIBS := -lsubunit -lm -lrt
HELPER_STATIC    := -static
endif

$(UNIT_BINS): $(B)/tests/unit/%: tests/unit/%.c $(TEST_DEPS)
	@mkdir -p $(dir $@)
	$(TEST_LINK)

$(INTG_BINS): $(B)/tests/integration/%: tests/integration/%.c $(TEST_DEPS)
	@mkdir -p $(dir $@)
	$(TEST_LINK)

# The escape tier: hostile probes, each trying one way out of the sandbox or
# one abuse of ward's host-side work; run like the integration tests.
$(ESC_BINS): $(B)/tests/escape/%: tests/escape/%.c $(TEST_DEPS)
	@mkdir -p $(dir $@)
	$(TEST_LINK)

# Helpers run inside sandboxes, whose view has /usr and /lib: dynamic is fine.
$(B)/tests/helpers/%: tests/helpers/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O1 -g -Wall -Iinclude $(HELPER_STATIC) -o $@ $< $(HELPER_LIBS_$*)

check: deps-quiet all $(UNIT_BINS) $(INTG_BINS) $(ESC_BINS) $(HELP_BINS) $(FUZZ_BIN) $(B)/bench/ward-bench

test: check
	B=$(B) ./tests/run.sh

test-unit: check
	B=$(B) ./tests/run.sh unit

test-integration: check
	B=$(B) ./tests/run.sh integration

test-escape: check
	B=$(B) ./tests/run.sh escape

# The mutation tier: each line of tests/mutants/list removes one defence from
# a scratch copy of the tree; its tests must fail (scripts/mutants.sh).
test-mutants: check
	B=$(B) ./tests/run.sh mutants

# The parser's libFuzzer target: the pure sources only, built with clang.
# `make fuzz` builds it and runs it for FUZZ_TIME seconds over a copy of the
# seed corpus in tests/fuzz/shparse (new inputs stay in the build tree).
$(FUZZ_BIN): $(FUZZ_SRCS) $(HEADERS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=gnu11 -D_GNU_SOURCE -g -O1 -Iinclude -I. \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-o $@ $(FUZZ_SRCS)

fuzz: $(FUZZ_BIN) fuzz-run

fuzz-run:
	@rm -rf $(B)/fuzz/corpus && mkdir -p $(B)/fuzz/corpus
	$(FUZZ_BIN) -max_total_time=$(FUZZ_TIME) -max_len=4096 -timeout=10 -rss_limit_mb=1024 \
		-print_final_stats=1 $(B)/fuzz/corpus tests/fuzz/shparse
# ---- bench -----------------------------------------------------------------

# The driver links libward statically: its library rows call ward_run() in
# its own process, configured by ward's own `ward run` option parser.
BENCH_SRCS := $(sort $(wildcard bench/*.c))
$(B)/tests/unit/test-bench: $(BENCH_SRCS)   # it includes bench/*.c to test them
$(B)/bench/ward-bench: $(BENCH_SRCS:%.c=$(B)/%.o) $(B)/libward.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lm

# bench/run.sh writes bench/results/<date>-<host>.md and .png (QUICK=1: a
# smoke run in under a minute, its report under $(B)/bench/results).
bench: deps-quiet all $(B)/bench/ward-bench
	B=$(B) QUICK=$(QUICK) NOTE="$(NOTE)" FROM="$(FROM)" ./bench/run.sh

bench-deps:
	./scripts/deps.sh bench

# The validators' libFuzzer target (ward_validate on any string), run the
# same way over tests/fuzz/validate and the parser's seeds.
FUZZV_BIN  := $(B)/fuzz/fuzz-validate
FUZZV_SRCS := tests/fuzz/fuzz-validate.c filters/validate.c filters/unwrap.c filters/rules.c \
	      filters/shparse.c \
	      filters/shchain.c filters/shbrace.c runtime/error.c runtime/utf8.c filters/relit.c \
	      $(B)/gen/rules-builtin.c
$(FUZZV_BIN): $(FUZZV_SRCS) $(HEADERS) filters/validators.rules filters/validate-internal.h \
	      filters/unwrap-internal.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=gnu11 -D_GNU_SOURCE -g -O1 -Iinclude -I. $(PKG_CFLAGS) \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-o $@ $(FUZZV_SRCS) -ljansson

# (both fuzz targets: a prerequisite is expanded where its rule is read, so
# the check rule above, read before FUZZ_BIN was set, does not build it)
check: $(FUZZ_BIN) $(FUZZV_BIN)

.PHONY: fuzz-validate
fuzz-validate: $(FUZZV_BIN)
	@rm -rf $(B)/fuzz/corpus-validate && mkdir -p $(B)/fuzz/corpus-validate
	$(FUZZV_BIN) -max_total_time=$(FUZZ_TIME) -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 $(B)/fuzz/corpus-validate tests/fuzz/validate tests/fuzz/shparse
test-vm: deps-quiet
	B=$(B) ./tests/run.sh vm

# ---- install --------------------------------------------------------------

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/ward
	install -m 755 $(B)/ward $(DESTDIR)$(BINDIR)/ward
	install -m 644 $(B)/libward.a $(DESTDIR)$(LIBDIR)/
	install -m 755 $(B)/libward.so.$(VERSION) $(DESTDIR)$(LIBDIR)/
	ln -sf libward.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libward.so.$(SOVERSION)
	ln -sf libward.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libward.so
	install -m 644 $(HEADERS) $(DESTDIR)$(INCLUDEDIR)/ward/
	$(PC_SED) ward.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/ward.pc  # this PREFIX, not the build's

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/ward $(DESTDIR)$(LIBDIR)/libward.* \
	      $(DESTDIR)$(LIBDIR)/pkgconfig/ward.pc
	rm -rf $(DESTDIR)$(INCLUDEDIR)/ward

clean:
	rm -rf $(B)
