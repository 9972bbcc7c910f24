#!/usr/bin/env bash
# .ci/bump-root.sh [COMMIT]
#
# Points every nested module (.ci/modules.sh's NESTED) at
# the root module as of COMMIT (default HEAD): its tag if it has one, else
# its pseudo-version, the version a user's go command would compute. Then
# `go mod tidy` each of them with GOWORK=off, check that each builds and
# vets against that version alone, as a user would get it, and rewrite each
# one's go.work (.ci/workspaces.sh) to replace the new pin with the clone's
# root. The repository
# is served locally (.ci/serve-checkout.sh): no network but GOPROXY.
#
# COMMIT must be committed and reachable from main (a pin to a commit that
# only a branch has would vanish with the branch). Idempotent: a second run
# with the same COMMIT changes nothing. It edits go.mod and go.sum files and
# commits nothing; RELEASING.md says when to run it and what to commit.
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/serve-checkout.sh

rev=${1:-HEAD}
commit=$(git rev-parse --verify --quiet "$rev^{commit}") || { echo "bump-root: no commit $rev" >&2; exit 2; }
main_ref=
for r in refs/heads/main refs/remotes/origin/main; do
  if git show-ref --verify --quiet "$r"; then main_ref=$r; break; fi
done
if [ -n "$main_ref" ] && ! git merge-base --is-ancestor "$commit" "$main_ref"; then
  echo "bump-root: $rev ($commit) is not on main ($main_ref): pin only commits main keeps" >&2
  exit 2
fi

if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  echo "NOTE: uncommitted changes are not what the pin names: it is $commit as committed"
fi

serve_checkout .
version=$(root_version "$commit")
[ -n "$version" ] || { echo "bump-root: the go command gave no version for $commit" >&2; exit 1; }
echo "root module $paykit_module_path at $commit: $version"

nested=("${NESTED[@]}")
for mod in "${nested[@]}"; do
  echo "== $mod"
  (
    cd "$mod"
    export GOWORK=off
    go mod edit -dropreplace="$paykit_module_path" -require="$paykit_module_path@$version"
    go mod tidy
    got=$(go list -m -f '{{.Version}}' "$paykit_module_path")
    [ "$got" = "$version" ] || { echo "$mod: requires $paykit_module_path $got after tidy, want $version" >&2; exit 1; }
    if grep -qE "^replace[[:space:]]+$paykit_module_path([[:space:]]|$)|^[[:space:]]+$paykit_module_path[[:space:]]+=>" go.mod; then
      echo "$mod: go.mod still replaces $paykit_module_path" >&2; exit 1
    fi
    go build ./...
    go vet ./...
  )
done
bash .ci/workspaces.sh
echo
git status --short -- $(printf '%s/go.mod %s/go.sum %s/go.work ' "${nested[@]}" "${nested[@]}" "${nested[@]}")
echo "nested modules now require $paykit_module_path $version"
