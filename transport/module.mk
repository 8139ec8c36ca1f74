# transport/: the ops table, the registry and one folder per transport.
LIB_SRCS += $(wildcard transport/*.c) $(wildcard transport/shm/*.c) $(wildcard transport/udp/*.c)
