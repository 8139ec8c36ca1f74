# gas/: global pointers, arrays, RMA, atomics, signals, ordering, barrier.
LIB_SRCS += $(wildcard gas/*.c)
