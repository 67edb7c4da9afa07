# ward — one non-recursive Makefile.
#
#   make              build/ward, build/libward.a, build/libward.so, build/ward.pc
#   make deps         install the Debian packages the build and the tests need
#                     (scripts/deps.sh SET: build, demo, test, deb, bench)
#   make test         everything: unit tests, integration and escape tests as root and as
#                     uid 65534, fuzzing, the cgroup v2 VM, the mutation tier, a bench smoke run
#   make test-escape  the escape tier alone (hostile probes), as root and as uid 65534
#   make test-container  ward in podman containers and a Pod (tests/container/run.sh)
#   make test-mutants the mutation tier: every mutant of tests/mutants/list caught
#   make check        build everything the tests need, run nothing
#   make check-layers the folders are the module graph: no include or call up
#                     the layers, no cycle (scripts/check-layers.sh; make test
#                     runs it first)
#   make install      PREFIX=/usr/local DESTDIR=
#   make bench        the overhead benchmark (QUICK=1: a smoke run); make bench-deps
#   make SANITIZE=address,undefined test
#   make test-vm      the cgroup v2 tests in a throw-away VM (tests/vm/run.sh)
#
# Sources are found by directory, recursively: every .c under runtime/, filters/
# and landlock/ is part of libward, except the CLI (runtime/cli/, built into
# build/ward, which links libward), the TLS helper (runtime/tls/, built into
# build/ward-tls, the only program that links OpenSSL) and the build-time
# generators (*/gen/); every
# tests/unit/test-*.c, tests/integration/test-*.c and tests/escape/test-*.c is
# one Check binary;
# every tests/helpers/*.c is a small program the tests run inside sandboxes;
# bench/*.c together are the benchmark driver, build/bench/ward-bench.

PREFIX     ?= /usr/local
LIBDIR     ?= $(PREFIX)/lib
LIBEXECDIR ?= $(PREFIX)/libexec
INCLUDEDIR ?= $(PREFIX)/include
BINDIR     ?= $(PREFIX)/bin
DESTDIR    ?=
B          ?= build
VERSION    := 0.1.0
SOVERSION  := 0

CC         ?= cc
PKG_CONFIG ?= pkg-config
PKGS       := libseccomp libcap libnl-3.0 libnl-route-3.0 jansson
# OpenSSL is ward-tls's alone (runtime/tls/): neither libward nor the ward
# binary links it (runtime/net/net-internal.h says why).
TLS_PKGS   := openssl

WARNINGS := -Wall -Wextra -Wformat=2 -Wshadow -Wstrict-prototypes \
            -Wmissing-prototypes -Wvla -Wno-unused-parameter
HARDEN   := -fstack-protector-strong -D_FORTIFY_SOURCE=2 -fPIC
OPT      ?= -O2 -g
CFLAGS   ?=
# pkg-config is asked lazily, once, when a recipe first needs the answer: on a
# fresh machine the packages are installed by the deps-quiet prerequisite of
# the same make run, after this file has been read. deps-quiet installs the
# build set only (`make` and `make demo` need no more); deps-test the rest
# of what the tests need (`make check`, `make test`).
lazy = $(eval $(1) := $$(shell $$(PKG_CONFIG) $(2) 2>/dev/null))$($(1))
PKG_CFLAGS    = $(call lazy,PKG_CFLAGS,--cflags $(PKGS))
PKG_LIBS      = $(call lazy,PKG_LIBS,--libs $(PKGS))
CHECK_CFLAGS  = $(call lazy,CHECK_CFLAGS,--cflags check)
CHECK_LIBS    = $(call lazy,CHECK_LIBS,--libs check)
TLS_CFLAGS    = $(call lazy,TLS_CFLAGS,--cflags $(TLS_PKGS))
TLS_LIBS      = $(call lazy,TLS_LIBS,--libs $(TLS_PKGS))
CFLAGS   += -std=gnu11 -D_GNU_SOURCE $(OPT) $(WARNINGS) $(HARDEN) -fvisibility=hidden \
            -Iinclude -I. $(PKG_CFLAGS)
LDLIBS   += $(PKG_LIBS)

ifneq ($(SANITIZE),)
CFLAGS  += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
LDFLAGS += -fsanitize=$(SANITIZE)
endif

ALL_SRCS  := $(sort $(shell find runtime filters landlock -name '*.c' -not -path '*/gen/*'))
CLI_SRCS  := $(filter runtime/cli/%,$(ALL_SRCS))
# The TLS helper, a program of its own: its main and the OpenSSL code
TLS_SRCS  := $(filter runtime/tls/%,$(ALL_SRCS))
TLS_OBJS  := $(filter-out $(B)/runtime/tls/main.o,$(TLS_SRCS:%.c=$(B)/%.o))
LIB_SRCS  := $(filter-out runtime/cli/% runtime/tls/% runtime/util/entry.c,$(ALL_SRCS))
LIB_OBJS  := $(LIB_SRCS:%.c=$(B)/%.o) $(B)/gen/seccomp-builtin.o $(B)/gen/rules-builtin.o
# The CLI's commands but its entry point, in an archive of their own that the
# tests and the bench link beside libward (they drive `ward run`'s option
# parser); never installed.
CLI_OBJS  := $(filter-out $(B)/runtime/cli/main.o,$(CLI_SRCS:%.c=$(B)/%.o))
HEADERS   := $(wildcard include/ward/*.h)
INTERNAL_HEADERS := $(sort $(shell find runtime filters landlock -name '*.h'))
UNIT_SRCS := $(sort $(wildcard tests/unit/test-*.c))
INTG_SRCS := $(sort $(wildcard tests/integration/test-*.c))
ESC_SRCS  := $(sort $(wildcard tests/escape/test-*.c))
HELP_SRCS := $(sort $(wildcard tests/helpers/*.c))
UNIT_BINS := $(UNIT_SRCS:tests/%.c=$(B)/tests/%)
INTG_BINS := $(INTG_SRCS:tests/%.c=$(B)/tests/%)
ESC_BINS  := $(ESC_SRCS:tests/%.c=$(B)/tests/%)
HELP_BINS := $(HELP_SRCS:tests/%.c=$(B)/tests/%)
# scripts the tests run (copied beside the helpers, so a copied build tree has them)
HELP_PY   := $(patsubst tests/%,$(B)/tests/%,$(sort $(wildcard tests/helpers/*.py)))
HARNESS   := $(B)/tests/harness.o
# The parser's libFuzzer target (see `make fuzz` below).
FUZZ_CC   ?= clang
FUZZ_TIME ?= 20
FUZZ_BIN  := $(B)/fuzz/fuzz-shparse
FUZZ_SRCS := tests/fuzz/fuzz-shparse.c $(wildcard filters/shell/*.c) runtime/util/error.c

.PHONY: all demo deps deps-quiet deps-test check check-layers test test-unit test-integration test-escape test-mutants test-vm test-container install \
	uninstall clean fuzz fuzz-run bench bench-deps
.DEFAULT_GOAL := all

all: $(B)/ward $(B)/ward-tls $(B)/libward.a $(B)/libward.so $(B)/ward.pc

# The README's first command: what is missing installed, everything built,
# one command run in the sandbox, and one the front door refuses (the
# library's tests show that /etc/shadow is masked inside as well).
demo: deps-quiet all
	@echo '$$ build/ward run -c '"'"'echo "hello from $$(hostname) as pid $$$$"; ls /'"'"
	@$(B)/ward run -c 'echo "hello from $$(hostname) as pid $$$$"; ls /' || true
	@echo '$$ build/ward run -c '"'"'cat /etc/shadow'"'"
	@$(B)/ward run -c 'cat /etc/shadow' || true

deps-quiet:
	@./scripts/deps.sh build

deps-test:
	@./scripts/deps.sh test

deps:
	./scripts/deps.sh

$(B)/%.o: %.c $(HEADERS) $(INTERNAL_HEADERS) | deps-quiet
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

# The built-in seccomp profiles are embedded with .incbin.
$(B)/filters/seccomp/profile.o: $(wildcard filters/seccomp/*.profile)

# So is the validators' rule table.
$(B)/filters/validate/rules.o: filters/validate/validators.rules

# And the MCP tools' names, descriptions and input schemas.
$(B)/runtime/cli/mcp.o: runtime/cli/mcp-tools.json

# The built-in seccomp profiles compiled once, at build time, into libward
# (filters/seccomp/seccomp-internal.h says why).
EMBED_SRCS := filters/seccomp/gen/embed.c filters/seccomp/bpf.c filters/seccomp/compile.c \
	      filters/seccomp/profile.c \
	      runtime/util/error.c runtime/util/hostpath.c runtime/util/util.c
$(B)/gen/seccomp-embed: $(EMBED_SRCS) $(HEADERS) filters/seccomp/seccomp-internal.h \
			   $(wildcard filters/seccomp/*.profile) | deps-quiet
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DWARD_SECCOMP_NO_BUILTIN -o $@ $(EMBED_SRCS) $(LDLIBS)

$(B)/gen/seccomp-builtin.c: $(B)/gen/seccomp-embed
	$< > $@.tmp && mv $@.tmp $@

$(B)/gen/seccomp-builtin.o: $(B)/gen/seccomp-builtin.c
	$(CC) $(CFLAGS) -c -o $@ $<

# The validators' rule table parsed at build time into C data (and each
# regular expression's literals), so ward parses nothing at start-up.
RULES_EMBED_SRCS := filters/validate/gen/embed.c filters/validate/rules.c filters/validate/relit.c \
		    runtime/util/error.c runtime/util/util.c
$(B)/gen/rules-embed: $(RULES_EMBED_SRCS) $(HEADERS) filters/validate/validate-internal.h \
		      filters/validate/validators.rules | deps-quiet
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DWARD_RULES_NO_BUILTIN -o $@ $(RULES_EMBED_SRCS) $(LDLIBS)

$(B)/gen/rules-builtin.c: $(B)/gen/rules-embed
	$< > $@.tmp && mv $@.tmp $@

$(B)/gen/rules-builtin.o: $(B)/gen/rules-builtin.c filters/validate/validate-internal.h
	$(CC) $(CFLAGS) -c -o $@ $<

$(B)/libward.a: $(LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(B)/libward-cli.a: $(CLI_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(B)/libward.so: $(LIB_OBJS)
	$(CC) $(LDFLAGS) -shared -Wl,-soname,libward.so.$(SOVERSION) -o $@.$(VERSION) $^ $(LDLIBS)
	ln -sf libward.so.$(VERSION) $(B)/libward.so.$(SOVERSION)
	ln -sf libward.so.$(VERSION) $@

# The CLI is linked static-pie: no dynamic loader at start-up, which is a
# measurable part of a sandboxed /bin/true (see bench/). STATIC=0 links it
# dynamically; sanitizer builds are always dynamic.
# On x86-64 both programs start at ward_entry (runtime/util/entry.c says why).
STATIC ?= $(if $(SANITIZE),0,1)
ENTRY_OBJ :=
ifeq ($(STATIC),1)
WARD_LINK = -static-pie
ifeq ($(shell uname -m),x86_64)
WARD_LINK += -Wl,-e,ward_entry
ENTRY_OBJ := $(B)/runtime/util/entry.o
endif
endif
# The version is written once, above (VERSION): the CLI gets it from here
# (`ward --version`, the MCP server's serverInfo), and the objects that may
# print it are remade when it changes.
$(CLI_SRCS:%.c=$(B)/%.o): CFLAGS += -DWARD_VERSION='"$(VERSION)"'
$(CLI_SRCS:%.c=$(B)/%.o): Makefile

$(B)/ward: $(B)/runtime/cli/main.o $(ENTRY_OBJ) $(B)/libward-cli.a $(B)/libward.a
	$(CC) $(LDFLAGS) $(WARD_LINK) -o $@ $^ $(LDLIBS)

# ward-tls: started by a run that intercepts HTTPS, found beside the ward
# binary or in $(LIBEXECDIR)/ward (runtime/net/tlshelper.c).
$(TLS_SRCS:%.c=$(B)/%.o): CFLAGS += $(TLS_CFLAGS)
$(B)/runtime/net/tlshelper.o: CFLAGS += -DWARD_LIBEXECDIR='"$(LIBEXECDIR)"'
$(B)/runtime/net/tlshelper.o: Makefile

$(B)/libward-tls.a: $(TLS_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(B)/ward-tls: $(B)/runtime/tls/main.o $(ENTRY_OBJ) $(B)/libward-tls.a $(B)/libward.a
	$(CC) $(LDFLAGS) $(WARD_LINK) -o $@ $^ $(TLS_LIBS) $(LDLIBS)

PC_SED = sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	     -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' -e 's|@PKGS@|$(PKGS)|'

$(B)/ward.pc: packaging/ward.pc.in Makefile
	@mkdir -p $(dir $@)
	$(PC_SED) $< > $@

# ---- tests ----------------------------------------------------------------

$(HARNESS): tests/harness.c tests/harness.h | deps-test
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) -c -o $@ $<

TEST_DEPS := tests/harness.h $(HEADERS) $(HARNESS) $(B)/libward-cli.a $(B)/libward.a
TEST_LINK  = $(CC) $(CFLAGS) -Itests $(CHECK_CFLAGS) $(LDFLAGS) $(TEST_STATIC) -o $@ $< $(HARNESS) \
             $(TEST_EXTRA) $(B)/libward-cli.a $(B)/libward.a $(CHECK_LIBS) $(TEST_EXTRA_LIBS) \
             $(LDLIBS) $(TEST_STATIC_LIBS)

# STATIC_TESTS=1 links the test programs and helpers static, for a guest with
# no libraries (tests/vm/run.sh builds its tree so, in its own build directory).
ifeq ($(STATIC_TESTS),1)
TEST_STATIC      := -static
TEST_STATIC_LIBS := -lsubunit -lm -lrt
HELPER_STATIC    := -static
endif

$(UNIT_BINS): $(B)/tests/unit/%: tests/unit/%.c $(TEST_DEPS) | deps-test
	@mkdir -p $(dir $@)
	$(TEST_LINK)

$(INTG_BINS): $(B)/tests/integration/%: tests/integration/%.c $(TEST_DEPS) | deps-test
	@mkdir -p $(dir $@)
	$(TEST_LINK)

# The escape tier: hostile probes, each trying one way out of the sandbox or
# one abuse of ward's host-side work; run like the integration tests.
$(ESC_BINS): $(B)/tests/escape/%: tests/escape/%.c $(TEST_DEPS) | deps-test
	@mkdir -p $(dir $@)
	$(TEST_LINK)

# Helpers run inside sandboxes, whose view has /usr and /lib: dynamic is fine.
# engine-seccomp installs a libseccomp filter of its own
HELPER_LIBS_engine-seccomp := -lseccomp

$(B)/tests/helpers/%: tests/helpers/%.c | deps-test
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O1 -g -Wall -Iinclude $(HELPER_STATIC) -o $@ $< $(HELPER_LIBS_$*)

$(B)/tests/helpers/%.py: tests/helpers/%.py
	@mkdir -p $(dir $@)
	cp $< $@

check: deps-test all $(UNIT_BINS) $(INTG_BINS) $(ESC_BINS) $(HELP_BINS) $(HELP_PY) $(FUZZ_BIN) $(B)/bench/ward-bench

# The layers are checked on the sources and on the objects' symbols.
check-layers: $(LIB_OBJS) $(CLI_SRCS:%.c=$(B)/%.o) $(TLS_SRCS:%.c=$(B)/%.o)
	./scripts/check-layers.sh $(B)

test: check-layers check
	B=$(B) ./tests/run.sh

# ward inside podman containers and a Pod (tests/container/run.sh): builds
# the cached rootfs with mmdebstrap on first use
test-container: all
	./scripts/deps.sh container
	B=$(B) ./tests/container/run.sh

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
$(FUZZ_BIN): $(FUZZ_SRCS) $(HEADERS) | deps-test
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
# Its TLS rows serve HTTPS with ward-tls's own code (runtime/tls/tls.c).
$(B)/tests/unit/test-bench: $(BENCH_SRCS) $(B)/libward-tls.a  # it includes bench/*.c to test them
$(B)/tests/unit/test-bench: TEST_EXTRA = $(B)/libward-tls.a
$(B)/tests/unit/test-bench: TEST_EXTRA_LIBS = $(TLS_LIBS)
$(B)/tests/unit/test-bench: CFLAGS += $(TLS_CFLAGS)
$(BENCH_SRCS:%.c=$(B)/%.o): CFLAGS += $(TLS_CFLAGS)
$(B)/bench/ward-bench: $(BENCH_SRCS:%.c=$(B)/%.o) $(B)/libward-cli.a $(B)/libward.a $(B)/libward-tls.a
	$(CC) $(LDFLAGS) -o $@ $^ $(TLS_LIBS) $(LDLIBS) -lm

# bench/run.sh writes bench/results/<date>-<host>.md and .png (QUICK=1: a
# smoke run in under a minute, its report under $(B)/bench/results).
bench: deps-test all $(B)/bench/ward-bench
	B=$(B) QUICK=$(QUICK) NOTE="$(NOTE)" FROM="$(FROM)" ./bench/run.sh

bench-deps:
	./scripts/deps.sh bench

# The validators' libFuzzer target (ward_validate on any string), run the
# same way over tests/fuzz/validate and the parser's seeds.
FUZZV_BIN  := $(B)/fuzz/fuzz-validate
FUZZV_SRCS := tests/fuzz/fuzz-validate.c $(wildcard filters/validate/*.c filters/shell/*.c) \
	      runtime/util/error.c runtime/util/utf8.c \
	      $(B)/gen/rules-builtin.c
$(FUZZV_BIN): $(FUZZV_SRCS) $(HEADERS) filters/validate/validators.rules filters/validate/validate-internal.h \
	      filters/validate/unwrap-internal.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=gnu11 -D_GNU_SOURCE -g -O1 -Iinclude -I. $(PKG_CFLAGS) \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-o $@ $(FUZZV_SRCS) -ljansson

# The git index reader's libFuzzer target: what a command left as an index
# is read by ward on the host.
FUZZG_BIN  := $(B)/fuzz/fuzz-gitindex
FUZZG_SRCS := tests/fuzz/fuzz-gitindex.c runtime/workdir/gitindex.c runtime/util/util.c runtime/util/error.c
$(FUZZG_BIN): $(FUZZG_SRCS) $(HEADERS) runtime/workdir/workdir-internal.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=gnu11 -D_GNU_SOURCE -g -O1 -Iinclude -I. $(PKG_CFLAGS) \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-o $@ $(FUZZG_SRCS)

# The HTTP parsers of the proxy, plain and intercepted: request heads from
# the sandbox, response heads from servers, chunked bodies.
FUZZH_BIN  := $(B)/fuzz/fuzz-http
FUZZH_SRCS := tests/fuzz/fuzz-http.c runtime/net/http.c runtime/net/netpolicy.c runtime/util/error.c
$(FUZZH_BIN): $(FUZZH_SRCS) $(HEADERS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=gnu11 -D_GNU_SOURCE -g -O1 -Iinclude -I. $(PKG_CFLAGS) \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-o $@ $(FUZZH_SRCS)

# The proxy's request rules' libFuzzer target: a request as the sandbox
# sends it, judged (secrets, credentials, request rules).
FUZZR_BIN  := $(B)/fuzz/fuzz-netrules
FUZZR_SRCS := tests/fuzz/fuzz-netrules.c runtime/net/rules.c runtime/net/netpolicy.c \
	      runtime/net/http.c runtime/util/error.c
$(FUZZR_BIN): $(FUZZR_SRCS) $(HEADERS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=gnu11 -D_GNU_SOURCE -g -O1 -Iinclude -I. $(PKG_CFLAGS) \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-o $@ $(FUZZR_SRCS)

# (the fuzz targets: a prerequisite is expanded where its rule is read, so
# the check rule above, read before FUZZ_BIN was set, does not build it)
check: $(FUZZ_BIN) $(FUZZV_BIN) $(FUZZG_BIN) $(FUZZH_BIN) $(FUZZR_BIN)

.PHONY: fuzz-validate
fuzz-validate: $(FUZZV_BIN)
	@rm -rf $(B)/fuzz/corpus-validate && mkdir -p $(B)/fuzz/corpus-validate
	$(FUZZV_BIN) -max_total_time=$(FUZZ_TIME) -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 $(B)/fuzz/corpus-validate tests/fuzz/validate tests/fuzz/shparse
test-vm: deps-test
	B=$(B) ./tests/run.sh vm

# ---- man pages ---
# Hand-written roff in docs/man/; tests/integration/test-docs.c keeps them in
# step with the policy parser and every --help. `make man-lint` renders each
# with every groff warning on (and mandoc's lint, when installed).
MAN1 := docs/man/ward.1 docs/man/ward-serve.1
MAN5 := docs/man/ward-policy.5

.PHONY: man-lint
man-lint:
	@for p in $(MAN1) $(MAN5); do \
		out=$$(groff -man -ww -z $$p 2>&1) && [ -z "$$out" ] || { echo "$$p: $$out"; exit 1; }; \
		if command -v mandoc >/dev/null; then mandoc -T lint -W warning $$p || exit 1; fi; \
	done; echo "man pages: no warnings"
# ---- end man pages ----------------------------------------------------------

# ---- install ---
# Everything under $(DESTDIR)$(PREFIX): the CLI, libward (static, shared,
# headers, pkg-config), the manual pages, the bash/zsh/fish completions and the
# example policies; `make uninstall` removes exactly that. The AppArmor
# profile (packaging/apparmor/ward: `userns,` for $(BINDIR)/ward, for Ubuntu
# 23.10+'s kernel.apparmor_restrict_unprivileged_userns=1) is kept in
# $(DATADIR)/ward/apparmor/ and goes to $(DESTDIR)/etc/apparmor.d when DESTDIR
# is set (a staging tree) or when this host's AppArmor has the 4.0 ABI that
# knows the rule (an older parser refuses the profile: Debian 12 has 3.0).
# INSTALL_APPARMOR=0/1 overrides.
DATADIR    ?= $(PREFIX)/share
MANDIR     ?= $(DATADIR)/man
DOCDIR     ?= $(DATADIR)/doc/ward
SYSCONFDIR ?= /etc
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
# Debian's zsh searches /usr/share/zsh/vendor-completions and
# /usr/local/share/zsh/site-functions
ZSHCOMPDIR  ?= $(if $(filter /usr,$(PREFIX)),$(DATADIR)/zsh/vendor-completions,$(DATADIR)/zsh/site-functions)
FISHCOMPDIR ?= $(DATADIR)/fish/vendor_completions.d
EXAMPLES   := $(sort $(wildcard docs/examples/*.json))
APPARMOR_DIR := $(SYSCONFDIR)/apparmor.d
INSTALL_APPARMOR ?= $(if $(DESTDIR),1,$(if $(wildcard $(APPARMOR_DIR)/abi/4.0),1,0))
AA_SED = sed 's|@BINDIR@|$(BINDIR)|g' packaging/apparmor/ward

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/ward
	install -m 755 $(B)/ward $(DESTDIR)$(BINDIR)/ward
	install -d $(DESTDIR)$(LIBEXECDIR)/ward
	install -m 755 $(B)/ward-tls $(DESTDIR)$(LIBEXECDIR)/ward/ward-tls
	install -m 644 $(B)/libward.a $(DESTDIR)$(LIBDIR)/
	install -m 755 $(B)/libward.so.$(VERSION) $(DESTDIR)$(LIBDIR)/
	ln -sf libward.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libward.so.$(SOVERSION)
	ln -sf libward.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libward.so
	install -m 644 $(HEADERS) $(DESTDIR)$(INCLUDEDIR)/ward/
	$(PC_SED) packaging/ward.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/ward.pc  # this PREFIX, not the build's
	install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5
	install -m 644 $(MAN1) $(DESTDIR)$(MANDIR)/man1/
	install -m 644 $(MAN5) $(DESTDIR)$(MANDIR)/man5/
	install -d $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR)
	install -m 644 packaging/completions/ward.bash $(DESTDIR)$(BASHCOMPDIR)/ward
	install -m 644 packaging/completions/_ward $(DESTDIR)$(ZSHCOMPDIR)/_ward
	install -m 644 packaging/completions/ward.fish $(DESTDIR)$(FISHCOMPDIR)/ward.fish
	install -d $(DESTDIR)$(DOCDIR)/examples
	$(if $(EXAMPLES),install -m 644 $(EXAMPLES) $(DESTDIR)$(DOCDIR)/examples/)
	install -d $(DESTDIR)$(DATADIR)/ward/apparmor
	$(AA_SED) > $(DESTDIR)$(DATADIR)/ward/apparmor/ward
	$(if $(filter 1,$(INSTALL_APPARMOR)),install -d $(DESTDIR)$(APPARMOR_DIR) && \
		$(AA_SED) > $(DESTDIR)$(APPARMOR_DIR)/ward)

uninstall:
	rm -rf $(DESTDIR)$(LIBEXECDIR)/ward
	rm -f $(DESTDIR)$(BINDIR)/ward $(DESTDIR)$(LIBDIR)/libward.a \
	      $(DESTDIR)$(LIBDIR)/libward.so $(DESTDIR)$(LIBDIR)/libward.so.$(SOVERSION) \
	      $(DESTDIR)$(LIBDIR)/libward.so.$(VERSION) $(DESTDIR)$(LIBDIR)/pkgconfig/ward.pc
	rm -rf $(DESTDIR)$(INCLUDEDIR)/ward $(DESTDIR)$(DOCDIR) $(DESTDIR)$(DATADIR)/ward
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(MAN1))) \
	      $(addprefix $(DESTDIR)$(MANDIR)/man5/,$(notdir $(MAN5))) \
	      $(DESTDIR)$(BASHCOMPDIR)/ward $(DESTDIR)$(ZSHCOMPDIR)/_ward \
	      $(DESTDIR)$(FISHCOMPDIR)/ward.fish $(DESTDIR)$(APPARMOR_DIR)/ward
# ---- end install --------------------------------------------------------------

# ---- example policies for the tests ---
# Copied into the build tree, so that the uid-65534 tier (which has only a copy
# of the build tree) loads and runs them too (tests/integration/test-examples.c).
TEST_EXAMPLES := $(EXAMPLES:docs/examples/%=$(B)/tests/examples/%)
$(B)/tests/examples/%.json: docs/examples/%.json
	@mkdir -p $(dir $@)
	install -m 644 $< $@
check: $(TEST_EXAMPLES)
# ---- end example policies for the tests ----------------------------------------

# ---- Debian packages ---
# `make deb`: ward, libward0 and libward-dev built by dpkg-buildpackage and
# debhelper from packaging/debian, in a copy of the tree under $(B)/deb (the
# tree itself gets no debian/ directory); then lintian, failing on an error.
# The .debs land in $(B)/deb/. `make test-deb` (the deb tier of make test)
# runs the README's install block and quick starts as written in a fresh
# Debian 12 root under podman (scripts/test-readme.sh), then installs them
# into an empty dpkg root (dpkg --root, maintainer scripts run chrootless
# with $DPKG_ROOT), runs the installed ward, builds a program against the
# installed libward, and purges them (scripts/test-deb.sh); a few minutes.
DEB_DIR := $(B)/deb
DEB_SRC := $(DEB_DIR)/ward-$(VERSION)

.PHONY: deb test-deb
deb:
	@./scripts/deps.sh deb
	@command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null || \
		{ echo "deb: needs dpkg-dev and debhelper (scripts/deps.sh deb)"; exit 1; }
	rm -rf $(DEB_DIR) && mkdir -p $(DEB_SRC)
	git ls-files -z --cached --others --exclude-standard | \
		grep -zv '^$(B)/' | tar --null -T - -cf - | tar -xf - -C $(DEB_SRC)
	cp -a packaging/debian $(DEB_SRC)/debian
	cd $(DEB_SRC) && dpkg-buildpackage -us -uc -b -j2
	@if command -v lintian >/dev/null; then \
		lintian --fail-on error \
			$(DEB_DIR)/*.changes; \
	else echo "deb: no lintian, packages not checked"; fi
	@ls $(DEB_DIR)/*.deb

# the README's install block and quick starts as written (its `make deb`
# included), then the packages in an empty dpkg root (the deb tier of make test)
test-deb:
	./scripts/deps.sh container
	B=$(B) ./scripts/test-readme.sh install
	B=$(B) ./scripts/test-deb.sh $(DEB_DIR)
# ---- end Debian packages --------------------------------------------------------

clean:
	rm -rf $(B)
