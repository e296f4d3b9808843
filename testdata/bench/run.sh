#!/usr/bin/env bash
# Times fsmine build and check against the baseline loop on a generated log,
# several runs each, and prints medians and ratios. Usage, from the repository:
#
#   bash testdata/bench/run.sh [SESSIONS] [RUNS]
#
# SESSIONS defaults to 93500 (about 1M events), RUNS to 5. Needs GNU time
# (/usr/bin/time, Debian package "time").
set -euo pipefail
sessions=${1:-93500}
runs=${2:-5}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go build -o "$dir/fsmine" .
go build -o "$dir/baseline" ./testdata/baseline
"$dir/fsmine" gen -n "$sessions" --seed 3 -o "$dir/log.jsonl"
"$dir/fsmine" gen -n 2000 --seed 5 --drift 0.05 -o "$dir/train.jsonl"
"$dir/fsmine" build -q "$dir/train.jsonl" -o "$dir/train.json"
events=$(wc -l < "$dir/log.jsonl")
bytes=$(wc -c < "$dir/log.jsonl")
echo "log: $events events, $bytes bytes, $(nproc) cores"

measure() { # name command...: prints "name seconds kilobytes" per run
  local name=$1; shift
  for _ in $(seq "$runs"); do
    /usr/bin/time -f "$name %e %M" "$@" >/dev/null 2>>"$dir/times" || true
  done
}
measure baseline "$dir/baseline" "$dir/log.jsonl"
measure build "$dir/fsmine" build -q "$dir/log.jsonl" -o "$dir/m.json" --dot "$dir/m.dot"
measure check "$dir/fsmine" check --model "$dir/train.json" --format json "$dir/log.jsonl"

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
for name in baseline build check; do
  t=$(grep "^$name " "$dir/times" | awk '{print $2}' | median)
  m=$(grep "^$name " "$dir/times" | awk '{print $3}' | median)
  eval "t_$name=$t m_$name=$m"
  awk -v n="$name" -v t="$t" -v m="$m" -v e="$events" 'BEGIN { printf "%-9s median %6.2f s  %6.0f MB peak RSS  %5.2f M events/s\n", n, t, m/1024, e/t/1e6 }'
done
awk -v tb="$t_build" -v t0="$t_baseline" -v mb="$m_build" -v m0="$m_baseline" -v tc="$t_check" \
  'BEGIN { printf "build/baseline: time %.2f, peak RSS %.2f; check/baseline: time %.2f\n", tb/t0, mb/m0, tc/t0 }'
