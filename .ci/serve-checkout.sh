# Sourced, not run: serves this repository's git history at the module path
# github.com/paykit-dev/paykit-go without any network, so that the go command
# fetches the root and the nested modules exactly as a user would from
# GitHub (pseudo-versions from commits, tags, go.sum entries), but from the
# local clone. Every other module still comes through GOPROXY.
#
# How: git's url.<base>.insteadOf, given through GIT_CONFIG_* variables so no
# git configuration file is touched, rewrites https://github.com/paykit-dev/paykit-go
# to the local repository; GOPRIVATE makes the go command fetch that path
# with git (no proxy) and skip the checksum database, which has never seen
# these commits. The go command runs git for this, so git must be installed.
#
# What is served is the committed history (every branch and tag of the local
# repository), never the working tree: commit first.

# paykit_module_path, the root module's path.
source "$(dirname "${BASH_SOURCE[0]}")/modules.sh"

# serve_checkout [repo-dir] exports the environment; repo-dir defaults to the
# current directory's repository (a worktree serves its common repository).
serve_checkout() {
  local dir=${1:-.} gitdir
  gitdir=$(git -C "$dir" rev-parse --path-format=absolute --git-common-dir) || return 1
  export GOPRIVATE="github.com/paykit-dev/*${GOPRIVATE:+,$GOPRIVATE}"
  export GONOSUMDB="github.com/paykit-dev/*${GONOSUMDB:+,$GONOSUMDB}"
  # Appended after any GIT_CONFIG_* the caller already has.
  local n=${GIT_CONFIG_COUNT:-0}
  export "GIT_CONFIG_KEY_$n=url.file://$gitdir.insteadOf"
  export "GIT_CONFIG_VALUE_$n=https://$paykit_module_path"
  export GIT_CONFIG_COUNT=$((n + 1))
}

# module_version MODULE COMMIT prints the version the go command gives
# MODULE (the root module path or a nested module's) at COMMIT (a commit
# hash, branch or tag of the served repository): its semver tag if it has
# one (a nested module's tags are prefixed: otelpaykit/v0.3.0), else its
# pseudo-version. Run after serve_checkout; it runs outside any module and
# workspace.
module_version() {
  local tmp out
  tmp=$(mktemp -d) || return 1
  out=$(cd "$tmp" && GOWORK=off go mod download -json "$1@$2") || {
    rm -rf "$tmp"; echo "$out" >&2; return 1
  }
  rm -rf "$tmp"
  sed -nE 's/^\t"Version": "([^"]+)",?$/\1/p' <<<"$out"
}

# root_version COMMIT is module_version for the root module.
root_version() { module_version "$paykit_module_path" "$1"; }
