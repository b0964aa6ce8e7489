#!/bin/sh
# A fleet's kinds (`--fleet-full`) on real servers: N sandbox sshds on 127.0.0.1, all of
# one kind. Question: does measuring later hosts of a kind by its contenders cut the
# fleet's time to 0.35 × or less of measuring every host in full, with the same
# `recommend --fleet` block? And is a host made different (its sshd limited to a
# quarter of a core, `sandbox --cpu 0.25`, root) detected and measured in full?
#
# Usage: bench/fleet_kinds.sh   (MODES, N to change the design, ROUNDS=K for a fixed
# design instead of the race; BENCH_KEEP=DIR keeps the databases; ODD_ONLY=1 runs the
# third phase alone). One host at a time (--jobs 1). Prints a markdown table.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
MODES=${MODES:-connect,send,receive}
ROUNDS=${ROUNDS:-}
N=${N:-12}
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }
now() { date +%s.%N; }
(cd "$root" && cargo build --release --quiet --bin sshbench)
B="$root/target/release/sshbench"
dir=${BENCH_KEEP:-$(mktemp -d)}
mkdir -p "$dir"
pids=""
cleanup() { for p in $pids; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT INT TERM

# Start sandbox $1 (extra options after it); append its ssh_config as Host fleet$1.
start() {
  i=$1; shift
  "$B" sandbox "$@" > "$dir/sb$i.out" 2> "$dir/sb$i.err" &
  pids="$pids $!"
  while ! head -n1 "$dir/sb$i.out" 2>/dev/null | grep -q .; do sleep 0.2; done
  sed "s/^Host sshbench-sandbox\$/Host fleet$i/" "$(head -n1 "$dir/sb$i.out")" >> "$dir/ssh_config"
}

fleet() { # $1: database, then run options
  db=$1; shift
  t0=$(now)
  "$B" run -F "$dir/ssh_config" --hosts "$dir/hosts" --jobs 1 --mode "$MODES" \
    ${ROUNDS:+--rounds "$ROUNDS"} --db "$dir/$db" -q "$@" > "$dir/$db.out" 2> "$dir/$db.err" || true
  awk "BEGIN { printf \"%.1f\", $(now) - $t0 }"
}

block() { "$B" recommend --fleet --db "$dir/$1" | sed -n '/^# ~/,/^$/p' | sed '/^How the hosts/,$d'; }

: > "$dir/ssh_config"; : > "$dir/hosts"
for i in $(seq 1 "$N"); do echo "fleet$i" >> "$dir/hosts"; done
if [ -z "${ODD_ONLY:-}" ]; then
  for i in $(seq 1 "$N"); do start "$i"; done
  log "$N sandboxes up; grouped fleet (--fleet-full 3)"
  grouped=$(fleet grouped.sqlite)
  log "grouped: $grouped s; every host in full (--fleet-full all)"
  all=$(fleet all.sqlite --fleet-full all)
  log "all: $all s"
  same=no; block grouped.sqlite > "$dir/b1"; block all.sqlite > "$dir/b2"
  cmp -s "$dir/b1" "$dir/b2" && same=yes
  # The last host made different: its sshd limited to a quarter of a core.
  cleanup; pids=""
  : > "$dir/ssh_config"
fi
for i in $(seq 1 $((N - 1))); do start "$i"; done
start "$N" --cpu 0.25
log "host $N limited to 0.25 cores; grouped fleet"
odd=$(fleet odd.sqlite)
measured=$(grep "fleet$N " "$dir/odd.sqlite.out" | sed 's/  */ /g')
why=$(grep "^fleet$N was measured" "$dir/odd.sqlite.out" || echo "(not detected)")
echo "| fleet of $N sandboxes, --mode $MODES ${ROUNDS:+--rounds $ROUNDS }(race unless --rounds), --jobs 1 | figure |"
echo "| --- | --- |"
if [ -z "${ODD_ONLY:-}" ]; then
  echo "| grouped (--fleet-full 3) | $grouped s |"
  echo "| every host in full (--fleet-full all) | $all s |"
  echo "| ratio | $(awk "BEGIN { printf \"%.3f\", $grouped / $all }") |"
  echo "| same recommend --fleet block | $same |"
fi
echo "| host $N with sshd at 0.25 cores, grouped | $odd s; $measured |"
echo
echo "$why"
if [ "${same:-yes}" = no ]; then echo; echo '```diff'; diff "$dir/b1" "$dir/b2" || true; echo '```'; fi
