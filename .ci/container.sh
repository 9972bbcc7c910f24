#!/usr/bin/env bash
# The sandbox in a container (issue 21, point 6), following
# ../shared/CONTAINERS.md: no registry is reachable, so the image is
# .ci/Dockerfile.ci, FROM scratch with the locally built static binary (the
# root Dockerfile's runtime stage). It runs under Podman with host
# networking, the SDK drives a flow against it (TestContainer), the
# container is restarted on the same volume, and the state must be kept.
# The restart check needs the binary's -db flag; until it exists, the
# script says so and checks only that the restarted container serves.
set -euo pipefail
cd "$(dirname "$0")/.."

PORT=${PAYKIT_CONTAINER_PORT:-18089}
NAME=paykit-sandbox-ci-$$
VOLUME=paykit-sandbox-ci-$$

if ! command -v podman >/dev/null 2>&1 || ! command -v runc >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq podman runc >/dev/null
fi
conf=$(mktemp)
ctx=$(mktemp -d)
state=$(mktemp)
printf '[containers]\ndefault_ulimits = []\n' >"$conf"
export CONTAINERS_CONF=$conf
P=(podman --runtime runc --cgroup-manager=cgroupfs)
cleanup() {
  "${P[@]}" rm -f "$NAME" >/dev/null 2>&1 || true
  "${P[@]}" volume rm -f "$VOLUME" >/dev/null 2>&1 || true
  rm -rf "$conf" "$ctx" "$state" "$state.log"
}
trap cleanup EXIT

CGO_ENABLED=0 go build -trimpath -o "$ctx/paykit-sandbox" ./cmd/paykit-sandbox
if file "$ctx/paykit-sandbox" 2>/dev/null | grep -q 'dynamically linked'; then
  echo "paykit-sandbox is not static"; exit 1
fi
cp /etc/ssl/certs/ca-certificates.crt "$ctx/" 2>/dev/null || : >"$ctx/ca-certificates.crt"
mkdir "$ctx/data"
"${P[@]}" build -q --format docker -t paykit-sandbox:ci -f .ci/Dockerfile.ci "$ctx" >/dev/null

hc=$("${P[@]}" image inspect paykit-sandbox:ci --format '{{.HealthCheck.Test}}')
case "$hc" in *healthcheck*) ;; *) echo "image without its HEALTHCHECK: $hc"; exit 1 ;; esac

persistent=0
if "$ctx/paykit-sandbox" -help 2>&1 | grep -q -- '^  -db '; then persistent=1; fi

start() {
  # --no-healthcheck: Podman schedules health checks through systemd, which
  # CI lacks; the loop below runs the image's check command itself.
  "${P[@]}" run -d --no-healthcheck --name "$NAME" --ulimit host --network host -v "$VOLUME:/data" \
    paykit-sandbox:ci -addr "127.0.0.1:$PORT" >/dev/null
  # The image's own health check, run the way the HEALTHCHECK runs it.
  for _ in $(seq 1 100); do
    if "${P[@]}" exec "$NAME" /paykit-sandbox healthcheck -addr "127.0.0.1:$PORT" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  "${P[@]}" logs "$NAME"; echo "the container never became ready"; exit 1
}

start
user=$("${P[@]}" exec "$NAME" /paykit-sandbox healthcheck -addr "127.0.0.1:$PORT")
echo "container ready ($user), image $("${P[@]}" image inspect paykit-sandbox:ci --format '{{.Size}}') bytes, user $("${P[@]}" image inspect paykit-sandbox:ci --format '{{.Config.User}}')"
PAYKIT_CONTAINER_URL=http://127.0.0.1:$PORT PAYKIT_CONTAINER_PHASE=create PAYKIT_CONTAINER_STATE=$state \
  go test -count=1 -v -run '^TestContainer$' ./internal/sandboxcmd/ | tee "$state.log"
grep -q -- '--- PASS: TestContainer' "$state.log" || { echo "TestContainer did not run"; exit 1; }

"${P[@]}" stop -t 10 "$NAME" >/dev/null   # SIGTERM: a graceful shutdown
"${P[@]}" rm "$NAME" >/dev/null
start
if [ "$persistent" -eq 1 ]; then
  PAYKIT_CONTAINER_URL=http://127.0.0.1:$PORT PAYKIT_CONTAINER_PHASE=check PAYKIT_CONTAINER_STATE=$state \
    go test -count=1 -v -run '^TestContainer$' ./internal/sandboxcmd/ | tee "$state.log"
grep -q -- '--- PASS: TestContainer' "$state.log" || { echo "TestContainer did not run"; exit 1; }
  echo "state kept across the restart"
else
  echo "NOTE: this binary has no -db flag yet: the restarted container serves, but state is not checked"
fi
