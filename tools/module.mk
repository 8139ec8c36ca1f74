# tools/: gasrun (launcher), gascc (compiler wrapper), gas-info, gas-bench, gas-bench-mem.
TOOL_BINS += $(BUILD)/bin/gasrun $(BUILD)/bin/gascc $(BUILD)/bin/gas-info $(BUILD)/bin/gas-bench
TOOL_BINS += $(BUILD)/bin/gas-bench-mem $(BUILD)/bin/gas-bench-scale

GASRUN_SRCS := $(wildcard tools/gasrun/*.c) runtime/boot_wire.c runtime/boot_tcp.c \
               runtime/config_parse.c
$(BUILD)/bin/gasrun: $(GASRUN_SRCS:%.c=$(BUILD)/obj/%.o)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/bin/gas-info: $(BUILD)/obj/tools/gas-info.o $(BUILD)/obj/tools/gas-info-stats.o $(LIBA)
	@mkdir -p $(dir $@)
	$(LINK_PROG)

GAS_BENCH_SRCS := tools/gas-bench.c tools/bench_util.c tools/bench_ref.c tools/bench_rma.c \
                  tools/bench_udp.c tools/bench_coll.c tools/bench_compare.c \
                  tools/bench_out.c tools/bench_svg.c
$(BUILD)/bin/gas-bench: $(GAS_BENCH_SRCS:%.c=$(BUILD)/obj/%.o) $(LIBA)
	@mkdir -p $(dir $@)
	$(LINK_PROG)

$(BUILD)/bin/gas-bench-scale: $(BUILD)/obj/tools/gas-bench-scale.o $(LIBA)
	@mkdir -p $(dir $@)
	$(LINK_PROG)

$(BUILD)/bin/gas-bench-mem: $(BUILD)/obj/tools/gas-bench-mem.o $(LIBA)
	@mkdir -p $(dir $@)
	$(LINK_PROG) -ldl

# gascc finds headers and libraries relative to itself (build tree or PREFIX).
$(BUILD)/bin/gascc: tools/gascc.in $(MAKEFILE_LIST)
	@mkdir -p $(dir $@)
	sed -e 's|@LDLIBS@|$(LDLIBS)|' -e 's|@SRCINC@|$(CURDIR)/include|' $< > $@ && chmod +x $@

# udp-bench: libgas over udp next to raw UDP (ping-pong, sendmmsg stream) in one run.
TOOL_BINS += $(BUILD)/bin/udp-bench
$(BUILD)/bin/udp-bench: $(BUILD)/obj/tools/udp-bench.o $(LIBA)
	@mkdir -p $(dir $@)
	$(LINK_PROG)
