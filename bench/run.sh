#!/bin/sh
# The benchmark of sshbench itself, on the local sandbox: accuracy against long plain-ssh
# transfers, precision of two runs (and of the classic method), speed against the classic
# send-only sweep, sshbench's own overhead, and the server verdicts of the slow-machine
# lab. Prints the machine, then one markdown table (the source of BENCHMARKS.md).
#
# Usage: bench/run.sh [--quick]
#   --quick: a few suites instead of all, shorter references (under 5 minutes): a check
#            that everything works; its figures are not the benchmark (BENCHMARKS.md).
# Needs what the README lists for the tests; the lab rows need root (else "skipped").
# Talks only to the sandbox sshd on 127.0.0.1 (and the lab's own network namespace).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
quick=0
case "${1:-}" in
  --quick) quick=1 ;;
  "") ;;
  *) echo "usage: bench/run.sh [--quick]" >&2; exit 2 ;;
esac

log() { echo "[$(date +%H:%M:%S)] $*" >&2; }
now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.${2:-2}f\", $1 }"; }

started=$(now)
log "building (release)"
(cd "$root" && cargo build --release --quiet --bin sshbench --example benchkit)
built=$(now)
bin=$root/target/release/sshbench
kit=$root/target/release/examples/benchkit
work=$(mktemp -d)
sb=
cleanup() {
  if [ -n "$sb" ]; then kill "$sb" 2>/dev/null || true; wait "$sb" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup 0
trap 'exit 130' INT TERM
db=$work/db.sqlite

# The suites of the accuracy rows: fast to slow.
acc_suites="aes128-gcm@openssh.com:-
chacha20-poly1305@openssh.com:-
aes256-ctr:hmac-sha2-256-etm@openssh.com
3des-cbc:hmac-sha1"
if [ $quick = 1 ]; then
  filters="--kex curve25519-sha256,ecdh-sha2-nistp256 --ciphers aes128-gcm@openssh.com,chacha20-poly1305@openssh.com,aes256-ctr,3des-cbc --macs hmac-sha2-256-etm@openssh.com,hmac-sha1"
  export SEED_KEXES="curve25519-sha256 curve25519-sha256@libssh.org"
  export SEED_CIPHERS="aes128-gcm@openssh.com chacha20-poly1305@openssh.com aes256-ctr 3des-cbc"
  export SEED_MACS="hmac-sha2-256-etm@openssh.com hmac-sha1"
  ref_bytes=$((256 << 20)); ref_seconds=10
else
  filters=
  ref_bytes=$((1 << 30)); ref_seconds=30
fi

# 1. Speed (and the first run for precision, accuracy and overhead): an sshbench run
#    of connect + send + receive, every negotiable suite, default settings.
log "sshbench run A: connect, send, receive ${filters:+(quick subset)}"
# shellcheck disable=SC2086 # $filters is a list of options
"$kit" watch "$work/A.usage" -- "$bin" run -q --db "$db" --mode connect,send,receive $filters > /dev/null
read -r a_wall a_cpu a_peak < "$work/A.usage"
"$kit" info --db "$db" --run 1 > "$work/info"

# The sandbox for the classic method and the references.
"$bin" sandbox > "$work/sandbox" 2> "$work/sandbox.err" &
sb=$!
while [ ! -s "$work/sandbox" ]; do
  kill -0 "$sb" 2>/dev/null || { cat "$work/sandbox.err" >&2; exit 1; }
  sleep 0.1
done
config=$(head -n 1 "$work/sandbox")
host=sshbench-sandbox
# The sandbox sshd runs on the upper half of the CPUs, as in sshbench's runs; the
# script's own clients (the classic sweep, the references) run on the lower half, where
# sshbench runs its ssh processes.
client_cpus=$("$kit" client-cpus)
placement=${client_cpus:+"clients on CPU $client_cpus, sshd on the others"}
on_client() {
  if [ -n "$client_cpus" ]; then taskset -c "$client_cpus" "$@"; else "$@"; fi
}

log "classic send-only sweep of every kex × cipher × MAC ${filters:+(quick subset)}"
t0=$(now)
on_client "$here/seed-style.sh" "$config" "$host" > "$work/seed-full.tsv"
t1=$(now)
seed_wall=$(calc "$t1 - $t0" 1)
seed_combos=$(grep -vc '^total' "$work/seed-full.tsv" || true)

# 2. Precision: a second sshbench run (send, default settings); and the classic method
#    twice: the sweep above went through every cipher × MAC once with
#    curve25519-sha256 and once with curve25519-sha256@libssh.org, the same algorithm
#    under two names, so those are two independent passes of the same measurements. Its
#    suites are taken as sshbench's (an AEAD cipher with the sweep's first MAC only).
"$kit" suites --db "$db" --run 1 --mode send | cut -f1,2 > "$work/A.send.rate"
log "sshbench run B: send"
# shellcheck disable=SC2086
"$bin" run -q --db "$db" --mode send $filters > /dev/null
"$kit" suites --db "$db" --run 2 --mode send | cut -f1,2 > "$work/B.send.rate"
r=0
for kex in curve25519-sha256 curve25519-sha256@libssh.org; do
  r=$((r + 1))
  # 8 MB (8 MiB, dd bs=1M) per suite: bytes per second over the whole ssh process.
  awk -F'\t' -v kex="$kex" '
    $1 == kex && $4 == 0 {
      aead = $2 ~ /gcm|poly1305/
      key = $2 "+" (aead ? "-" : $3)
      if (!(key in seen)) { seen[key] = 1; printf "%s\t%.1f\n", key, 8388608 / $5 }
    }' "$work/seed-full.tsv" > "$work/seed$r.rate"
done
"$kit" rank "$work/A.send.rate" "$work/B.send.rate" > "$work/p.ours"
"$kit" rank "$work/seed1.rate" "$work/seed2.rate" > "$work/p.seed"
read -r p_n p_rho p_rel < "$work/p.ours"
read -r s_n s_rho s_rel < "$work/p.seed"

# 3. Accuracy: run A's figures of four suites against one long plain-ssh transfer per
#    suite and direction, timed from the remote ready line: 1 GiB or 30 s, whichever
#    comes first.
for mode in send receive; do
  "$kit" suites --db "$db" --run 1 --mode "$mode" > "$work/A.$mode.all"
done
acc_rows=
for s in $acc_suites; do
  cipher=${s%%:*}; mac=${s#*:}
  for mode in send receive; do
    line=$(awk -F'\t' -v k="$cipher+$mac" '$1 == k' "$work/A.$mode.all")
    if [ -z "$line" ]; then
      acc_rows="$acc_rows| accuracy | $mode $cipher + $mac | not measured by sshbench | |
"
      continue
    fi
    ours=$(echo "$line" | cut -f2)
    ci=$(echo "$line" | cut -f3)
    n=$(echo "$line" | cut -f4)
    # A fast suite's reference lasts 1-3 s and is a sample too: it is taken three times
    # and the median used. A time-limited one (a slow suite, 30 s) is taken once.
    : > "$work/refs"
    for try in 1 2 3; do
      log "reference: $mode $cipher + $mac ($try)"
      on_client "$kit" reference --config "$config" --host "$host" --cipher "$cipher" --mac "$mac" \
        --mode "$mode" --bytes "$ref_bytes" --seconds "$ref_seconds" >> "$work/refs"
      [ "$(tail -n 1 "$work/refs" | cut -f1)" -lt "$ref_bytes" ] && break
    done
    # moved total steady steady_bytes per line -> median rate, median steady rate, the
    # rates (MB/s), the median transfer's MiB and seconds.
    read -r ref ref_steady ref_all ref_mib ref_s <<EOF_REF
$(awk -F'\t' '{ r[NR] = $1 / $2; st[NR] = $4 / $3; mib[NR] = $1 / 1048576; s[NR] = $2 }
  END {
    n = NR
    for (i = 1; i <= n; i++) { o[i] = i; so[i] = st[i] }
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) {
      if (r[o[j]] < r[o[i]]) { t = o[i]; o[i] = o[j]; o[j] = t }
      if (so[j] < so[i]) { t = so[i]; so[i] = so[j]; so[j] = t }
    }
    m = o[int((n + 1) / 2)]
    all = ""
    for (i = 1; i <= n; i++) all = all (i > 1 ? "," : "") sprintf("%.0f", r[i] / 1e6)
    printf "%.0f %.0f %s %.0f %.1f\n", r[m], so[int((n + 1) / 2)], all, mib[m], s[m]
  }' "$work/refs")
EOF_REF
    tries=$(wc -l < "$work/refs")
    if [ "$tries" -gt 1 ]; then
      ref_what="median of $tries transfers of $ref_mib MiB: $(echo "$ref_all" | sed 's/,/, /g') MB/s"
    else
      ref_what="$ref_mib MiB in $ref_s s"
    fi
    acc_rows="$acc_rows| accuracy | $mode $cipher + $(echo "$mac" | sed 's/^-$/(implicit)/') | sshbench $(calc "$ours / 1e6" 1) ± $(calc "$ci / 1e6" 1) MB/s (n = $n); reference $(calc "$ref / 1e6" 1) MB/s ($ref_what) | **$(calc "$ours / $ref" 3)** (vs the reference's last 3/4: $(calc "$ours / $ref_steady" 3)) |
"
  done
done
kill "$sb" 2>/dev/null || true; wait "$sb" 2>/dev/null || true; sb=

# 4. Overhead.
log "payload generator"
"$kit" payload > "$work/payload"
read -r pay_mem pay_pipe < "$work/payload"

# 5. Server verdicts in the slow-machine lab (Linux, root).
if [ "$(id -u)" = 0 ]; then
  log "lab: sshd limited to a quarter core"
  "$bin" run -q --db "$work/lab.sqlite" --mode send --ciphers aes128-gcm@openssh.com \
    --sandbox-cpu 0.25 --sample-time 600ms > /dev/null
  cpu_row=$("$kit" suites --db "$work/lab.sqlite" --run 1 --mode send)
  log "lab: a 16 Mbit/s link"
  "$bin" run -q --db "$work/lab.sqlite" --mode send,receive --ciphers aes128-gcm@openssh.com \
    --sandbox-rate 16mbit --size 2M > /dev/null
  link_send=$("$kit" suites --db "$work/lab.sqlite" --run 2 --mode send)
  link_recv=$("$kit" suites --db "$work/lab.sqlite" --run 2 --mode receive)
  verdict() { echo "$1" | awk -F'\t' '{ printf "%s (%.1f MB/s)", $5, $2 / 1e6 }'; }
  lab_cpu=$(verdict "$cpu_row")
  lab_link="send $(verdict "$link_send"), receive $(verdict "$link_recv")"
else
  lab_cpu="skipped (needs root)"
  lab_link="skipped (needs root)"
fi

# The machine and the table.
cpu_model=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
cat <<EOF
## $(date -u +%Y-%m-%d) $( [ $quick = 1 ] && echo "(--quick)")

- Machine: ${cpu_model:-unknown CPU}, $(getconf _NPROCESSORS_ONLN) cores, $(uname -sr); sandbox: ${placement:-both ends on every CPU (not split)}
- $(cat "$work/info")
- Command: \`bench/run.sh$( [ $quick = 1 ] && echo " --quick")\`, $(calc "($(now) - $started) / 60" 1) minutes in all, of which $(calc "($built - $started) / 60" 1) building

| figure | what | measured | result |
| --- | --- | --- | ---: |
${acc_rows}| precision | sshbench: two runs' send rankings ($p_n suites) | Spearman rho; median relative difference per suite | **$p_rho**; $(calc "$p_rel * 100" 1)% |
| precision | classic method (8 MB of zeros per suite, whole ssh process timed), twice ($s_n suites) | Spearman rho; median relative difference per suite | **$s_rho**; $(calc "$s_rel * 100" 1)% |
| speed | sshbench run A (connect + send + receive, warm-up + 3 rounds) vs the classic send-only sweep ($seed_combos combinations) | $(calc "$a_wall" 0) s vs $seed_wall s | **$(calc "$a_wall / $seed_wall" 2)** |
| overhead | payload generator (1 MiB block, repeated) | into memory; through a pipe | $pay_mem GB/s; $pay_pipe GB/s |
| overhead | sshbench's own CPU during run A (ssh processes excluded) | $(calc "$a_cpu" 1) CPU s over $(calc "$a_wall" 0) s | **$(calc "$a_cpu / $a_wall * 100" 1)%** |
| overhead | sshbench's peak memory during run A | resident | **$(calc "$a_peak / 1024" 1) MiB** |
| verdict | sandbox sshd under a 0.25-core CPU quota, AES-GCM send | bound | $lab_cpu |
| verdict | sandbox behind a 16 Mbit/s link (tc tbf), AES-GCM | bound | $lab_link |
EOF
log "done"
