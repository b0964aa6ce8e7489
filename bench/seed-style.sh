#!/bin/sh
# The classic way to benchmark SSH settings, for comparison with sshbench: for every
# key exchange × cipher × MAC the client supports, pipe 8 MB of zeros through
# `ssh -c CIPHER -m MAC` and time the whole ssh process (handshake included), one
# sample per combination, in a fixed order.
#
# Usage: bench/seed-style.sh SSH_CONFIG HOST [SIZE_MB] > results.tsv
# Output: kex, cipher, mac, exit code, seconds (tab-separated), then a total line.
#
# Narrower sweeps (bench/run.sh --quick): SEED_KEXES, SEED_CIPHERS, SEED_MACS replace
# the `ssh -Q` lists (space-separated).
# Runs only against the given host (the sshbench sandbox on 127.0.0.1 in bench/).
set -u
config=$1
host=$2
size=${3:-8}

# The clock is read just before and after each `dd | ssh`; the seconds are worked out at
# the end, so the loop itself starts no other process.
start=$(date +%s.%N)
for kex in ${SEED_KEXES:-$(ssh -Q kex)}; do
  for cipher in ${SEED_CIPHERS:-$(ssh -Q cipher)}; do
    for mac in ${SEED_MACS:-$(ssh -Q mac)}; do
      t0=$(date +%s.%N)
      dd if=/dev/zero bs=1M count="$size" 2>/dev/null |
        ssh -F "$config" -o BatchMode=yes -o KexAlgorithms="$kex" -c "$cipher" -m "$mac" "$host" 'cat > /dev/null' 2>/dev/null
      rc=$?
      t1=$(date +%s.%N)
      printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$kex" "$cipher" "$mac" "$rc" "$t0" "$t1"
    done
  done
done | awk -F'\t' -v OFS='\t' '{ print $1, $2, $3, $4, $6 - $5 }'
end=$(date +%s.%N)
printf 'total\t\t\t\t%s\n' "$(awk "BEGIN { print $end - $start }")"
