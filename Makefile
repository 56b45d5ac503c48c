# dnsnap: one Makefile, readable top to bottom. `make help` lists the targets.
#
# Configuration; override on the command line, e.g. make CC=clang OPT=-O0.
CC      ?= cc
CLANG   ?= clang
OPT     ?= -O2
CFLAGS  ?= $(OPT) -g
WERROR  ?= -Werror
WARN     = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes $(WERROR)
CPPFLAGS = -std=c11 -D_GNU_SOURCE -Iformat -Iengine -Iengine/forward -Iengine/ingest \
	   -Iengine/l2 -Icli -Icli/serve -Itests/helpers -MMD -MP
# jemalloc is the production allocator; sanitizer builds bring their own
JEMALLOC ?= -ljemalloc
LDLIBS_LIB  = -llmdb -lxxhash -lzstd -pthread
LDLIBS_TEST = -lldns -lpcap -lcmocka $(LDLIBS_LIB) $(JEMALLOC)
# serve's metrics endpoint (cli/serve/metrics.c): the tool and test_metrics, not libdnsnap
LDLIBS_HTTP = -lmicrohttpd
# The tool opens ldns, libpcap and libmicrohttpd with dlopen() when a command needs them
# (cli/lazy.h): `dnsnap serve` starts without them and the libraries they bring. dlopen is
# in libc since glibc 2.34; -ldl, for older ones, only where it is a library of its own.
LDLIBS_DL   = -Wl,--push-state,--as-needed -ldl -Wl,--pop-state
# The tool links jemalloc statically (its PIC archive, in libjemalloc-dev): the shared
# libjemalloc brings libstdc++, libm and libgcc_s, whose relocations were most of what
# `dnsnap serve` did between exec and its first answer (issue 13). Only when JEMALLOC is
# the default: sanitizer and cross builds set JEMALLOC= and link none.
comma := ,
JEMALLOC_CLI ?= $(if $(filter -ljemalloc,$(JEMALLOC)),-Wl$(comma)-Bstatic -ljemalloc_pic -Wl$(comma)-Bdynamic -lm,$(JEMALLOC))
# The Redis client (engine/l2, libdnsnap-l2: serve --l2, import --from, export --to)
LDLIBS_REDIS = -lhiredis
LDLIBS_CLI  = $(LDLIBS_LIB) $(LDLIBS_REDIS) $(JEMALLOC_CLI) $(LDLIBS_DL)
# What cli/lazy_LIB.c opens: -lLIB's soname, as the linker records it (a probe program linked
# with -lLIB; the cross builds' sysroots too), and the Debian package holding it when dpkg
# knows (for the message when it is missing).
LAZY_LIB_ldns = ldns
LAZY_LIB_pcap = pcap
LAZY_LIB_mhd  = microhttpd
BUILD   ?= build
PREFIX  ?= /usr/local
MANDIR  ?= $(PREFIX)/share/man
VERSION  = $(shell sed -n 's/^#define DNSNAP_VERSION "\(.*\)"$$/\1/p' engine/dnsnap.h)
FUZZ_RUNS ?= 200000
# Test steps run at once (tests/run.sh), and the -j of the builds make test and make asan
# start, unless make was given a -j of its own
TEST_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
TEST_J = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(TEST_JOBS))
DEMO_ENTRIES ?= 200000

# Debian packages this project needs (make deps installs the missing ones). The
# third line: serve's metrics endpoint (libmicrohttpd) and the parser test_metrics checks
# its text with (prometheus_client's); the fourth: the Redis client library and Redis itself
# (make test-e2e's shared tier: redis-server, and redis-cli to build a cluster). The last line is what make test-e2e runs: Unbound,
# NSD, drill and ldns-signzone, kdig, tcpdump (dig and delv are in bind9-dnsutils), ps;
# dnsperf (the deploy's flood) and python3 (tests/helpers/fakeup.py, the fake upstream);
# python3-unbound, the Python module interface Debian's Unbound loads contrib/unbound/dnsnap.py
# through (tests/e2e/unbound_module.sh, make bench-unbound).
PKGS = build-essential pkg-config liblmdb-dev libzstd-dev libjemalloc-dev libcmocka-dev \
       libldns-dev libxxhash-dev libpcap-dev clang libclang-rt-14-dev groff-base \
       libmicrohttpd-dev python3-prometheus-client \
       libhiredis-dev redis-server redis-tools \
       unbound nsd bind9-dnsutils ldnsutils knot-dnsutils tcpdump procps dnsperf python3 \
       python3-unbound
# ...and those of the peer and deploy benchmarks (make bench-peers and make bench-deploy
# install them; make test does not).
PKGS_PEERS = dnsperf nsd unbound knot-resolver tcpdump lmdb-utils dnsdist pdns-recursor python3
PEERS_NAMES ?= 100000
# ...and those of make bench-fleet (issue 14's shared tier: three serve --l2 hosts on one
# Redis, Unbound and NSD behind them; bench/fleet/run.sh)
PKGS_FLEET = dnsperf nsd unbound redis-server redis-tools bind9-dnsutils iproute2 python3
FLEET_NAMES ?= 50000
# ...and those of make bench-unbound (stock Unbound with and without contrib/unbound/dnsnap.py;
# bench/unbound/run.sh)
PKGS_UNBOUND = dnsperf nsd unbound python3-unbound tcpdump bind9-dnsutils iproute2 python3
UNBOUND_NAMES ?= 100000
# ...and those of make test-cross: the s390x (big-endian) cross compiler and qemu-s390x;
# the s390x libraries come from Debian into a sysroot (tests/cross/sysroot.sh).
PKGS_CROSS = gcc-s390x-linux-gnu qemu-user
# ...and make bench-instr's instruction counter (valgrind's callgrind; bench/instr.sh).
PKGS_INSTR = valgrind
# make bench-instr's sizes (bench/instr.c), and make bench-10m's directory for its
# snapshot (1.6 GB at 10M entries).
INSTR_ARGS ?= --entries 200000 --ops 50000
BENCH_10M_DIR ?= /tmp
BENCH_50M_DIR ?= /tmp
CROSS_BUILD = build-s390x
CROSS_ROOT  = $(CURDIR)/$(CROSS_BUILD)/sysroot
CROSS_FLAGS = -isystem $(CROSS_ROOT)/usr/include \
	      -isystem $(CROSS_ROOT)/usr/include/s390x-linux-gnu \
	      $(foreach d,usr/lib lib,-L$(CROSS_ROOT)/$(d)/s390x-linux-gnu \
				      -Wl,-rpath-link,$(CROSS_ROOT)/$(d)/s390x-linux-gnu)
SUDO = $(shell [ "$$(id -u)" = 0 ] || echo sudo)

ifeq ($(V),1)
Q =
else
Q = @
endif

FORMAT_SRC = $(wildcard format/*.c)
# The engine: the cache, snapshots, the export stream, and the upstream client (forward.h)
ENGINE_SRC = $(wildcard engine/*.c engine/forward/*.c)
LIB_OBJ    = $(patsubst %.c,$(BUILD)/%.o,$(FORMAT_SRC) $(ENGINE_SRC))
# The shared library is built from the same sources compiled -fPIC, in a tree of their own.
LIB_PIC_OBJ = $(patsubst %.c,$(BUILD)/pic/%.o,$(FORMAT_SRC) $(ENGINE_SRC))
# The installed headers (PREFIX/include/dnsnap/); tests/cli/test_install.sh checks that the
# shared library exports exactly the functions they declare.
PUBLIC_H   = format/dnsnap_format.h engine/dnsnap.h engine/forward/forward.h
# Soname policy. SOVERSION is the ABI number, not DNSNAP_VERSION's major: while the version
# is 0.x a minor release may break the ABI, so the soname cannot follow the version. Add 1
# to SOVERSION in the release that breaks the ABI of a header of PUBLIC_H: a function
# removed or its parameters changed, a public struct's layout or a constant's meaning
# changed. Adding a function keeps it. From 1.0 on, SOVERSION is the version's major. The
# file is libdnsnap.so.SOVERSION.MINOR.PATCH; the soname libdnsnap.so.SOVERSION is what
# programs record and ld.so looks for.
SOVERSION = 1
SONAME    = libdnsnap.so.$(SOVERSION)
SOFILE    = $(SONAME).$(word 2,$(subst ., ,$(VERSION))).$(word 3,$(subst ., ,$(VERSION)))
# The shared library (the file, then its soname and development links)
LIB_SO    = $(BUILD)/$(SOFILE) $(BUILD)/$(SONAME) $(BUILD)/libdnsnap.so
# Ingest: captures and Unbound's cache text to DNS responses (libpcap, ldns); a library of
# its own beside libdnsnap, so that what embeds libdnsnap needs neither.
INGEST_SRC = $(wildcard engine/ingest/*.c)
INGEST_OBJ = $(patsubst %.c,$(BUILD)/%.o,$(INGEST_SRC))
# The Redis client (hiredis): libdnsnap-l2, an installed library of its own beside
# libdnsnap (which it needs), so that what embeds the cache alone needs no hiredis. Its
# soname follows the rule above, with its own number: L2_SOVERSION goes up when the ABI of
# engine/l2/l2.h breaks. Exported: dnsnap_l2_* (engine/l2/libdnsnap-l2.map).
L2_SRC     = $(wildcard engine/l2/*.c)
L2_OBJ     = $(patsubst %.c,$(BUILD)/%.o,$(L2_SRC))
L2_PIC_OBJ = $(patsubst %.c,$(BUILD)/pic/%.o,$(L2_SRC))
L2_SOVERSION = 1
L2_SONAME  = libdnsnap-l2.so.$(L2_SOVERSION)
L2_SOFILE  = $(L2_SONAME).$(word 2,$(subst ., ,$(VERSION))).$(word 3,$(subst ., ,$(VERSION)))
L2_SO      = $(BUILD)/$(L2_SOFILE) $(BUILD)/$(L2_SONAME) $(BUILD)/libdnsnap-l2.so
L2_LIBS    = $(BUILD)/libdnsnap-l2.a $(L2_SO)
CLI_SRC    = $(wildcard cli/*.c cli/serve/*.c)
CLI_OBJ    = $(patsubst %.c,$(BUILD)/%.o,$(CLI_SRC))
# Test helpers, the CLI code the tests share (the printer: vector test, mkquery; serve's
# packet handler: serve test; the JSON writer, options and times: cli test) and the
# ingest library (capture and unbound tests).
HELP_SRC   = $(filter-out tests/helpers/mk%.c tests/helpers/l2drive.c,$(wildcard tests/helpers/*.c)) cli/print.c \
	     cli/serve/serve_reply.c cli/serve/serve_miss.c cli/json.c cli/opt.c cli/report.c \
	     cli/snapfile.c cli/outfile.c cli/filter.c
HELP_OBJ   = $(patsubst %.c,$(BUILD)/%.o,$(HELP_SRC)) $(BUILD)/libdnsnap-ingest.a
UNIT_SRC   = $(wildcard tests/unit/test_*.c)
UNIT_BIN   = $(patsubst tests/unit/%.c,$(BUILD)/bin/%,$(UNIT_SRC))
FUZZ_SRC   = $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN   = $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRC))
BENCH_BIN  = $(patsubst %,$(BUILD)/bench_%,encode cache snap export)

.PHONY: all deps run test test-unit test-e2e test-cross test-crash test-corrupt fuzz asan tsan vectors bench \
	bench-instr bench-10m bench-50m bench-floor bench-peers bench-deploy bench-fleet bench-unbound \
	install uninstall clean help
.DEFAULT_GOAL := all
.SECONDARY:

all: $(BUILD)/libdnsnap.a $(LIB_SO) $(L2_LIBS) $(BUILD)/dnsnap ## libraries (static, shared) and CLI

# $(call install_missing,PACKAGES,WHO): apt-get install those of PACKAGES not installed
define install_missing
	@missing=$$(for p in $(1); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
		echo "$(2): installing" $$missing; \
		$(SUDO) apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 \
			install -y -qq $$missing; \
	fi
endef

deps:                                              ## install missing Debian packages
	$(call install_missing,$(PKGS),make deps)

run: deps all $(BUILD)/bench_cache $(BUILD)/resolver_demo ## install, build, run the demo
	$(BUILD)/dnsnap demo spec/vectors/valid/*.msg
	$(BUILD)/bench_cache --entries $(DEMO_ENTRIES) --rounds 1
	$(BUILD)/resolver_demo fill $(BUILD)/demo.snap $(DEMO_ENTRIES)
	$(BUILD)/resolver_demo start $(BUILD)/demo.snap

test: deps                                         ## install, build, run every test (TEST_JOBS)
	@echo "make test: building the libraries, the tool, the tests and their helpers"
	$(Q)$(MAKE) --no-print-directory $(TEST_J) all $(UNIT_BIN) $(BUILD)/mkcorpus \
		$(BUILD)/mkcaptures $(BUILD)/mkquery $(BUILD)/mksnapseeds $(BUILD)/mkfuture $(BUILD)/resolver_demo \
		$(BUILD)/mksweep $(BUILD)/deploy_zipfload $(BUILD)/peers_dnsprobe $(BUILD)/bench_snap \
		$(BUILD)/bench_instr $(BUILD)/mkreport $(BUILD)/mkabi
	@echo "make test: building the $(words $(FUZZ_BIN)) fuzz targets (clang, ASan: a few minutes)"
	$(Q)$(MAKE) --no-print-directory $(TEST_J) fuzz
	$(Q)TEST_JOBS=$(TEST_JOBS) tests/run.sh $(BUILD) $(FUZZ_RUNS)

test-e2e: deps                                     ## NSD, Unbound, dig, kdig, drill, delv vs dnsnap (loopback)
	$(MAKE) --no-print-directory all $(BUILD)/mkquery $(BUILD)/dnscmp $(BUILD)/mkunboundsnap \
		$(BUILD)/l2drive
	tests/e2e/run.sh $(BUILD)

test-unit: all $(UNIT_BIN)                         ## the tests without fuzzing
	$(Q)TEST_JOBS=$(TEST_JOBS) tests/run.sh $(BUILD) 0
# what the CLI tests run
test-unit: $(BUILD)/mkcaptures $(BUILD)/mkquery $(BUILD)/mksnapseeds $(BUILD)/mkfuture $(BUILD)/resolver_demo \
	$(BUILD)/mksweep $(BUILD)/deploy_zipfload $(BUILD)/peers_dnsprobe $(BUILD)/bench_snap \
	$(BUILD)/bench_instr $(BUILD)/mkreport $(BUILD)/mkabi

asan:                                              ## unit and CLI tests under ASan+UBSan
	$(MAKE) --no-print-directory $(TEST_J) BUILD=build-asan JEMALLOC= \
		OPT="-O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all" \
		all $(patsubst $(BUILD)/%,build-asan/%,$(UNIT_BIN)) build-asan/mkcorpus \
		build-asan/mkcaptures build-asan/mkquery build-asan/mksnapseeds build-asan/mkfuture build-asan/resolver_demo \
		build-asan/mksweep build-asan/deploy_zipfload build-asan/peers_dnsprobe \
		build-asan/mkreport
	ASAN_OPTIONS=detect_leaks=1 TEST_JOBS=$(TEST_JOBS) tests/run.sh build-asan 0

# The damage sweep drives the CLI built as `make asan` builds it (CORRUPT_ARGS: e.g.
# --seed 7 --flips 200; tests/corrupt/sweep.sh --help lists them).
test-corrupt: deps                                 ## damaged snapshots through every command
	$(MAKE) --no-print-directory BUILD=build-asan JEMALLOC= \
		OPT="-O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all" \
		all build-asan/mksweep build-asan/mkquery
	tests/corrupt/sweep.sh build-asan $(CORRUPT_ARGS)

tsan:                                              ## the threaded tests under TSan
	$(MAKE) --no-print-directory BUILD=build-tsan JEMALLOC= OPT="-O1 -fsanitize=thread" \
		build-tsan/bin/test_cache build-tsan/bin/test_snap_reliability build-tsan/bin/test_snap_pin \
		build-tsan/bin/test_l2 build-tsan/bin/test_forward
	TSAN_OPTIONS=halt_on_error=1 build-tsan/bin/test_cache
	TSAN_OPTIONS=halt_on_error=1 build-tsan/bin/test_snap_reliability
	TSAN_OPTIONS=halt_on_error=1 build-tsan/bin/test_snap_pin
	TSAN_OPTIONS=halt_on_error=1 build-tsan/bin/test_l2
	TSAN_OPTIONS=halt_on_error=1 build-tsan/bin/test_forward

# The same rules, another compiler and tree: BUILD=build-s390x, jemalloc only where the rules
# name it (resolver_demo).
test-cross:                                        ## unit, fuzz-seed, CLI tests on big-endian s390x
	$(call install_missing,$(PKGS_CROSS),make test-cross)
	tests/cross/sysroot.sh $(CROSS_BUILD)
	$(MAKE) -s --no-print-directory BUILD=$(CROSS_BUILD) CC=s390x-linux-gnu-gcc \
		AR=s390x-linux-gnu-ar JEMALLOC= CFLAGS="$(OPT) -g $(CROSS_FLAGS)" \
		$(patsubst $(BUILD)/%,$(CROSS_BUILD)/%,$(UNIT_BIN) $(BUILD)/dnsnap $(BUILD)/mkcaptures \
		$(BUILD)/mkquery $(BUILD)/mksnapseeds $(BUILD)/mkfuture $(BUILD)/mksweep $(BUILD)/resolver_demo \
		$(BUILD)/mkcorpus $(BUILD)/deploy_zipfload $(BUILD)/peers_dnsprobe) \
		$(patsubst tests/fuzz/%.c,$(CROSS_BUILD)/replay/%,$(FUZZ_SRC))
	tests/cross/run.sh $(CROSS_BUILD) qemu-s390x $(CROSS_ROOT)

test-crash: $(BUILD)/bin/test_snap_reliability     ## 60 SIGKILL-while-writing trials
	DNSNAP_CRASH_TRIALS=60 $(BUILD)/bin/test_snap_reliability

fuzz: $(FUZZ_BIN)                                  ## build the libFuzzer targets (clang)

vectors: $(BUILD)/mkvectors                        ## regenerate spec/vectors (review the diff!)
	$(BUILD)/mkvectors spec/vectors
	sed -e '/<!-- VECTORS -->/,/<!-- \/VECTORS -->/{/<!-- VECTORS -->/{p;r spec/vectors/examples.md' \
	    -e '};/<!-- \/VECTORS -->/!d}' \
	    -e '/<!-- STREAMS -->/,/<!-- \/STREAMS -->/{/<!-- STREAMS -->/{p;r spec/vectors/streams.md' \
	    -e '};/<!-- \/STREAMS -->/!d}' \
	    -e '/<!-- SNAPSHOTS -->/,/<!-- \/SNAPSHOTS -->/{/<!-- SNAPSHOTS -->/{p;r spec/vectors/snapshots.md' \
	    -e '};/<!-- \/SNAPSHOTS -->/!d}' \
	    -e '/<!-- L2VALUES -->/,/<!-- \/L2VALUES -->/{/<!-- L2VALUES -->/{p;r spec/vectors/l2values.md' \
	    -e '};/<!-- \/L2VALUES -->/!d}' spec/FORMAT.md > $(BUILD)/FORMAT.md
	mv $(BUILD)/FORMAT.md spec/FORMAT.md

bench: deps $(BENCH_BIN)                           ## benchmarks (BENCH_ARGS=--json)
	$(BUILD)/bench_encode $(BENCH_ARGS)
	$(BUILD)/bench_cache $(BENCH_ARGS)
	$(BUILD)/bench_snap $(BENCH_ARGS)
	$(BUILD)/bench_export $(BENCH_ARGS)

bench-instr: deps $(BUILD)/bench_instr               ## instructions per lookup, insert, map lookup (JSON)
	$(call install_missing,$(PKGS_INSTR),make bench-instr)
	$(Q)bench/instr.sh $(BUILD) $(INSTR_ARGS)

bench-10m: deps $(BUILD)/bench_cache $(BUILD)/bench_snap ## issue 13's table at 10M entries (4 GB of RAM)
	$(Q)bench/bench_10m.sh $(BUILD) $(BENCH_10M_DIR)

bench-50m: deps all $(BUILD)/bench_snap $(BUILD)/serve_start ## the cache and its snapshot at 50M entries (11 GB of RAM, 14 GB of disk)
	$(Q)bench/bench_50m.sh $(BUILD) $(BENCH_50M_DIR)

bench-floor: deps all $(BUILD)/resolver_demo $(BUILD)/floor ## serve against the kernel's floor: q/s and CPU per query (JSON)
	$(call install_missing,dnsperf,make bench-floor)
	$(Q)bench/floor.sh $(BUILD)

bench-peers: deps all $(BUILD)/peers_mkzone $(BUILD)/peers_dnsprobe $(BUILD)/floor ## serve vs Unbound, kresd, dnsdist, pdns and the floor (PEERS_NAMES)
	$(call install_missing,$(PKGS_PEERS),make bench-peers)
	bench/peers/run.sh $(BUILD) $(PEERS_NAMES)

bench-deploy: deps all $(BUILD)/peers_mkzone $(BUILD)/deploy_zipfload ## restarts under load: serve, Unbound, kresd, dnsdist
	$(call install_missing,$(PKGS_PEERS),make bench-deploy)
	bench/deploy/run.sh $(BUILD) $(PEERS_NAMES)

bench-fleet: deps all $(BUILD)/peers_mkzone $(BUILD)/peers_dnsprobe $(BUILD)/deploy_zipfload ## a fleet on one Redis: hit ratio, import --from, L2 latency, memory (FLEET_NAMES)
	$(call install_missing,$(PKGS_FLEET),make bench-fleet)
	bench/fleet/run.sh $(BUILD) $(FLEET_NAMES)

bench-unbound: deps all $(BUILD)/peers_mkzone $(BUILD)/peers_dnsprobe $(BUILD)/deploy_zipfload ## Unbound with and without dnsnap.py: misses, hits, restarts (UNBOUND_NAMES)
	$(call install_missing,$(PKGS_UNBOUND),make bench-unbound)
	bench/unbound/run.sh $(BUILD) $(UNBOUND_NAMES)

# The .pc file is made here, not in `all`: it holds PREFIX, which may differ per install.
# Headers go to PREFIX/include/dnsnap/ (#include <dnsnap/dnsnap.h>, <dnsnap/l2.h>). The ingest
# library
# (libdnsnap-ingest.a) is the tool's, not installed. After installing into a directory of
# ld.so's (PREFIX=/usr/local: /usr/local/lib), run ldconfig as root.
LIBDIR = $(DESTDIR)$(PREFIX)/lib
INCDIR = $(DESTDIR)$(PREFIX)/include/dnsnap
install: all                                       ## libraries, headers, .pc, CLI, man page in PREFIX
	install -d $(LIBDIR)/pkgconfig $(INCDIR) $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(MANDIR)/man1
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' libdnsnap.pc.in \
		> $(BUILD)/libdnsnap.pc
	install -m 644 $(BUILD)/libdnsnap.a $(BUILD)/$(SOFILE) $(LIBDIR)/
	ln -sf $(SOFILE) $(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(LIBDIR)/libdnsnap.so
	install -m 644 $(BUILD)/libdnsnap.pc $(LIBDIR)/pkgconfig/
	install -m 644 $(PUBLIC_H) $(INCDIR)/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' engine/l2/libdnsnap-l2.pc.in \
		> $(BUILD)/libdnsnap-l2.pc
	install -m 644 $(BUILD)/libdnsnap-l2.a $(BUILD)/$(L2_SOFILE) $(LIBDIR)/
	ln -sf $(L2_SOFILE) $(LIBDIR)/$(L2_SONAME)
	ln -sf $(L2_SONAME) $(LIBDIR)/libdnsnap-l2.so
	install -m 644 $(BUILD)/libdnsnap-l2.pc $(LIBDIR)/pkgconfig/
	install -m 644 engine/l2/l2.h $(INCDIR)/
	install -m 755 $(BUILD)/dnsnap $(DESTDIR)$(PREFIX)/bin/
	install -m 644 doc/dnsnap.1 $(DESTDIR)$(MANDIR)/man1/

uninstall:                                         ## remove what install put under PREFIX
	rm -f $(LIBDIR)/libdnsnap.a $(LIBDIR)/$(SOFILE) $(LIBDIR)/$(SONAME) $(LIBDIR)/libdnsnap.so \
		$(LIBDIR)/pkgconfig/libdnsnap.pc $(addprefix $(INCDIR)/,$(notdir $(PUBLIC_H))) \
		$(LIBDIR)/libdnsnap-l2.a $(LIBDIR)/$(L2_SOFILE) $(LIBDIR)/$(L2_SONAME) \
		$(LIBDIR)/libdnsnap-l2.so $(LIBDIR)/pkgconfig/libdnsnap-l2.pc $(INCDIR)/l2.h \
		$(DESTDIR)$(PREFIX)/bin/dnsnap $(DESTDIR)$(MANDIR)/man1/dnsnap.1
	rmdir $(INCDIR) 2>/dev/null || true

clean:                                             ## remove build outputs
	rm -rf build build-asan

help:                                              ## this list
	@grep -hE '^[a-z0-9-]+:.*## ' Makefile | sed 's/:.*## /\t/' | expand -t 16

# ---------------------------------------------------------------- rules
$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -c $< -o $@

$(BUILD)/cli/lazy_%.o: cli/lazy_%.c
	@mkdir -p $(dir $@)
	$(Q)lib=$(LAZY_LIB_$*); \
	echo 'int main(void) { return 0; }' | $(CC) $(CFLAGS) -x c - -Wl,--no-as-needed \
		-l$$lib -o $@.probe && \
	so=$$(readelf -d $@.probe | sed -n "s/.*(NEEDED).*\[\(lib$$lib\.so[^]]*\)\].*/\1/p") && \
	rm -f $@.probe && [ -n "$$so" ] || { echo "$@: no soname for -l$$lib" >&2; exit 1; }; \
	pkg=$$(dpkg-query -S "*/$$so" 2>/dev/null | sed -n '1s/[:,].*//p'); \
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -DLAZY_SONAME='"'"$$so"'"' \
		-DLAZY_PACKAGE='"'"$$pkg"'"' -c $< -o $@

$(BUILD)/libdnsnap.a: $(LIB_OBJ)
	$(Q)$(AR) rcs $@ $^

$(BUILD)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -fPIC -c $< -o $@

# The version script keeps dnsnap_[!_]* global and makes the rest local: the engine's
# dnsnap__* internals (shared between its files) and whatever a dependency might add.
# A pattern, not a mark on each declaration: the public header stays free of export
# macros and a new public function is exported by its name alone.
$(BUILD)/$(SOFILE): $(LIB_PIC_OBJ) engine/libdnsnap.map
	$(Q)$(CC) $(CFLAGS) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=engine/libdnsnap.map \
		-Wl,--no-undefined $(LIB_PIC_OBJ) $(LDLIBS_LIB) -o $@

$(BUILD)/$(SONAME): $(BUILD)/$(SOFILE)
	$(Q)ln -sf $(SOFILE) $@

$(BUILD)/libdnsnap.so: $(BUILD)/$(SONAME)
	$(Q)ln -sf $(SONAME) $@

$(BUILD)/libdnsnap-ingest.a: $(INGEST_OBJ)
	$(Q)$(AR) rcs $@ $^

$(BUILD)/libdnsnap-l2.a: $(L2_OBJ)
	$(Q)$(AR) rcs $@ $^

# As libdnsnap.so, with the pattern dnsnap_l2_[!_]*: its dnsnap__l2* internals stay local.
# It records libdnsnap.so.1 (NEEDED, even where the linker drops unused libraries): the
# client calls none of it today, but l2.h is built on dnsnap.h and the values it carries
# are libdnsnap's, so the two go together (the .pc file Requires libdnsnap too).
$(BUILD)/$(L2_SOFILE): $(L2_PIC_OBJ) engine/l2/libdnsnap-l2.map $(BUILD)/libdnsnap.so
	$(Q)$(CC) $(CFLAGS) -shared -Wl,-soname,$(L2_SONAME) \
		-Wl,--version-script=engine/l2/libdnsnap-l2.map -Wl,--no-undefined $(L2_PIC_OBJ) \
		-L$(BUILD) -Wl,--push-state,--no-as-needed -ldnsnap -Wl,--pop-state \
		$(LDLIBS_REDIS) -pthread -o $@

$(BUILD)/$(L2_SONAME): $(BUILD)/$(L2_SOFILE)
	$(Q)ln -sf $(L2_SOFILE) $@

$(BUILD)/libdnsnap-l2.so: $(BUILD)/$(L2_SONAME)
	$(Q)ln -sf $(L2_SONAME) $@

$(BUILD)/dnsnap: $(CLI_OBJ) $(BUILD)/libdnsnap-ingest.a $(BUILD)/libdnsnap-l2.a $(BUILD)/libdnsnap.a
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS_CLI) -o $@

$(BUILD)/bin/%: $(BUILD)/tests/unit/%.o $(HELP_OBJ) $(BUILD)/libdnsnap.a
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS_TEST) -o $@

# serve's metrics, log and sd_notify, and the HTTP library they open as the tool does (the
# stubs of cli/lazy_mhd.c, not -lmicrohttpd).
SERVE_OPS_OBJ = $(patsubst %.c,$(BUILD)/%.o,cli/serve/metrics.c cli/serve/log.c cli/serve/notify.c \
		cli/lazy.c cli/lazy_mhd.c)
$(BUILD)/bin/test_metrics: $(BUILD)/tests/unit/test_metrics.o $(SERVE_OPS_OBJ) $(HELP_OBJ) \
			   $(BUILD)/libdnsnap.a
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS_TEST) $(LDLIBS_DL) -o $@

# The Redis client's test and its driver (tests/e2e/l2_client.sh): libdnsnap-l2 and hiredis.
$(BUILD)/bin/test_l2: $(BUILD)/libdnsnap-l2.a
$(BUILD)/bin/test_l2: LDLIBS_TEST += $(LDLIBS_REDIS)
$(BUILD)/l2drive: $(BUILD)/tests/helpers/l2drive.o $(BUILD)/libdnsnap-l2.a $(BUILD)/libdnsnap.a
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS_REDIS) $(LDLIBS_LIB) -o $@

$(BUILD)/mk%: $(BUILD)/tests/helpers/mk%.o $(HELP_OBJ) $(BUILD)/libdnsnap.a
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS_TEST) -o $@
# make vectors' generator: the snapshots and L2 values (mkvectors_snap.c) beside the rest.
$(BUILD)/mkvectors: $(BUILD)/tests/helpers/mkvectors_snap.o

# The sweep's generator writes the realistic mix (bench/realmix.c) through the library.
$(BUILD)/mksweep: $(BUILD)/tests/helpers/mksweep.o $(BUILD)/bench/realmix.o $(BUILD)/bench/mix.o \
		  $(BUILD)/libdnsnap.a
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS_LIB) $(JEMALLOC) -o $@

$(BUILD)/bench_encode: $(BUILD)/bench/bench_encode.o $(HELP_OBJ) $(BUILD)/libdnsnap.a
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS_TEST) -o $@

# The Big Pineapple benchmark measures with jemalloc's statistics: always linked.
$(BUILD)/bench_cache: $(patsubst %.c,$(BUILD)/%.o,bench/bench_cache.c bench/before.c bench/mix.c) \
		      $(BUILD)/libdnsnap.a
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS_LIB) -ljemalloc -o $@

$(BUILD)/bench_snap $(BUILD)/resolver_demo: $(BUILD)/%: $(BUILD)/bench/%.o $(BUILD)/bench/mix.o \
					       $(BUILD)/libdnsnap.a
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS_LIB) -llmdb -ljemalloc -o $@

# The instruction counter's driver (bench/instr.sh runs it under callgrind).
$(BUILD)/bench_instr: $(BUILD)/bench/instr.o $(BUILD)/bench/mix.o $(BUILD)/libdnsnap.a
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS_LIB) -ljemalloc -o $@

# The export stream on both mixes, and the zstd dictionary evaluation (libzstd's ZDICT).
$(BUILD)/bench_export: $(patsubst %.c,$(BUILD)/%.o,bench/bench_export.c bench/mix.c bench/realmix.c) \
		       $(BUILD)/libdnsnap.a
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS_LIB) -ljemalloc -o $@

# The end-to-end comparator: ldns and nothing of ours, an oracle of its own.
$(BUILD)/dnscmp: tests/e2e/dnscmp.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) $< -lldns -o $@

# The floor: the kernel's UDP path alone, each query sent back with QR set (bench/floor.sh,
# bench/peers/run.sh measure dnsnap serve against it).
$(BUILD)/floor: $(BUILD)/bench/floor.o
	$(Q)$(CC) $(CFLAGS) $^ -pthread -o $@

# exec to first answer of dnsnap serve (bench/serve_start.sh runs it on a 10M snapshot)
$(BUILD)/serve_start: $(BUILD)/bench/serve_start.o
	$(Q)$(CC) $(CFLAGS) $^ -o $@

# The peer benchmark's zone generator (the mix as zone text) and its latency and warm-start client.
$(BUILD)/peers_mkzone: $(BUILD)/bench/peers/mkzone.o $(BUILD)/bench/mix.o
	$(Q)$(CC) $(CFLAGS) $^ -o $@

$(BUILD)/peers_dnsprobe: $(BUILD)/bench/peers/dnsprobe.o
	$(Q)$(CC) $(CFLAGS) $^ -o $@

# The deploy benchmark's load generator: Zipf names at a fixed rate, libc only.
$(BUILD)/deploy_zipfload: $(BUILD)/bench/deploy/zipfload.o
	$(Q)$(CC) $(CFLAGS) $^ -lm -pthread -o $@

# Fuzz targets: clang, libFuzzer, ASan+UBSan, the library and Unbound's dump reader
# (engine/ingest/unbound.c, which parses with ldns) compiled in.
FUZZ_FLAGS = -std=c11 -D_GNU_SOURCE -O1 -g -Iformat -Itests/helpers \
             -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
$(BUILD)/fuzz/%: tests/fuzz/%.c $(FORMAT_SRC) $(ENGINE_SRC) engine/ingest/unbound.c \
		 $(wildcard format/*.h engine/*.h engine/forward/*.h engine/ingest/unbound.h \
			    tests/helpers/*.[ch])
	@mkdir -p $(dir $@)
	@echo "  CLANG   $@"
	$(Q)$(CLANG) $(FUZZ_FLAGS) -Iengine -Iengine/forward -Iengine/ingest -Icli -pthread \
		-Wall -Wextra $(WERROR) $< \
		$(FORMAT_SRC) $(ENGINE_SRC) engine/ingest/unbound.c \
		$(filter-out tests/helpers/mk%.c tests/helpers/corpus.c tests/helpers/l2drive.c,$(wildcard tests/helpers/*.c)) \
		-llmdb -lxxhash -lzstd -lldns -o $@

# A fuzz target without libFuzzer, run over its seeds (make test-cross: gcc for s390x).
$(BUILD)/replay/%: $(BUILD)/tests/fuzz/%.o $(BUILD)/tests/cross/replay.o $(HELP_OBJ) \
		   $(BUILD)/libdnsnap.a
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS_TEST) -o $@

# The capture decoder needs libpcap and nothing of libdnsnap.
$(BUILD)/fuzz/fuzz_capture: tests/fuzz/fuzz_capture.c engine/ingest/capture.c engine/ingest/capture.h \
			    tests/helpers/guard.c
	@mkdir -p $(dir $@)
	@echo "  CLANG   $@"
	$(Q)$(CLANG) $(FUZZ_FLAGS) -Iengine/ingest -Wall -Wextra $(WERROR) $< engine/ingest/capture.c \
		tests/helpers/guard.c \
		-lpcap -o $@

# The Redis client's parsers (URLs; hiredis's reader bounded, CLUSTER SLOTS, MOVED and
# ASK): libdnsnap-l2's sources and hiredis, nothing of libdnsnap.
$(BUILD)/fuzz/fuzz_l2_%: tests/fuzz/fuzz_l2_%.c $(L2_SRC) \
			  $(wildcard engine/l2/*.h engine/*.h format/*.h)
	@mkdir -p $(dir $@)
	@echo "  CLANG   $@"
	$(Q)$(CLANG) $(FUZZ_FLAGS) -Iengine -Iengine/l2 -pthread -Wall -Wextra $(WERROR) $< \
		$(L2_SRC) -lhiredis -o $@
L2_FUZZ = $(patsubst tests/fuzz/%.c,%,$(wildcard tests/fuzz/fuzz_l2_*.c))
$(patsubst %,$(BUILD)/replay/%,$(L2_FUZZ)): $(BUILD)/libdnsnap-l2.a
$(patsubst %,$(BUILD)/replay/%,$(L2_FUZZ)): LDLIBS_TEST += $(LDLIBS_REDIS)

# serve's packet handler (no sockets) over the library.
$(BUILD)/fuzz/fuzz_serve: tests/fuzz/fuzz_serve.c cli/serve/serve_reply.c cli/serve/serve.h tests/helpers/wb.c \
			  $(FORMAT_SRC) $(ENGINE_SRC) \
			  $(wildcard format/*.h engine/*.h engine/forward/*.h)
	@mkdir -p $(dir $@)
	@echo "  CLANG   $@"
	$(Q)$(CLANG) $(FUZZ_FLAGS) -Iengine -Icli -Icli/serve -pthread -Wall -Wextra $(WERROR) $< cli/serve/serve_reply.c \
		tests/helpers/wb.c $(FORMAT_SRC) $(ENGINE_SRC) -llmdb -lxxhash -lzstd -o $@

-include $(shell find $(BUILD) -path $(BUILD)/sysroot -prune -o -path $(BUILD)/apt -prune -o \
	   -name '*.d' -type f -print 2>/dev/null)
