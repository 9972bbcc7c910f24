#!/usr/bin/env bash
# The sandbox in a container (issue 21, point 6), following
# ../shared/CONTAINERS.md: no registry is reachable, so the image is
# .ci/Dockerfile.ci, FROM scratch with the release build's static binary
# (the root Dockerfile's runtime stage). It runs under Podman with host
# networking; the SDK drives a flow against it (TestContainer, phase
# create); it is stopped with SIGTERM (must exit 0), started again on the
# same volume, and checked (phase check). The state check needs the
# binary's -db flag: without it the restarted container must still serve
# and its old state is not looked for (the output says so).
#
# Every failure is loud: podman missing or unable to run a container fails
# this script; nothing is skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

# A free loopback port (host networking: the container binds it directly),
# chosen at random so that two runs on one machine do not collide.
free_port() {
  local p
  for p in $(shuf -i 20000-40000 -n 50); do
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
  done
  echo "no free port found" >&2; return 1
}
PORT=${PAYKIT_CONTAINER_PORT:-$(free_port)}
NAME=paykit-sandbox-ci-$$
VOLUME=paykit-sandbox-ci-$$
IMAGE=paykit-sandbox:ci-$$
TOKEN=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d " \n") # 256 bits: the sandbox refuses a guessable token
start_s=$(date +%s)

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq podman runc >/dev/null

conf=$(mktemp)
ctx=$(mktemp -d)
state=$(mktemp)
printf '[containers]\ndefault_ulimits = []\n' >"$conf"
export CONTAINERS_CONF=$conf
P=(podman --runtime runc --cgroup-manager=cgroupfs)
cleanup() {
  "${P[@]}" rm -f "$NAME" >/dev/null 2>&1 || true
  "${P[@]}" volume rm -f "$VOLUME" >/dev/null 2>&1 || true
  "${P[@]}" rmi -f "$IMAGE" >/dev/null 2>&1 || true
  rm -rf "$conf" "$ctx" "$state" "$state.log"
}
trap cleanup EXIT

# The binary the release build made (.ci/run gives GoReleaser's
# linux one in PAYKIT_SANDBOX_BIN), so the image ships what the release
# ships; run alone, this script builds one with the release's flags.
if [ -n "${PAYKIT_SANDBOX_BIN:-}" ]; then
  cp "$PAYKIT_SANDBOX_BIN" "$ctx/paykit-sandbox"
else
  CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o "$ctx/paykit-sandbox" ./cmd/paykit-sandbox
fi
if ! "${P[@]}" --version >/dev/null; then echo "podman does not run"; exit 1; fi
# A scratch image has no loader: the binary must be static.
if [ "$(od -An -c -j 1 -N 3 "$ctx/paykit-sandbox" | tr -d ' ')" != "ELF" ]; then echo "not an ELF binary"; exit 1; fi
if readelf -l "$ctx/paykit-sandbox" 2>/dev/null | grep -q 'Requesting program interpreter'; then
  echo "paykit-sandbox is dynamically linked"; exit 1
fi
cp /etc/ssl/certs/ca-certificates.crt "$ctx/"
mkdir "$ctx/data"
"${P[@]}" build -q --format docker -t "$IMAGE" -f .ci/Dockerfile.ci "$ctx" >/dev/null

hc=$("${P[@]}" image inspect "$IMAGE" --format '{{.HealthCheck.Test}}')
case "$hc" in *healthcheck*) ;; *) echo "image without its HEALTHCHECK: $hc"; exit 1 ;; esac
user=$("${P[@]}" image inspect "$IMAGE" --format '{{.User}}')
[ "$user" = "65532:65532" ] || { echo "image user $user, want 65532:65532 (non-root)"; exit 1; }

persistent=0
if "$ctx/paykit-sandbox" -help 2>&1 | grep -q -- '^  -db '; then persistent=1; fi

start() {
  # --no-healthcheck: Podman schedules health checks through systemd
  # timers, which CI lacks; the loop below runs the image's own check
  # command instead, exactly as the HEALTHCHECK would (no arguments: the
  # address comes from PAYKIT_SANDBOX_ADDR, as for the server).
  "${P[@]}" run -d --no-healthcheck --name "$NAME" --ulimit host --network host -v "$VOLUME:/data" \
    -e PAYKIT_SANDBOX_ADDR="127.0.0.1:$PORT" -e PAYKIT_SANDBOX_CONTROL_TOKEN="$TOKEN" \
    -e PAYKIT_SANDBOX_AUTOPILOT=true -e PAYKIT_SANDBOX_AUTOPILOT_PAYOUT_DELAY=50ms \
    -e PAYKIT_SANDBOX_AUTOPILOT_VERIFY_DELAY=1h \
    "$IMAGE" >/dev/null
  for _ in $(seq 1 100); do
    if "${P[@]}" exec "$NAME" /paykit-sandbox healthcheck >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  "${P[@]}" logs "$NAME" || true
  echo "the container never became ready"; exit 1
}

phase() {
  PAYKIT_CONTAINER_URL=http://127.0.0.1:$PORT PAYKIT_CONTAINER_TOKEN=$TOKEN PAYKIT_CONTAINER_PHASE=$1 \
    PAYKIT_CONTAINER_STATE=$state go test -count=1 -v -run '^TestContainer$' ./internal/sandboxcli/ >"$state.log" 2>&1 || {
    cat "$state.log"; "${P[@]}" logs "$NAME" || true; echo "TestContainer ($1) failed"; exit 1
  }
  grep -q -- '--- PASS: TestContainer ' "$state.log" || { cat "$state.log"; echo "TestContainer ($1) did not run"; exit 1; }
}

start
echo "container ready: image $("${P[@]}" image inspect "$IMAGE" --format '{{.Size}}') bytes, user $user"
phase create
echo "flow driven through the SDK against the container"

"${P[@]}" stop -t 10 "$NAME" >/dev/null # SIGTERM: a graceful shutdown
code=$("${P[@]}" inspect "$NAME" --format '{{.State.ExitCode}}')
[ "$code" = "0" ] || { "${P[@]}" logs "$NAME" || true; echo "exit code $code after SIGTERM, want 0"; exit 1; }
"${P[@]}" rm "$NAME" >/dev/null
start
if [ "$persistent" -eq 1 ]; then
  phase check
  echo "state kept across the restart on the same volume"
else
  phase serve
  echo "NOTE: this binary has no -db flag yet: the restarted container serves on the same volume, but its state is not looked for"
fi
echo "container step took $(($(date +%s) - start_s))s"
