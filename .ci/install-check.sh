#!/usr/bin/env bash
# Installs paykit-go as a merchant would, from this repository's HEAD commit
# served at its module path (.ci/serve-checkout.sh: git's insteadOf, no
# network but GOPROXY for the other modules), each in a fresh temporary
# module with GOWORK=off:
#   1. go get the SDK and build a program that calls it;
#   2. go get otelpaykit alone (no SDK required first) and build a program
#      that imports it;
#   3. go install cmd/paykit (its own module, no replace) and
#      cmd/paykit-sandbox (the root module); both print the version the go
#      command recorded, never "(devel)";
#   4. a test that uses sandboxtest compiles and passes, its
#      `go list -deps -test` holds no modernc.org/sqlite, and go mod tidy
#      and go test downloaded no modernc.org module into an empty module
#      cache: a merchant's tests never compile or download SQLite.
# What is served is the committed HEAD, never the working tree.
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/serve-checkout.sh

root=$paykit_module_path
commit=$(git rev-parse HEAD)
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  echo "NOTE: the working tree has uncommitted changes; they are not installed (HEAD $commit is)"
fi
sdk_version=$(sdk_version_at "$commit")

serve_checkout .
export GOWORK=off
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
export GOBIN=$tmp/bin
t0=$(date +%s)

# fresh NAME makes an empty module $tmp/NAME and enters it.
fresh() { mkdir "$tmp/$1" && cd "$tmp/$1" && go mod init "example.com/$1" >/dev/null 2>&1; }
# no_zero_version fails when go.mod names a zero version (a requirement
# that resolves only through a replace).
no_zero_version() {
  if grep -q 'v0.0.0-00010101000000-000000000000' go.mod; then echo "go.mod of $1 holds the zero version:"; cat go.mod; exit 1; fi
}

rootver=$(root_version "$commit")
echo "HEAD $commit is $root $rootver (SDK $sdk_version)"

echo "== 1. go get the SDK"
(
  fresh shop
  go get "$root@$commit"
  cat >main.go <<'GO'
package main

import (
	"context"
	"fmt"

	paykit "github.com/paykit-dev/paykit-go"
)

func main() {
	c, err := paykit.NewClient("https://api.example.com", "pk_test", paykit.HMACSigner("sk_test"))
	if err != nil {
		panic(err)
	}
	fmt.Println(c, paykit.Version, context.Background() != nil)
}
GO
  go mod tidy
  no_zero_version shop
  go vet ./...
  go build -o /dev/null .
  got=$(go list -m -f '{{.Version}}' "$root")
  [ "$got" = "$rootver" ] || { echo "the SDK resolved to $got, want $rootver"; exit 1; }
  echo "ok: $root $got"
)

echo "== 2. go get otelpaykit alone"
(
  fresh shopotel
  go get "$root/otelpaykit@$commit"
  cat >main.go <<'GO'
package main

import (
	"fmt"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/otelpaykit"
)

func main() {
	c, err := paykit.NewClient("https://api.example.com", "pk_test", paykit.HMACSigner("sk_test"),
		otelpaykit.WithTelemetry(nil, nil))
	if err != nil {
		panic(err)
	}
	fmt.Println(c)
}
GO
  go mod tidy
  no_zero_version shopotel
  go vet ./...
  go build -o /dev/null .
  echo "ok: $(go list -m -f '{{.Path}} {{.Version}}' "$root/otelpaykit"), $(go list -m -f '{{.Path}} {{.Version}}' "$root")"
)

echo "== 3. go install cmd/paykit and cmd/paykit-sandbox"
(
  cd "$tmp"
  cliver=$(module_version "$root/cmd/paykit" "$commit")
  go install "$root/cmd/paykit@$commit"
  go install "$root/cmd/paykit-sandbox@$commit"
  # Both SDKs are the pin's and HEAD's paykit.Version; between releases
  # those are one "X.Y.Z-dev".
  out=$("$GOBIN/paykit" --version)
  echo "$out"
  want=$(want_version paykit "$cliver" "$sdk_version")
  [ "$out" = "$want" ] || { echo "paykit --version: want \"$want\""; exit 1; }
  out=$("$GOBIN/paykit-sandbox" -version)
  echo "$out"
  want=$(want_version paykit-sandbox "$rootver" "$sdk_version")
  [ "$out" = "$want" ] || { echo "paykit-sandbox -version: want \"$want\""; exit 1; }
)

echo "== 4. a test with sandboxtest, without SQLite"
(
  # A module cache of its own, empty: what go mod tidy and go test download
  # for this user is all that lands in it.
  export GOMODCACHE=$tmp/shoptest-modcache GOFLAGS=-modcacherw
  fresh shoptest
  go get "$root@$commit"
  cat >shop_test.go <<'GO'
package shoptest

import (
	"context"
	"testing"

	"github.com/paykit-dev/paykit-go/sandbox/sandboxtest"
)

func TestSandbox(t *testing.T) {
	env := sandboxtest.New(t)
	terminals, err := env.Client.ListTerminals(context.Background())
	if err != nil || len(terminals) == 0 {
		t.Fatalf("terminals %v, err %v", terminals, err)
	}
}
GO
  go mod tidy
  no_zero_version shoptest
  go test -count=1 ./...
  if go list -deps -test ./... | grep -E '^modernc\.org/sqlite(/|$)'; then
    echo "FAIL: a test that imports sandboxtest compiles modernc.org/sqlite (above)"; exit 1
  fi
  echo "ok: no modernc.org/sqlite in the test's dependencies"
  # Not compiled is not enough: go mod tidy must not download SQLite's
  # module either (424 MB of module cache instead of 25 MB).
  if ls -d "$GOMODCACHE"/modernc.org/* "$GOMODCACHE"/cache/download/modernc.org/*/@v/*.zip 2>/dev/null | grep .; then
    echo "FAIL: go mod tidy and go test of a sandboxtest user downloaded modernc.org modules (above)"; exit 1
  fi
  echo "ok: no modernc.org module in the module cache ($(du -sh "$GOMODCACHE" | cut -f1) in all)"
)

echo "install check passed in $(($(date +%s) - t0))s"
