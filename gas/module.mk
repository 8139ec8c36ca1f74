# gas/: global pointers, arrays, RMA, atomics, signals, ordering, barrier; gas/coll/: teams, collectives.
LIB_SRCS += $(wildcard gas/*.c) $(wildcard gas/coll/*.c)

# The built-in tuning table is configs/coll-tuning.conf, as a C string.
CPPFLAGS += -I$(BUILD)/gen
$(BUILD)/obj/gas/coll/select.o: $(BUILD)/gen/coll_tuning.h
$(BUILD)/gen/coll_tuning.h: configs/coll-tuning.conf
	@mkdir -p $(dir $@)
	sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $< > $@
