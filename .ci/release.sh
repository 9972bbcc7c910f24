#!/usr/bin/env bash
# .ci/release.sh [--snapshot] [--targets "os/arch ..."] [--out DIR]
#
# The release build of the two binaries for people without Go: paykit (the
# CLI, module cmd/paykit) and paykit-sandbox (the root module), static
# (CGO_ENABLED=0), -trimpath, for linux, darwin and windows on amd64 and
# arm64 by default. Each target is an archive (tar.gz; zip for windows)
# holding both binaries, LICENSE and README.md, and DIR/checksums.txt has
# the SHA-256 of every archive (sha256sum -c checks it). The same builds as
# .goreleaser.yaml (RELEASING.md); this script needs only Go, git, tar, zip
# and sha256sum, so CI runs it without building GoReleaser.
#
# Version stamping: the binaries print the version the go command records
# from git (runtime/debug.ReadBuildInfo), as `go install ...@version` does:
# the tag at HEAD (v0.3.0 for the root, cmd/paykit/v0.3.0 for the CLI) or a
# pseudo-version. To be sure of that, the build runs in a fresh clone of
# HEAD (a linked worktree or a dirty tree would record "(devel)" or
# "+dirty"), and each module builds with GOWORK=off against the root version
# its go.mod requires, exactly the binary `go install` gives. Without
# --snapshot, HEAD must carry a root tag vX.Y.Z. The binaries for this
# machine's platform, when built, are run and must print their versions.
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/serve-checkout.sh

snapshot=0
targets="linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64"
out=dist
while [ $# -gt 0 ]; do
  case "$1" in
    --snapshot) snapshot=1 ;;
    --targets) targets=$2; shift ;;
    --out) out=$2; shift ;;
    *) echo "usage: $0 [--snapshot] [--targets \"os/arch ...\"] [--out DIR]" >&2; exit 2 ;;
  esac
  shift
done

commit=$(git rev-parse HEAD)
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  echo "NOTE: uncommitted changes are not built: the release is HEAD, $commit"
fi
tag=$(git tag --points-at "$commit" --list 'v[0-9]*' | sort -V | tail -1)
if [ "$snapshot" -eq 0 ] && [ -z "$tag" ]; then
  echo "HEAD ($commit) has no root tag vX.Y.Z: tag it first (RELEASING.md) or pass --snapshot" >&2
  exit 2
fi

src=$(mktemp -d)
trap 'rm -rf "$src"' EXIT
git clone --quiet --shared --no-checkout "$(git rev-parse --path-format=absolute --git-common-dir)" "$src/repo"
git -C "$src/repo" checkout --quiet --detach "$commit"

serve_checkout .
export GOWORK=off CGO_ENABLED=0
rootver=$(root_version "$commit")
cliver=$(module_version "$paykit_module_path/cmd/paykit" "$commit")
echo "release of $commit: paykit-sandbox $rootver, paykit $cliver"

rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
host="$(go env GOHOSTOS)/$(go env GOHOSTARCH)"
ldflags="-s -w"
for target in $targets; do
  os=${target%/*}
  arch=${target#*/}
  exe=""
  [ "$os" = windows ] && exe=.exe
  name="paykit_${rootver#v}_${os}_${arch}"
  dir="$out/$name"
  mkdir -p "$dir"
  (cd "$src/repo" && GOOS=$os GOARCH=$arch go build -buildvcs=true -trimpath -ldflags="$ldflags" -o "$dir/paykit-sandbox$exe" ./cmd/paykit-sandbox)
  (cd "$src/repo/cmd/paykit" && GOOS=$os GOARCH=$arch go build -buildvcs=true -trimpath -ldflags="$ldflags" -o "$dir/paykit$exe" .)
  cp "$src/repo/LICENSE" "$src/repo/README.md" "$dir/"
  if [ "$target" = "$host" ]; then
    got=$("$dir/paykit" --version)
    echo "  $got"
    [[ "$got" == "paykit $cliver (paykit-go SDK "* ]] || { echo "paykit --version: want paykit $cliver (...)" >&2; exit 1; }
    got=$("$dir/paykit-sandbox" -version)
    echo "  $got"
    [[ "$got" == "paykit-sandbox $rootver (paykit-go SDK "* ]] || { echo "paykit-sandbox -version: want paykit-sandbox $rootver (...)" >&2; exit 1; }
  fi
  if [ "$os" = windows ]; then
    (cd "$out" && zip -q -r -X "$name.zip" "$name")
  else
    # Owner, group and times fixed: the same commit gives the same archive.
    (cd "$out" && tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$(git -C "$src/repo" log -1 --format=%ct)" \
      -czf "$name.tar.gz" "$name")
  fi
  echo "  $target: $(ls "$out" | grep -E "^$name\.(tar\.gz|zip)$")"
done
(
  cd "$out"
  shopt -s nullglob
  archives=(*.tar.gz *.zip)
  sha256sum -- "${archives[@]}" >checksums.txt
  sha256sum -c --quiet checksums.txt
)
echo "checksums: $out/checksums.txt"
cat "$out/checksums.txt"
