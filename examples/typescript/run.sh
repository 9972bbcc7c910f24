#!/usr/bin/env bash
# The TypeScript side of the contract (issue 23): installs the pinned npm
# packages (npm ci), generates types from openapi.yaml with openapi-typescript,
# proves with tsc that they carry every field (check-types.ts), lints
# openapi.yaml with Redocly and Spectral (errors fail, and so does a warning
# lint-warnings.txt does not list with its reason), runs the README's
# exact-decimal recipe for TypeScript as it stands, then builds the
# sandbox binary, starts it on a free loopback port and runs flow.ts against
# it. CI runs this; so can you: bash examples/typescript/run.sh
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
  # The README's exact-decimal recipe for TypeScript, run as it stands:
  # the first ```ts block of "From other languages" must print this line.
  awk '/^## /{s=($0=="## From other languages")} s&&/^```ts$/{b=1;next} b&&/^```$/{exit} b' ../../README.md >gen/readme-recipe.ts
  [ -s gen/readme-recipe.ts ] || { echo "README: no TypeScript recipe in From other languages" >&2; exit 1; }
  npx tsc --strict --skipLibCheck --target ES2022 --module NodeNext --moduleResolution NodeNext \
    --types node --outDir dist/readme gen/readme-recipe.ts
  want='1500.50 {"ext_id":"order-1001","amount":1500.50}'
  got=$(node dist/readme/readme-recipe.js)
  [ "$got" = "$want" ] || { echo "README TypeScript recipe printed: $got (want $want)" >&2; exit 1; }
  # Errors fail here; then every warning must be one lint-warnings.txt
  # lists with its reason (lint-check.mjs prints them all).
  npx redocly lint ../../openapi.yaml --config redocly.yaml --format=stylish
  npx spectral lint ../../openapi.yaml --ruleset .spectral.yaml --fail-severity=error
  npx redocly lint ../../openapi.yaml --config redocly.yaml --format=json >"$work/redocly.json" 2>/dev/null
  npx spectral lint ../../openapi.yaml --ruleset .spectral.yaml --fail-severity=error -f json -o "$work/spectral.json" >/dev/null
  node lint-check.mjs "$work/redocly.json" "$work/spectral.json"
)

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
until node -e 'fetch(process.argv[1] + "/openapi.yaml").then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))' "$base" 2>/dev/null; do
  if ! kill -0 "$pid" 2>/dev/null || [ "$SECONDS" -ge "$deadline" ]; then
    echo "paykit-sandbox at $base does not answer" >&2
    exit 1
  fi
  sleep 0.1
done

PAYKIT_BASE_URL="$base" PAYKIT_API_KEY=pk_sandbox PAYKIT_SECRET=sk_sandbox_secret node "$ts/dist/flow.js"
