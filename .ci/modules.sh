# Sourced, not run: the repository's Go modules, listed once for .ci/run,
# .ci/bump-root.sh and .ci/workspaces.sh.

# The root module's path (go.mod's first line).
paykit_module_path=github.com/paykit-dev/paykit-go

# The nested modules, each with its own go.mod (so merchants never download
# their dependencies) and its own go.work (.ci/workspaces.sh). A new one is
# a deliberate addition here.
NESTED=(otelpaykit bench/peers e2e cmd/paykit)
