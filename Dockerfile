# The paykit sandbox as a shared staging provider: a static, CGO-free
# binary in an empty (scratch) image, running as a non-root user, its
# database directory a volume. Build and run:
#
#   docker build -t paykit-sandbox .
#   docker run -d -p 8080:8080 -v paykit-sandbox:/data \
#     -e PAYKIT_SANDBOX_CONTROL_TOKEN=... paykit-sandbox -autopilot
#
# Every flag is also a PAYKIT_SANDBOX_* variable (README, "Run a shared
# staging sandbox"; docs/compose.yaml is a ready compose file). CI tests the
# runtime stage below through .ci/Dockerfile.ci, which must stay its copy
# (TestDockerfilesAgree).

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
# The whole clone, .git included (.dockerignore): -buildvcs=true stamps the
# version git gives, which -version prints (.ci/image-version.sh runs this
# RUN line in a fresh clone and checks it).
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=true -ldflags="-s -w" -o /out/paykit-sandbox ./cmd/paykit-sandbox \
 && mkdir -p /out/data

FROM scratch
# CA roots for webhooks to https receivers; a scratch image has none.
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/paykit-sandbox /paykit-sandbox
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
VOLUME /data
EXPOSE 8080
# Listen on every interface of the container and answer the controls for
# any Host: remote mode, which refuses to start without
# PAYKIT_SANDBOX_CONTROL_TOKEN. PAYKIT_SANDBOX_DB keeps the state on the
# volume across restarts (a binary without -db notes that it ignores it).
ENV PAYKIT_SANDBOX_ADDR=0.0.0.0:8080 \
    PAYKIT_SANDBOX_ALLOW_REMOTE=true \
    PAYKIT_SANDBOX_DB=/data/sandbox.db \
    PAYKIT_SANDBOX_LOG_FORMAT=json
# No curl in scratch: the binary checks its own /readyz.
HEALTHCHECK --interval=10s --timeout=5s --start-period=5s --retries=3 CMD ["/paykit-sandbox", "healthcheck"]
ENTRYPOINT ["/paykit-sandbox"]
