#!/usr/bin/env bash
# The TypeScript side of the contract (issue 23): installs the pinned npm
# packages (npm ci), generates types from openapi.yaml with openapi-typescript,
# proves with tsc that they carry every field (check-types.ts), lints
# openapi.yaml with Redocly and Spectral (errors fail, and so does a warning
# lint-warnings.txt does not list with its reason), runs docs/other-languages.md's
# exact-decimal recipe for TypeScript as it stands, then builds the
# sandbox binary, starts it on a free loopback port and runs flow.ts against
# it, and last puts Prism (mock, and validating proxy in front of a second
# sandbox started with -accept-unsigned) to the test of prism-check.ts.
# CI runs this; so can you: bash examples/typescript/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

work=$(mktemp -d)
pids=()   # every background process this script starts, stopped at exit
cleanup() {
  for p in "${pids[@]}"; do
    if kill -0 "$p" 2>/dev/null; then
      kill "$p" 2>/dev/null || true
      wait "$p" 2>/dev/null || true
    fi
  done
  rm -rf "$work"
}
trap cleanup EXIT

ts=examples/typescript
command -v npm >/dev/null 2>&1 || { echo "examples/typescript needs Node.js 20+ and npm on PATH" >&2; exit 1; }
(
  cd "$ts"
  npm ci --no-audit --no-fund --loglevel=error
  # --default-non-nullable false: a request field with a default (method,
  # limit) stays optional, as the service treats it.
  npx openapi-typescript ../../openapi.yaml --default-non-nullable false -o gen/schema.d.ts
  rm -rf dist
  npx tsc -p tsconfig.json   # fails when check-types.ts finds a field missing
  # The exact-decimal recipe for TypeScript of docs/other-languages.md, run
  # as it stands: its first ```ts block must print this line.
  awk '/^```ts$/{b=1;next} b&&/^```$/{exit} b' ../../docs/other-languages.md >gen/readme-recipe.ts
  [ -s gen/readme-recipe.ts ] || { echo "docs/other-languages.md: no TypeScript recipe" >&2; exit 1; }
  npx tsc --strict --skipLibCheck --target ES2022 --module NodeNext --moduleResolution NodeNext \
    --types node --outDir dist/readme gen/readme-recipe.ts
  want='1500.50 {"ext_id":"order-1001","amount":1500.50}'
  got=$(node dist/readme/readme-recipe.js)
  [ "$got" = "$want" ] || { echo "docs/other-languages.md TypeScript recipe printed: $got (want $want)" >&2; exit 1; }
  # Errors fail here; then every warning must be one lint-warnings.txt
  # lists with its reason (lint-check.mjs prints them all).
  npx redocly lint ../../openapi.yaml --config redocly.yaml --format=stylish
  npx spectral lint ../../openapi.yaml --ruleset .spectral.yaml --fail-severity=error
  npx redocly lint ../../openapi.yaml --config redocly.yaml --format=json >"$work/redocly.json" 2>/dev/null
  npx spectral lint ../../openapi.yaml --ruleset .spectral.yaml --fail-severity=error -f json -o "$work/spectral.json" >/dev/null
  node lint-check.mjs "$work/redocly.json" "$work/spectral.json"
)

go build -o "$work/paykit-sandbox" ./cmd/paykit-sandbox

# start_sandbox NAME FLAGS...: starts the binary on port 0 (the kernel
# picks a free port and the binary prints the URL it got, so there is no
# race between choosing a port and binding it), waits for the banner and
# an answer up to a deadline, and sets base to its URL.
start_sandbox() {
  local name=$1; shift
  : >"$work/$name.stdout"; : >"$work/$name.stderr"   # exist before the background shell opens them
  "$work/paykit-sandbox" -addr 127.0.0.1:0 "$@" >>"$work/$name.stdout" 2>>"$work/$name.stderr" &
  local p=$!
  pids+=("$p")
  base=""
  local deadline=$((SECONDS + 30))
  while [ -z "$base" ]; do
    base=$(cat "$work/$name.stdout" "$work/$name.stderr" | grep -oE 'http://127\.0\.0\.1:[0-9]+' | head -n1 || true)
    if [ -z "$base" ]; then
      if ! kill -0 "$p" 2>/dev/null || [ "$SECONDS" -ge "$deadline" ]; then
        echo "paykit-sandbox ($name) did not start:" >&2
        cat "$work/$name.stdout" "$work/$name.stderr" >&2
        exit 1
      fi
      sleep 0.1
    fi
  done
  wait_http "$base/openapi.yaml" "$p" "paykit-sandbox ($name)" || exit 1
}

# wait_http URL PID WHAT: polls URL until it answers 2xx, while PID lives,
# for 60 seconds at most; returns 1 (having said so) when it never does.
wait_http() {
  local deadline=$((SECONDS + 60))
  until node -e 'fetch(process.argv[1]).then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))' "$1" 2>/dev/null; do
    if ! kill -0 "$2" 2>/dev/null || [ "$SECONDS" -ge "$deadline" ]; then
      echo "$3 at $1 does not answer" >&2
      return 1
    fi
    sleep 0.2
  done
}

# A free loopback port for Prism, which cannot be given port 0. Another
# process could take it before Prism binds; on this loopback-only CI that
# race has not been seen, and Prism's failure to bind would fail the run.
free_port() {
  node -e 'const s = require("net").createServer(); s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })'
}

start_sandbox flow
PAYKIT_BASE_URL="$base" PAYKIT_API_KEY=pk_sandbox PAYKIT_SECRET=sk_sandbox_secret node "$ts/dist/flow.js"

# Prism (points 1 and 3): the mock answers from the document's examples,
# and the validating proxy, in front of a second sandbox that accepts
# unsigned requests, lets a signed create through although it
# re-serialises the body. prism-check.ts says what is checked.
prism=$ts/node_modules/.bin/prism
mock_port=$(free_port)
"$prism" mock openapi.yaml -h 127.0.0.1 -p "$mock_port" >"$work/prism-mock.log" 2>&1 &
pids+=($!)
start_sandbox unsigned -accept-unsigned -log-format json
proxy_port=$(free_port)
"$prism" proxy openapi.yaml "$base" --errors -h 127.0.0.1 -p "$proxy_port" >"$work/prism-proxy.log" 2>&1 &
pids+=($!)
wait_http "http://127.0.0.1:$mock_port/openapi.yaml" "${pids[-3]}" "prism mock" || { cat "$work/prism-mock.log" >&2; exit 1; }
wait_http "http://127.0.0.1:$proxy_port/openapi.yaml" "${pids[-1]}" "prism proxy" || { cat "$work/prism-proxy.log" >&2; exit 1; }
PAYKIT_API_KEY=pk_sandbox PAYKIT_SECRET=sk_sandbox_secret \
  node "$ts/dist/prism-check.js" "http://127.0.0.1:$mock_port" "http://127.0.0.1:$proxy_port"
# The sandbox took the accept-unsigned path, and said so.
grep -q '"msg":"request accepted without a valid signature' "$work/unsigned.stderr" || {
  echo "the unsigned sandbox did not log the request it accepted without a valid signature:" >&2
  cat "$work/unsigned.stderr" >&2
  exit 1
}
echo "prism: mock and validating proxy OK"
