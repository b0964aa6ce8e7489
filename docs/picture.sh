#!/bin/sh
# Makes docs/report.png, the README's picture: the top of the report page of a stored
# run, as headless Chromium (Debian: chromium) draws it. Usage: docs/picture.sh DB
set -eu
db=${1:?usage: docs/picture.sh DB}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cargo run -q --release -- report --db "$db" -o "$tmp/report.html"
# Chromium writes under $HOME too: a throwaway one.
HOME="$tmp" chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --no-first-run --disable-background-networking --user-data-dir="$tmp/profile" \
    --window-size=1000,1250 --screenshot="$tmp/shot.png" "file://$tmp/report.html" 2>/dev/null
cp "$tmp/shot.png" docs/report.png
ls -l docs/report.png
