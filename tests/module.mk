# tests/: unit tests (tests/unit), multi-rank tests (tests/mr); tests/manifest lists them.
TEST_BINS += $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/*.c tests/mr/*.c))
$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(LIBA)
	@mkdir -p $(dir $@)
	$(LINK_PROG)
