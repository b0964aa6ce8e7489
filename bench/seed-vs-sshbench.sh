#!/bin/sh
# Wall time of a default `sshbench run` (connect + send + receive, every negotiable
# suite, 3 rounds + warm-up) against the classic send-only sweep of every
# kex × cipher × MAC combination (bench/seed-style.sh), measured back to back on the
# local sandbox. Prints both times and their ratio.
#
# Usage: bench/seed-vs-sshbench.sh [SSHBENCH_BINARY]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../target/release/sshbench}
work=$(mktemp -d)
trap 'kill "$sb" 2>/dev/null || true; wait "$sb" 2>/dev/null || true; rm -rf "$work"' 0

"$bin" sandbox > "$work/config" 2>/dev/null &
sb=$!
while [ ! -s "$work/config" ]; do sleep 0.1; done
config=$(head -n 1 "$work/config")

t0=$(date +%s.%N)
"$here/seed-style.sh" "$config" sshbench-sandbox > "$work/seed.tsv"
t1=$(date +%s.%N)
kill "$sb"; wait "$sb" 2>/dev/null || true

"$bin" run -q --db "$work/db.sqlite" > "$work/sshbench.txt"
t2=$(date +%s.%N)

seed=$(echo "$t1 - $t0" | bc)
ours=$(echo "$t2 - $t1" | bc)
combos=$(grep -vc '^total' "$work/seed.tsv")
ok=$(awk -F'\t' '$4 == 0' "$work/seed.tsv" | wc -l)
samples=$(sqlite3 "$work/db.sqlite" 'select count(*) from samples' 2>/dev/null || echo '?')
echo "seed-style send sweep: $combos combinations ($ok accepted), $seed s"
echo "sshbench run (connect+send+receive): $samples samples, $ours s"
echo "ratio sshbench/seed-style: $(echo "scale=2; $ours / $seed" | bc)"
"$bin" report --db "$work/db.sqlite" -o "$work/report.html" 2>/dev/null
echo "HTML report of that run: $(wc -c < "$work/report.html") bytes"
"$bin" summary --db "$work/db.sqlite" > "${SSHBENCH_SUMMARY:-/dev/null}"
