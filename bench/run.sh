#!/bin/sh
# The benchmark of sshbench itself, on the local sandbox: accuracy against long plain-ssh
# transfers, precision of two runs (and of the classic method), speed against the classic
# send-only sweep, sshbench's own overhead, and the server verdicts of the slow-machine
# lab. Prints the machine, then one markdown table (the source of BENCHMARKS.md).
#
# Usage: bench/run.sh [--quick]
#   --quick: a few suites instead of all, shorter references (under 5 minutes): a check
#            that everything works; its figures are not the benchmark (BENCHMARKS.md).
# BENCH_KEEP=DIR keeps the runs' databases there (to look into a run's samples later).
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
  if [ -n "${BENCH_KEEP:-}" ]; then mkdir -p "$BENCH_KEEP" && cp "$work"/*.sqlite "$BENCH_KEEP"/ 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup 0
trap 'exit 130' INT TERM
db=$work/db.sqlite

# The suites of the accuracy rows (cipher:MAC:speed; a slow suite's reference runs
# longer). The full bench has every cipher family and MAC family the client lists at least
# once: the rows together bound a bias shared by the suites, and each suite's own
# departure from its references is scatter between rows, which more rows narrow
# (bench/results/notebook.md, "Sixteen accuracy rows").
acc_suites="aes128-gcm@openssh.com:-:fast
chacha20-poly1305@openssh.com:-:fast
aes256-ctr:hmac-sha2-256-etm@openssh.com:fast
3des-cbc:hmac-sha1:slow"
if [ $quick = 1 ]; then
  filters="--kex curve25519-sha256,ecdh-sha2-nistp256 --ciphers aes128-gcm@openssh.com,chacha20-poly1305@openssh.com,aes256-ctr,3des-cbc --macs hmac-sha2-256-etm@openssh.com,hmac-sha1"
  export SEED_KEXES="curve25519-sha256 curve25519-sha256@libssh.org"
  export SEED_CIPHERS="aes128-gcm@openssh.com chacha20-poly1305@openssh.com aes256-ctr 3des-cbc"
  export SEED_MACS="hmac-sha2-256-etm@openssh.com hmac-sha1"
  ref_bytes=$((256 << 20)); ref_seconds=3; ref_slow_seconds=5; acc_blocks=2; acc_rounds=2
else
  filters=
  acc_suites="$acc_suites
aes128-ctr:umac-64-etm@openssh.com:fast
aes256-gcm@openssh.com:-:fast
aes192-cbc:hmac-sha2-512:fast
aes128-cbc:umac-128@openssh.com:fast"
  ref_bytes=$((16 << 30)); ref_seconds=4; ref_slow_seconds=8; acc_blocks=6; acc_rounds=6
fi

# 1. Speed (and the first run for precision and overhead): an sshbench run
#    of connect + send + receive, every negotiable suite, default settings.
log "sshbench run A: connect, send, receive ${filters:+(quick subset)}"
# shellcheck disable=SC2086 # $filters is a list of options
"$kit" watch "$work/A.usage" -- "$bin" run -q --db "$db" --mode connect,send,receive $filters > /dev/null
read -r a_wall a_cpu a_peak < "$work/A.usage"
"$kit" info --db "$db" --run 1 > "$work/info"
# 1b. The default run: every mode (connect, send, receive, echo), default settings,
#     watched the same way. Decisiveness per mode comes from it: the suites `show` marks
#     `≈ best` and those of them 10% or more behind the best, and how the race stopped
#     its suites.
log "sshbench run D: the default four modes ${filters:+(quick subset)}"
# shellcheck disable=SC2086
"$kit" watch "$work/D.usage" -- "$bin" run -q --db "$db" $filters > /dev/null
read -r d_wall d_cpu d_peak < "$work/D.usage"
"$kit" ties --db "$db" --run 2 > "$work/D.ties"
ties_rows=$(awk -F'\t' '{
  printf "| decisiveness | run D %s: suites marked ≈ best (%d suites; the race: %d dropped, %d separated, %d equal within 5%%, %d still racing at the budget, %d at --max-rounds) | tied; of them 10%% or more behind the best; median 95%% interval | %d; **%d**; ±%.1f%% |\n", $1, $2, $6, $7, $9, $8, $10, $3, $4, $5 * 100
}' "$work/D.ties")

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
"$kit" suites --db "$db" --run 3 --mode send | cut -f1,2 > "$work/B.send.rate"
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

# 3. Accuracy: per suite, $acc_blocks short sshbench runs of that suite alone (send and
#    receive, default settings but $acc_rounds rounds each), each between long plain-ssh
#    transfers per direction (the references), timed from the remote ready line: 4 s
#    each (8 s for a slow suite, which moves far less); the 16 GiB cap is only a bound,
#    so that every suite's reference lasts as long and holds as small a share of its
#    connection's slower start (bench/results/notebook.md, "The fastest reference ended early"). The
#    order is refs, run, refs, run, ..., refs, the two directions' references in turn
#    first, so both are centred on the runs. A block is one run against the mean of the
#    references on either side of it, each over its last three quarters (its first holds
#    the connection's start, which sshbench's window leaves out); the row's ratio is the
#    geometric mean of its blocks'. Why blocks: this machine's speed drifts by more than ±5% within tens of
#    seconds, so a run and its references should be seconds apart, and several such pairs
#    per row average out the spells in between. Six rounds per run rather than two: a
#    block's scatter was mostly its run's few samples (bench/results/notebook.md, "More rounds per
#    block"). Run A's figure (3 samples, minutes earlier) is shown beside it.
for mode in send receive; do
  "$kit" suites --db "$db" --run 1 --mode "$mode" > "$work/A.$mode.all"
done
acc_db=$work/accuracy.sqlite
acc_run=0
acc_rows=
: > "$work/ratios"; : > "$work/ratios.steady"
# reference MODE CIPHER MAC SECONDS > file: one long transfer (bytes, seconds, steady
# seconds, steady bytes).
reference() {
  log "reference: $1 $2 + $3"
  on_client "$kit" reference --config "$config" --host "$host" --cipher "$2" --mac "$3" \
    --mode "$1" --bytes "$ref_bytes" --seconds "$4"
}
# references B CIPHER MAC SECONDS: the references after block B (0: before the first),
# the directions in turn first.
references() {
  if [ $(($1 % 2)) = 0 ]; then set -- "$@" send receive; else set -- "$@" receive send; fi
  reference "$5" "$2" "$3" "$4" > "$work/ref.$5.$1"
  reference "$6" "$2" "$3" "$4" > "$work/ref.$6.$1"
}
# rate FILE [steady]: a reference's bytes per second (over its last three quarters).
rate() {
  read -r moved total steady steady_bytes < "$1"
  if [ -n "${2:-}" ]; then calc "$steady_bytes / $steady" 0; else calc "$moved / $total" 0; fi
}
# around MODE B [steady]: the mean rate of the references on either side of block B.
around() {
  calc "($(rate "$work/ref.$1.$(($2 - 1))" ${3:-}) + $(rate "$work/ref.$1.$2" ${3:-})) / 2" 0
}
# ratios FILE: the file's ratios as "a, b, c".
ratios() { awk '{ printf "%s%.3f", (NR > 1 ? ", " : ""), $1 }' "$1"; }
for s in $acc_suites; do
  cipher=${s%%:*}; rest=${s#*:}; mac=${rest%%:*}; speed=${rest#*:}
  seconds=$ref_seconds
  [ "$speed" = slow ] && seconds=$ref_slow_seconds
  first_run=$((acc_run + 1))
  references 0 "$cipher" "$mac" "$seconds"
  b=0
  while [ $b -lt "$acc_blocks" ]; do
    b=$((b + 1))
    log "accuracy: sshbench run $b of $cipher + $mac"
    acc_run=$((acc_run + 1))
    # shellcheck disable=SC2046 # an optional --macs pair
    "$bin" run -q --db "$acc_db" --mode send,receive --rounds "$acc_rounds" --ciphers "$cipher" \
      $( [ "$mac" = - ] || echo "--macs $mac") > /dev/null
    references $b "$cipher" "$mac" "$seconds"
  done
  for mode in send receive; do
    : > "$work/blocks"; : > "$work/blocks.steady"; : > "$work/refs"
    sum=0; n=0; missing=
    b=0
    while [ $b -lt "$acc_blocks" ]; do
      b=$((b + 1))
      line=$("$kit" suites --db "$acc_db" --run $((first_run + b - 1)) --mode "$mode" |
        awk -F'\t' -v k="$cipher+$mac" '$1 == k')
      [ -n "$line" ] || { missing=1; break; }
      ours=$(echo "$line" | cut -f2)
      k=$(echo "$line" | cut -f4)
      sum=$(calc "$sum + $ours * $k" 0); n=$((n + k))
      echo "$(calc "$ours / $(around "$mode" $b)" 4)" >> "$work/blocks"
      echo "$(calc "$ours / $(around "$mode" $b steady)" 4)" >> "$work/blocks.steady"
    done
    if [ -n "$missing" ] || [ "$n" = 0 ]; then
      acc_rows="$acc_rows| accuracy | $mode $cipher + $mac | not measured by sshbench | |
"
      continue
    fi
    b=0
    : > "$work/refs.steady"
    while [ $b -le "$acc_blocks" ]; do
      echo "$(rate "$work/ref.$mode.$b")" >> "$work/refs"
      echo "$(rate "$work/ref.$mode.$b" steady)" >> "$work/refs.steady"
      b=$((b + 1))
    done
    ours=$(calc "$sum / $n" 0)
    ref_mean=$(awk '{ s += $1 } END { printf "%.0f", s / NR }' "$work/refs")
    ref_steady=$(awk '{ s += $1 } END { printf "%.0f", s / NR }' "$work/refs.steady")
    ref_low=$(sort -n "$work/refs" | head -n 1); ref_high=$(sort -n "$work/refs" | tail -n 1)
    ratio_whole=$("$kit" pool "$work/blocks" | cut -f2)
    read -r _ ratio ratio_low ratio_high _ <<EOF
$("$kit" pool "$work/blocks.steady")
EOF
    a_line=$(awk -F'\t' -v k="$cipher+$mac" '$1 == k' "$work/A.$mode.all")
    if [ -n "$a_line" ]; then
      a_ours=$(echo "$a_line" | cut -f2)
      a_n=$(echo "$a_line" | cut -f4)
      # n = 0: run A did not measure the pair but summed it (its cipher's and MAC's).
      [ "$a_n" = 0 ] && a_n=sum || a_n="n = $a_n"
      a_what="; run A ($a_n): $(calc "$a_ours / 1e6" 1) MB/s, $(calc "$a_ours / $ref_steady" 3)"
    else
      a_what=
    fi
    echo "$ratio_whole" >> "$work/ratios"
    echo "$ratio" >> "$work/ratios.steady"
    acc_rows="$acc_rows| accuracy | $mode $cipher + $(echo "$mac" | sed 's/^-$/(implicit)/') | sshbench $(calc "$ours / 1e6" 1) MB/s ($acc_blocks runs, n = $n); references $(calc "$ref_mean / 1e6" 1) MB/s ($((acc_blocks + 1)) transfers of $seconds s or $((ref_bytes >> 20)) MiB: $(calc "$ref_low / 1e6" 1)-$(calc "$ref_high / 1e6" 1); over their last 3/4 $(calc "$ref_steady / 1e6" 1)); the blocks $(ratios "$work/blocks.steady")$a_what | **$(calc "$ratio" 3)** (the blocks' 95% interval: $(calc "$ratio_low" 3)-$(calc "$ratio_high" 3); vs the whole references: $(calc "$ratio_whole" 3)) |
"
  done
done
kill "$sb" 2>/dev/null || true; wait "$sb" 2>/dev/null || true; sb=
# The rows taken together: a bias of sshbench's moves every row one way, while the
# machine's scatter of single rows mostly cancels out and widens the interval (95%, from
# Student's t on the logarithms of the ratios). The figure is against the references'
# last three quarters: a reference's first quarter holds its connection's start, which
# sshbench's window leaves out by design and which costs a 4 s send 2-3% (bench/results/notebook.md,
# "Send's references start slow" and "The references' start left out"); beside it the
# same against the whole references.
if pooled=$("$kit" pool "$work/ratios.steady"); then
  read -r pool_n pool_mean pool_low pool_high pool_within <<EOF
$pooled
EOF
  whole_what=
  if pooled=$("$kit" pool "$work/ratios"); then
    read -r _ wh_mean wh_low wh_high _ <<EOF
$pooled
EOF
    whole_what="; vs the whole references: $(calc "$wh_mean" 3) ($(calc "$wh_low" 3)-$(calc "$wh_high" 3))"
  fi
  acc_rows="$acc_rows| accuracy | the $pool_n rows above taken together, against the references' last 3/4 | geometric mean of the ratios, 95% interval; rows within ±5% | **$(calc "$pool_mean" 3)** ($(calc "$pool_low" 3)-$(calc "$pool_high" 3)); $pool_within of $pool_n$whole_what |
"
fi

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
${ties_rows}
| speed | sshbench run A (connect + send + receive, default settings: warm-ups, 3 rounds and the race) vs the classic send-only sweep ($seed_combos combinations) | $(calc "$a_wall" 0) s vs $seed_wall s | **$(calc "$a_wall / $seed_wall" 2)** |
| speed | sshbench run D (the default four modes) vs the classic send-only sweep | $(calc "$d_wall" 0) s vs $seed_wall s | **$(calc "$d_wall / $seed_wall" 2)** |
| overhead | payload generator (1 MiB block, repeated) | into memory; through a pipe | $pay_mem GB/s; $pay_pipe GB/s |
| overhead | sshbench's own CPU during run A; run D (ssh processes excluded) | $(calc "$a_cpu" 1) CPU s over $(calc "$a_wall" 0) s; $(calc "$d_cpu" 1) over $(calc "$d_wall" 0) s | **$(calc "$a_cpu / $a_wall * 100" 1)%; $(calc "$d_cpu / $d_wall * 100" 1)%** |
| overhead | sshbench's peak memory during run A; run D | resident | **$(calc "$a_peak / 1024" 1) MiB; $(calc "$d_peak / 1024" 1) MiB** |
| verdict | sandbox sshd under a 0.25-core CPU quota, AES-GCM send | bound | $lab_cpu |
| verdict | sandbox behind a 16 Mbit/s link (tc tbf), AES-GCM | bound | $lab_link |
EOF
log "done"
