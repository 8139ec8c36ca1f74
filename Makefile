# libgas - one non-recursive Makefile; each folder adds its sources in module.mk.
#
#   make            build the libraries and tools into build/
#   make deps       install the Debian packages the build needs (as root)
#   make test-deps  deps + the packages only the tests need (openssh-server)
#   make demo       deps + build + run a multi-rank example through gasrun
#   make test       test-deps + build + run every test (ends "N passed, M failed")
#   make bench      the gas-bench standard set -> docs/performance.md (long)
#   make install PREFIX=/usr/local

.DEFAULT_GOAL := all

PREFIX  ?= /usr/local
BUILD   ?= build
CC      ?= gcc
ifeq ($(origin CC),default)
CC := gcc
endif

OPT       ?= -O2 -g
WARN      := -Wall -Wextra -Wstrict-prototypes -Wmissing-field-initializers -Wshadow \
             -Wno-unused-parameter
CPPFLAGS  += -D_GNU_SOURCE -Iinclude -I.
CFLAGS    += -std=c11 $(OPT) $(WARN) -fPIC -fvisibility=hidden -MMD -MP $(EXTRA_CFLAGS)
LDLIBS    += -ljemalloc -lnuma -lpthread -lrt -lm

# Optional features, found once per build.
HAVE_IBVERBS := $(shell echo 'int main(void){return 0;}' | $(CC) -x c -include infiniband/verbs.h \
                  - -o /dev/null -libverbs >/dev/null 2>&1 && echo 1 || echo 0)

CPPFLAGS += -DGAS_HAVE_IBVERBS=$(HAVE_IBVERBS)

LIBA     := $(BUILD)/lib/libgas.a
LIBSO    := $(BUILD)/lib/libgas.so
PCFILE   := $(BUILD)/lib/pkgconfig/gas.pc

LIB_SRCS  :=
TOOL_BINS :=
TEST_BINS :=
EXAMPLE_BINS :=

include runtime/module.mk
include alloc/module.mk
include transport/module.mk
include gas/module.mk
include tools/module.mk
include examples/module.mk
include tests/module.mk

LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)

.PHONY: all lib tools tests examples deps test-deps demo test install clean docs bench
all: lib tools examples

lib: $(LIBA) $(LIBSO) $(PCFILE)
tools: $(TOOL_BINS)
tests: $(TEST_BINS)
examples: $(EXAMPLE_BINS)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(LIBA): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(LIBSO): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -shared -o $@ $^ -Wl,-soname,libgas.so $(LDLIBS)

$(PCFILE): $(MAKEFILE_LIST)
	@mkdir -p $(dir $@)
	printf 'prefix=%s\nlibdir=$${prefix}/lib\nincludedir=$${prefix}/include\n\nName: gas\nDescription: libgas distributed shared-memory runtime\nVersion: %s\nCflags: -I$${includedir}\nLibs: -L$${libdir} -lgas\nLibs.private: %s\n' \
	  '$(PREFIX)' "$$(sed -n 's/^#define GAS_VERSION_STRING "\(.*\)"/\1/p' include/gas.h)" '$(LDLIBS)' > $@

# Programs link the static library so that tests and tools may use internals.
LINK_PROG = $(CC) $(CFLAGS) -o $@ $(filter %.o,$^) $(LIBA) $(LDLIBS)

deps:
	@sh tools/install-deps.sh

test-deps:
	@sh tools/install-deps.sh test

demo: deps
	@$(MAKE) --no-print-directory all
	$(BUILD)/bin/gasrun -n 4 --timeout 120 $(BUILD)/examples/histogram

test: test-deps
	@$(MAKE) --no-print-directory all tests
	@bash tests/run-tests.sh

# The standard benchmark set: docs/performance.md and docs/perf/*.svg (minutes).
bench: all
	@bash tools/make-bench.sh

docs: $(BUILD)/bin/gas-info
	$(BUILD)/bin/gas-info --config-markdown > docs/config.md

install: all
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin
	install -m 644 include/gas.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(LIBA) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(LIBSO) $(DESTDIR)$(PREFIX)/lib/
	sed 's|^prefix=.*|prefix=$(PREFIX)|' $(PCFILE) > $(DESTDIR)$(PREFIX)/lib/pkgconfig/gas.pc
	chmod 644 $(DESTDIR)$(PREFIX)/lib/pkgconfig/gas.pc
	install -m 755 $(TOOL_BINS) $(DESTDIR)$(PREFIX)/bin/

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
