# alloc/: the per-rank segment and the symmetric heap.
LIB_SRCS += $(wildcard alloc/*.c)
