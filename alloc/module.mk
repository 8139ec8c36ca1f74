# alloc/: the per-rank segment (limits, placement, SIGBUS report), the symmetric heap,
# the heap/arena boundary and the jemalloc arenas.
LIB_SRCS += $(wildcard alloc/*.c)
