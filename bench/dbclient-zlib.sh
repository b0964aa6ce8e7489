#!/bin/sh
# What dbclient's compression costs: 200 MB of random data sent and received through
# dbclient, five times each, to the sandbox's sshd (compression allowed, as sshd's
# default) and to a copy of it with `Compression no`. Prints each time and the medians.
# Needs dbclient and dropbearconvert; run from the repository after `cargo build --release`.
set -eu
bin=${SSHBENCH:-target/release/sshbench}
work=$(mktemp -d)
trap 'kill $(cat "$work/sandbox.pid") $(cat "$work/nozlib.pid" 2>/dev/null) 2>/dev/null; rm -rf "$work"' 0
"$bin" sandbox > "$work/config" 2> "$work/sandbox.err" & echo $! > "$work/sandbox.pid"
while [ ! -s "$work/config" ]; do sleep 0.2; done
dir=$(dirname "$(cat "$work/config")")
port=$(awk '$1 == "Port" { print $2 }' "$dir/sshd_config")
user=$(awk '$1 == "AllowUsers" { print $2 }' "$dir/sshd_config")
port2=$((port + 1))
sed -e "s/^Port .*/Port $port2/" -e "s#^PidFile .*#PidFile $work/nozlib.pid#" \
    "$dir/sshd_config" > "$work/nozlib_config"
echo "Compression no" >> "$work/nozlib_config"
"$(awk '{ print $3; exit }' "$work/sandbox.err")" -D -e -f "$work/nozlib_config" 2> "$work/nozlib.log" &
sleep 1
mkdir -p "$work/home/.ssh"
dropbearconvert openssh dropbear "$dir/client_ed25519" "$work/home/.ssh/id_dropbear" 2> /dev/null
echo "127.0.0.1 $(cut -d' ' -f1,2 "$dir/host_ed25519.pub")" > "$work/home/.ssh/known_hosts"
head -c 200000000 /dev/urandom > "$work/random"
cp "$work/random" "$dir/home/random"
db() { HOME="$work/home" setsid dbclient -T -p "$1" -l "$user" -c aes128-ctr -m hmac-sha2-256 127.0.0.1 "$2"; }
secs() { start=$(date +%s.%N); "$@" > /dev/null; awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f\n", b - a }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
for p in "$port" "$port2"; do
    what=$([ "$p" = "$port" ] && echo "compression allowed" || echo "Compression no")
    for dir_ in send receive; do
        for i in 1 2 3 4 5; do
            if [ $dir_ = send ]; then secs db "$p" 'cat > /dev/null' < "$work/random"
            else secs db "$p" 'cat "$HOME/random"' < /dev/null; fi
        done > "$work/times"
        m=$(median < "$work/times")
        rate=$(awk -v m="$m" 'BEGIN { printf "%.1f", 200 / m }')
        echo "$what $dir_: $(tr '\n' ' ' < "$work/times")| median $m s = $rate MB/s"
    done
done
