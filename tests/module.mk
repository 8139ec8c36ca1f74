# tests/: unit tests (tests/unit), multi-rank tests (tests/mr); tests/manifest lists them.
TEST_BINS += $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/*.c tests/mr/*.c))
$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(LIBA)
	@mkdir -p $(dir $@)
	$(LINK_PROG)

# gasrun's test rank: speaks the boot protocol directly (no libgas needed).
TEST_BINS += $(BUILD)/tests/gasrun/boot_client
$(BUILD)/tests/gasrun/boot_client: $(BUILD)/obj/tests/gasrun/boot_client.o $(BUILD)/obj/runtime/boot_wire.o \
                                $(BUILD)/obj/runtime/boot_tcp.o
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

# A libgas rank that waits for ever after gas_init (gasrun's remote-rank tests).
TEST_BINS += $(BUILD)/tests/gasrun/gas_hang
# A libgas rank that meets the others in barriers for a while (network outage tests).
TEST_BINS += $(BUILD)/tests/gasrun/gas_barriers
TEST_BINS += $(BUILD)/tests/gasrun/tty_job
