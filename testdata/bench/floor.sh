#!/usr/bin/env bash
# fsmine against the floor loop: the least work a JSONL-to-automaton miner
# must do (one goroutine decoding session, step, node and event with
# goccy/go-json, grouping, sorting, counting; ../shared/tools/floor, or the
# copy in testdata/bench/floor when that is absent). Usage, from the
# repository:
#
#   bash testdata/bench/floor.sh [SESSIONS] [RUNS] [CHECK]
#
# SESSIONS defaults to 93500 (fsmine gen --seed 3: about 1M events; 935000
# makes about 10M), RUNS to 5, CHECK to 1 (0 leaves out fsmine check and the
# GOMAXPROCS=1 build). Each run times, one after the other, the floor,
# `fsmine build` (default options, JSON and DOT written), `fsmine build
# --generalize none`, then (CHECK=1) `fsmine check` and `fsmine build` under
# GOMAXPROCS=1, and takes each one's ratio to the floor of the same run, so
# that a machine shared with other work loads both sides alike. It prints
# the medians of the ratios and of the figures. Needs GNU time
# (/usr/bin/time).
set -euo pipefail
sessions=${1:-93500}
runs=${2:-5}
check=${3:-1}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go build -o "$dir/fsmine" .
if [ -d ../shared/tools/floor ]; then
  (cd ../shared/tools/floor && go build -o "$dir/floor" .)
else
  go build -o "$dir/floor" ./testdata/bench/floor
fi
"$dir/fsmine" gen -n "$sessions" --seed 3 -o "$dir/log.jsonl"
"$dir/fsmine" gen -n 2000 --seed 5 --drift 0.05 -o "$dir/train.jsonl"
"$dir/fsmine" build -q "$dir/train.jsonl" -o "$dir/train.json"
events=$(wc -l < "$dir/log.jsonl")
bytes=$(wc -c < "$dir/log.jsonl")
echo "log: $events events, $bytes bytes; $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at start"

one() { # name command...: appends "name run seconds kilobytes"
  local name=$1; shift
  /usr/bin/time -f "$name $run %e %M" "$@" >/dev/null 2>>"$dir/times"
}
names="floor build build-none"
[ "$check" = 1 ] && names="$names check build-P1"
for run in $(seq "$runs"); do
  one floor "$dir/floor" "$dir/log.jsonl"
  one build "$dir/fsmine" build -q "$dir/log.jsonl" -o "$dir/m.json" --dot "$dir/m.dot"
  one build-none "$dir/fsmine" build -q --generalize none "$dir/log.jsonl" -o "$dir/m.json" --dot "$dir/m.dot"
  if [ "$check" = 1 ]; then
    one check "$dir/fsmine" check --model "$dir/train.json" --format json "$dir/log.jsonl" || true
    GOMAXPROCS=1 one build-P1 "$dir/fsmine" build -q "$dir/log.jsonl" -o "$dir/m.json" --dot "$dir/m.dot"
  fi
done
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at end"

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
printf "%-11s %9s %9s %11s %11s\n" "" "time" "peak RSS" "time/floor" "RSS/floor"
for name in $names; do
  t=$(awk -v n="$name" '$1 == n {print $3}' "$dir/times" | median)
  m=$(awk -v n="$name" '$1 == n {print $4}' "$dir/times" | median)
  rt=$(awk -v n="$name" '$1 == "floor" {f[$2] = $3} $1 == n {r[$2] = $3} END {for (k in r) print r[k] / f[k]}' "$dir/times" | median)
  rm=$(awk -v n="$name" '$1 == "floor" {f[$2] = $4} $1 == n {r[$2] = $4} END {for (k in r) print r[k] / f[k]}' "$dir/times" | median)
  awk -v n="$name" -v t="$t" -v m="$m" -v rt="$rt" -v rm="$rm" 'BEGIN { printf "%-11s %7.2f s %6.0f MB %11.2f %11.2f\n", n, t, m/1024, rt, rm }'
done
echo "runs (name run seconds KB):"
cat "$dir/times"
