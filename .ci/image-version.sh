#!/usr/bin/env bash
# The image built from the root Dockerfile reports its version (issue 34).
# CI cannot build that Dockerfile (its golang stage is on a registry this
# machine cannot reach), so this runs what its build stage runs, on what
# its context holds: a fresh clone of HEAD, less what .dockerignore leaves
# out, and the Dockerfile's own `go build` line. Then -version must name a
# commit (a tag or pseudo-version), never "(devel)", and not "+dirty".
set -euo pipefail
cd "$(dirname "$0")/.."

# .dockerignore leaves out only what git ignores: a tracked file left out
# would make the image's version "+dirty".
if left_out=$(git ls-files -c -i --exclude-from=.dockerignore) && [ -n "$left_out" ]; then
  echo ".dockerignore leaves out tracked files (the image would be +dirty):"; echo "$left_out"; exit 1
fi
if grep -qxE '\.git/?' .dockerignore; then
  echo ".dockerignore leaves out .git: the go command could not stamp the version"; exit 1
fi

build=$(awk '/^RUN .*go build/{sub(/^RUN /,""); sub(/[[:space:]]*\\$/,""); print; exit}' Dockerfile)
[[ "$build" == *"go build"* ]] || { echo "no RUN ... go build line in Dockerfile"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git clone -q "$PWD" "$tmp/src"
cd "$tmp/src"
# The golang image sets no GOFLAGS; this machine's may say -buildvcs=false.
build=${build//\/out\//$tmp\/out\/}
echo "\$ $build"
env -u GOFLAGS bash -c "$build"
got=$("$tmp/out/paykit-sandbox" -version)
echo "$got"
commit=$(git rev-parse --short=12 HEAD)
case "$got" in
  *"(devel)"*|*"without version information"*|*"+dirty"*) echo "the image's binary does not report its version"; exit 1 ;;
  *"$commit"*|"paykit-sandbox v"[0-9]*) ;;
  *) echo "the image's binary does not name commit $commit or a tag"; exit 1 ;;
esac
