#!/usr/bin/env bash
# How fsmine build's time and peak memory grow with the log: generates logs
# of about 1M, 3M and 10M events (fsmine gen --seed 3) and times build on
# each, RUNS times, printing medians. Usage, from the repository:
#
#   bash testdata/bench/curve.sh [RUNS]
#
# RUNS defaults to 3. Needs GNU time (/usr/bin/time) and about 3.5 GB of
# disk under TMPDIR.
set -euo pipefail
runs=${1:-3}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go build -o "$dir/fsmine" .
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo "$(nproc) cores; medians of $runs runs"
for sessions in 93500 280500 935000; do
  "$dir/fsmine" gen -n "$sessions" --seed 3 -o "$dir/log.jsonl"
  events=$(wc -l < "$dir/log.jsonl")
  bytes=$(wc -c < "$dir/log.jsonl")
  : > "$dir/times"
  for _ in $(seq "$runs"); do
    /usr/bin/time -f "%e %M" "$dir/fsmine" build -q "$dir/log.jsonl" -o "$dir/m.json" --dot "$dir/m.dot" 2>>"$dir/times"
  done
  t=$(awk '{print $1}' "$dir/times" | median)
  m=$(awk '{print $2}' "$dir/times" | median)
  awk -v e="$events" -v b="$bytes" -v t="$t" -v m="$m" \
    'BEGIN { printf "%6.2f M events  %5.2f GB  median %6.2f s  %5.0f MB peak RSS  %4.2f M events/s\n", e/1e6, b/1e9, t, m/1024, e/t/1e6 }'
  rm "$dir/log.jsonl"
done
