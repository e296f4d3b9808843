#!/usr/bin/env bash
# Runs fsmine serve in its own process, with the guard fixture model and
# policy, and drives it with BenchmarkServe's open-loop generator at 5,000
# steps a second, RUNS times, printing each run's p99 and the median.
# Usage, from the repository:
#
#   bash testdata/bench/serve.sh [RUNS] [CLIENT_GOMAXPROCS] [FIXTURE]
#
# RUNS defaults to 5; CLIENT_GOMAXPROCS (the generator's cores; the service
# keeps the default) to 1; FIXTURE to returns (the guard fixture, with
# BenchmarkServe), or slots (the slots fixture: required slots, conditions,
# instructions, steps that carry slots; with BenchmarkServeSlots).
set -euo pipefail
runs=${1:-5}
procs=${2:-1}
fixture=${3:-returns}
case $fixture in
  returns) model=returns.json policy=returns.policy.json bench='^BenchmarkServe$/^rate=5000$' ;;
  slots) model=slots.json policy=slots.policy.json bench='^BenchmarkServeSlots$/^rate=5000$' ;;
  *) echo "serve.sh: FIXTURE is returns or slots, not $fixture" >&2; exit 2 ;;
esac
dir=$(mktemp -d)
go build -o "$dir/fsmine" .
go test -c -o "$dir/cmd.test" ./cmd
cd cmd
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
for i in $(seq "$runs"); do
  "$dir/fsmine" serve --model "../automaton/guard/testdata/$model" \
    --policy "../automaton/guard/testdata/$policy" --addr 127.0.0.1:8711 2>/dev/null &
  pid=$!
  sleep 1 # for the service to listen
  FSMINE_SERVE_URL=http://127.0.0.1:8711 GOMAXPROCS=$procs "$dir/cmd.test" -test.run '^$' \
    -test.bench "$bench" -test.benchtime 20000x | grep -o '[0-9.]* p99-µs' | tee -a "$dir/p99"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  pid=
done
sort -n "$dir/p99" | awk '{a[NR]=$1} END {printf "median p99 %.0f µs over %d runs\n", (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2), NR}'
