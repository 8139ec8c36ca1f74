#!/bin/sh
# Install the Debian packages libgas needs to build and test, if any is missing.
set -e
need=""
for p in gcc make libc6-dev pkg-config libnuma-dev libjemalloc-dev libibverbs-dev \
         iproute2 nftables procps; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need="$need $p"
done
[ -z "$need" ] && exit 0
echo "make deps: installing$need"
if [ "$(id -u)" != 0 ]; then
    echo "make deps: not root; install these packages first:$need" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $need
