#!/bin/sh
# local-launcher.sh HOST COMMAND [ARGS...] - a gasrun --launcher (exec mode)
# that starts the command on this host, as if HOST were another one: the rank
# boots over TCP like a remote one.  GASRUN_TEST_HOST=HOST tells it where it
# "is".  For tests without root or network namespaces (loopback only).
host=$1
shift
GASRUN_TEST_HOST=$host exec "$@"
