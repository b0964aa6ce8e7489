#!/bin/sh
# The classic way to benchmark SSH settings, for comparison with sshbench: for every
# key exchange × cipher × MAC the client supports, pipe 8 MB of zeros through
# `ssh -c CIPHER -m MAC` and time the whole ssh process (handshake included), one
# sample per combination, in a fixed order.
#
# Usage: bench/seed-style.sh SSH_CONFIG HOST [SIZE_MB] > results.tsv
# Output: kex, cipher, mac, exit code, seconds (tab-separated), then a total line.
# Runs only against the given host (the sshbench sandbox on 127.0.0.1 in bench/).
set -u
config=$1
host=$2
size=${3:-8}
start=$(date +%s.%N)
for kex in $(ssh -Q kex); do
  for cipher in $(ssh -Q cipher); do
    for mac in $(ssh -Q mac); do
      t0=$(date +%s.%N)
      dd if=/dev/zero bs=1M count="$size" 2>/dev/null |
        ssh -F "$config" -o BatchMode=yes -o KexAlgorithms="$kex" -c "$cipher" -m "$mac" "$host" 'cat > /dev/null' 2>/dev/null
      rc=$?
      t1=$(date +%s.%N)
      printf '%s\t%s\t%s\t%s\t%s\n' "$kex" "$cipher" "$mac" "$rc" "$(echo "$t1 - $t0" | bc)"
    done
  done
done
end=$(date +%s.%N)
printf 'total\t\t\t\t%s\n' "$(echo "$end - $start" | bc)"
