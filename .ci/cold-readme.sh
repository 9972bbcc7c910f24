#!/usr/bin/env bash
# .ci/cold-readme.sh [TEST_LOG]
#
# The README's first commands, as a new user runs them: in a fresh clone of
# HEAD, with an empty module cache and an empty build cache, and with every
# fetch of github.com/paykit-dev/* made to fail (GOPRIVATE sends the go
# command to git, and git is sent to a path that does not exist). It passes
# only if nothing reaches for this module: every package of it must come
# from the clone. The other modules come through GOPROXY, as for any user.
#
# Runs the README's run command (`go run ./examples/quickstart`) and its
# test command (the first line of the README's Development block), both
# read from README.md so this step follows the README; then builds the CLI
# in its nested module (through cmd/paykit/go.work) and prints both
# binaries' versions. The test command's output goes to TEST_LOG too (.ci/run
# reads the root package's coverage from it), so CI runs the suite once.
set -euo pipefail
cd "$(dirname "$0")/.."
log=${1:-/dev/null}

run_cmd=$(grep -oE 'In a clone, `go run [^`]+`' README.md | head -1 | sed -E 's/.*`(go run [^`]+)`/\1/')
test_cmd=$(awk '/^## Development/{d=1} d && /^```sh/{getline; print; exit}' README.md | sed -E 's/[[:space:]]+#.*$//')
[[ "$run_cmd" == "go run "* ]] || { echo "cold-readme: no \"In a clone, \`go run ...\`\" in README.md"; exit 1; }
[[ "$test_cmd" == "go test "* ]] || { echo "cold-readme: the README's Development block does not start with a go test command"; exit 1; }

tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
git clone -q --no-hardlinks "$PWD" "$tmp/clone"
cd "$tmp/clone"

export GOMODCACHE=$tmp/modcache GOCACHE=$tmp/gocache
export GOPRIVATE="github.com/paykit-dev/*" GONOSUMDB="github.com/paykit-dev/*" GOFLAGS=-modcacherw
export GIT_CONFIG_COUNT=1
export GIT_CONFIG_KEY_0="url.file:///nonexistent/paykit-cold-readme/.insteadOf"
export GIT_CONFIG_VALUE_0="https://github.com/paykit-dev/"
unset GOWORK

timed() {
  local t0=$SECONDS
  echo "\$ $*"
  "$@"
  echo "($(( SECONDS - t0 )) s: $*)"
}

echo "fresh clone of $(git rev-parse --short HEAD), empty GOMODCACHE and GOCACHE, github.com/paykit-dev/* unreachable"
timed $run_cmd
# The test command's own words (-race, -cover), its output kept for .ci/run.
set -o pipefail
timed $test_cmd 2>&1 | tee "$log"
timed bash -c 'cd cmd/paykit && go build -o "$0/paykit" . && "$0/paykit" --version' "$tmp"
timed go run ./cmd/paykit-sandbox -version
# A module's content (its go.mod, its zip, or the extracted tree) in the
# cache means it was downloaded. The go command's version stamping of a
# build in the clone writes .info files of the clone's own commit there,
# read from the clone's git: those are not downloads.
fetched=$( { find "$GOMODCACHE/cache/download/github.com/paykit-dev" -name '*.mod' -o -name '*.zip' 2>/dev/null
  ls -d "$GOMODCACHE"/github.com/paykit-dev/* 2>/dev/null; } || true)
if [ -n "$fetched" ]; then
  echo "cold-readme: the module cache holds github.com/paykit-dev/* content: something downloaded this module"
  echo "$fetched" | head
  exit 1
fi
echo "cold-readme: passed; nothing fetched github.com/paykit-dev/*"
