#!/usr/bin/env bash
# netns-ssh.sh HOST WORDS... - stands in for `ssh HOST WORDS...` (no terminal)
# where HOST is a network namespace, for tests of gasrun's ssh launch path:
#   - WORDS are joined with blanks and run by `sh -c` in HOST, as sshd hands
#     them to the remote login shell: gasrun must quote them (shell mode; a
#     link to this script named `ssh` gets it by default);
#   - the command runs in a session of its own and is not killed with this
#     script: when gasrun kills its launcher, the "remote" command lives on,
#     as after an ssh client dies, and this script exits 255;
#   - the command's exit status is this script's, except that a command killed
#     by a signal gives 255, as with ssh.
host=$1
shift
trap 'exit 255' TERM INT HUP
setsid -w ip netns exec "$host" sh -c "$*" <&0 &
wait $!
st=$?
[ $st -gt 128 ] && exit 255
exit $st
