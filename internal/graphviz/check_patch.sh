#!/usr/bin/env bash
# check_patch.sh checks that internal/graphviz is upstream go-graphviz plus
# fsmine.patch, byte for byte, and that internal/graphviz/internal/findfont
# is upstream go-findfont plus findfont.patch (see FSMINE.md). Upstream comes
# from the module cache through the module proxy (go mod download), with the
# files the copies leave out removed first.
#
#   check_patch.sh           check (CI runs this)
#   check_patch.sh -update   rewrite both patches from the copies
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
update=false
case "${1:-}" in
'') ;;
-update) update=true ;;
*) echo "usage: $0 [-update]" >&2; exit 2 ;;
esac

# patch(1) and diff(1) do the work; CI installs patch if the machine lacks it.
if ! command -v patch >/dev/null 2>&1; then
  if [ "${CI:-}" = true ] && [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq patch >/dev/null
  else
    echo "check_patch: needs patch(1)" >&2
    exit 1
  fi
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# moddir MODULE@VERSION prints the module's directory in the module cache,
# downloading it first if need be. It runs outside any module, so that
# fsmine's go.mod and go.sum are left alone.
moddir() {
  (cd "$work" && GOFLAGS=-mod=mod go mod download -json "$1") |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p'
}

# check NAME MODULE@VERSION COPY PATCH EXCLUDES...: upstream minus EXCLUDES
# (paths relative to the module root), patched with PATCH, must equal COPY
# minus EXCLUDES (there, the files that are fsmine's own).
check() {
  local name=$1 mod=$2 copy=$3 patchfile=$4
  shift 4
  local up
  up=$(moddir "$mod")
  if [ -z "$up" ] || [ ! -d "$up" ]; then
    echo "check_patch: cannot download $mod" >&2
    exit 1
  fi
  local a="$work/$name/a" b="$work/$name/b" x
  mkdir -p "$work/$name"
  cp -R "$up" "$a"
  cp -R "$copy" "$b"
  chmod -R u+w "$a" "$b"
  while [ $# -gt 0 ]; do
    case $1 in
    --upstream) x=$a ;;
    --copy) x=$b ;;
    *) rm -rf "${x:?}/$1" ;;
    esac
    shift
  done
  # Upstream's tests are left out wherever they are.
  find "$a" -name '*_test.go' -delete
  if $update; then
    # Timestamps are cut from the headers so that the patch is the same
    # whenever it is made.
    (cd "$work/$name" && diff -ruN a b || true) |
      sed -E 's/^((---|\+\+\+) [^[:space:]]+)[[:space:]].*$/\1/' >"$patchfile"
    echo "check_patch: wrote $patchfile"
  fi
  local p="$work/$name/patched"
  cp -R "$a" "$p"
  if ! (cd "$p" && patch -p1 -s -F0 --no-backup-if-mismatch <"$patchfile"); then
    echo "check_patch: $patchfile does not apply to $mod" >&2
    exit 1
  fi
  if ! diff -r "$p" "$b"; then
    echo "check_patch: $copy is not $mod plus $patchfile: run $0 -update after reading the diff above" >&2
    exit 1
  fi
  echo "check_patch: $copy is $mod plus $(basename "$patchfile")"
}

check go-graphviz github.com/goccy/go-graphviz@v0.2.10 "$here" "$here/fsmine.patch" \
  --upstream .gitattributes .github .gitignore Makefile _examples buf.gen.yaml buf.work.yaml go.mod go.sum testdata \
  internal/wasm/bind.proto internal/wasm/build \
  --copy FSMINE.md fsmine.patch check_patch.sh staticcheck.conf internal/findfont

check go-findfont github.com/flopp/go-findfont@v0.1.0 "$here/internal/findfont" \
  "$here/internal/findfont/findfont.patch" \
  --upstream cmd go.mod \
  --copy findfont.patch
