# runtime/: base services (status, log, config, clock, wait), bootstrap, init.
LIB_SRCS += $(wildcard runtime/*.c)
