#!/usr/bin/env bash
# Builds the sandbox binary, starts it on a free loopback port, runs flow.py
# against it and stops it. CI runs this; so can you: bash examples/python/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

work=$(mktemp -d)
pid=""
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/paykit-sandbox" ./cmd/paykit-sandbox

# Port 0: the kernel picks a free port and the binary prints the URL it got,
# so there is no race between choosing a port and binding it.
: >"$work/stdout"; : >"$work/stderr"   # exist before the background shell opens them
"$work/paykit-sandbox" -addr 127.0.0.1:0 >>"$work/stdout" 2>>"$work/stderr" &
pid=$!

# Wait for the banner, then for an answer, polling up to a deadline.
base=""
deadline=$((SECONDS + 30))
while [ -z "$base" ]; do
  base=$(cat "$work/stdout" "$work/stderr" | grep -oE 'http://127\.0\.0\.1:[0-9]+' | head -n1 || true)
  if [ -z "$base" ]; then
    if ! kill -0 "$pid" 2>/dev/null || [ "$SECONDS" -ge "$deadline" ]; then
      echo "paykit-sandbox did not start:" >&2
      cat "$work/stdout" "$work/stderr" >&2
      exit 1
    fi
    sleep 0.1
  fi
done
until python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1] + "/openapi.yaml", timeout=2)' "$base" 2>/dev/null; do
  if ! kill -0 "$pid" 2>/dev/null || [ "$SECONDS" -ge "$deadline" ]; then
    echo "paykit-sandbox at $base does not answer" >&2
    exit 1
  fi
  sleep 0.1
done

PAYKIT_BASE_URL="$base" PAYKIT_API_KEY=pk_sandbox PAYKIT_SECRET=sk_sandbox_secret python3 examples/python/flow.py
