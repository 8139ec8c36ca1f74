# examples/: small complete programs; `make demo` runs histogram.
EXAMPLE_BINS += $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))
$(BUILD)/examples/%: $(BUILD)/obj/examples/%.o $(LIBA)
	@mkdir -p $(dir $@)
	$(LINK_PROG)
