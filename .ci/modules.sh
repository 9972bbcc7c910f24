# Sourced, not run: the repository's Go modules, listed once for .ci/run,
# .ci/bump-root.sh and .ci/workspaces.sh.

# The root module's path (go.mod's first line).
paykit_module_path=github.com/paykit-dev/paykit-go

# The nested modules, each with its own go.mod (so merchants never download
# their dependencies) and its own go.work (.ci/workspaces.sh). A new one is
# a deliberate addition here.
NESTED=(otelpaykit bench/peers e2e cmd/paykit)

# want_version NAME MODULE_VERSION SDK_VERSION prints the line a binary
# prints for -version (internal/buildversion): a tag names itself, anything
# else (a pseudo-version) is a development build of the SDK's version.
want_version() {
  if [[ $2 =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] && ! [[ $2 =~ [-.][0-9]{14}-[0-9a-f]{12}$ ]]; then
    echo "$1 $2 (paykit-go SDK $3)"
  else
    echo "$1 $3 (development build $2; paykit-go SDK $3)"
  fi
}

# sdk_version_at COMMIT prints paykit.Version as client.go holds it at
# COMMIT (committed, not the working tree), failing when it holds none.
sdk_version_at() {
  local v
  v=$(git show "$1:client.go" | sed -nE 's/^const Version = "([^"]+)"$/\1/p')
  [ -n "$v" ] || { echo "no const Version in client.go at $1" >&2; return 1; }
  echo "$v"
}
