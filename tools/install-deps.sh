#!/bin/sh
# Install the Debian packages libgas needs, if any is missing.
#   install-deps.sh        what the build and `make demo` need (make deps)
#   install-deps.sh test   that and what only the tests need (make test):
#                          openssh-server and -client, for a real sshd in
#                          tests/scripts/gasrun-netns-realssh.sh
# A fresh openssh-server is installed without a system-wide sshd: the file
# /etc/ssh/sshd_not_to_be_run (Debian's switch, honoured by ssh.service,
# ssh.socket and /etc/init.d/ssh) is created first, so the package's postinst
# starts none and none starts at boot; the ssh service it enables is then
# disabled.  The test starts its own sshd, with its own config,
# inside a network namespace.  An openssh-server already installed is left
# as it is.
set -e
pkgs="gcc make libc6-dev pkg-config libnuma-dev libjemalloc-dev libibverbs-dev \
      iproute2 nftables procps"
case "${1:-}" in
    '') ;;
    test) pkgs="$pkgs openssh-server openssh-client" ;;
    *) echo "usage: install-deps.sh [test]" >&2; exit 2 ;;
esac
need=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need="$need $p"
done
[ -z "$need" ] && exit 0
echo "make deps: installing$need"
if [ "$(id -u)" != 0 ]; then
    echo "make deps: not root; install these packages first:$need" >&2
    exit 1
fi
fresh_sshd=no
case " $need " in
    *" openssh-server "*)
        fresh_sshd=yes
        mkdir -p /etc/ssh
        if [ ! -e /etc/ssh/sshd_not_to_be_run ]; then
            echo "make deps: creating /etc/ssh/sshd_not_to_be_run: no system-wide sshd is started" \
                 "(the tests run their own; remove the file to use the ssh service)"
            : >/etc/ssh/sshd_not_to_be_run
        fi
        ;;
esac
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $need
if [ $fresh_sshd = yes ]; then
    if command -v systemctl >/dev/null 2>&1; then
        systemctl disable ssh.service ssh.socket >/dev/null 2>&1 || true
    elif command -v update-rc.d >/dev/null 2>&1; then
        update-rc.d ssh disable >/dev/null 2>&1 || true
    fi
fi
