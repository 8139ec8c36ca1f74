# transport/: the ops table, the registry and one folder per transport.
LIB_SRCS += $(wildcard transport/*.c) $(wildcard transport/shm/*.c) $(wildcard transport/udp/*.c) \
            $(wildcard transport/rdma/*.c)
# The rdma transport's real verbs back end links libibverbs when the build found it.
ifeq ($(HAVE_IBVERBS),1)
LDLIBS += -libverbs
endif
