package sandbox

import (
	"github.com/paykit-dev/paykit-go/sandbox/internal/api"
)

// Health endpoints for orchestrators (a container's HEALTHCHECK, a
// Kubernetes probe, a compose depends_on), served by package api without
// authentication, Host check, fault or log.
const (
	// HealthzPath answers 200 {"status":"ok"} whenever the process serves.
	HealthzPath = api.HealthzPath
	// ReadyzPath answers 200 {"status":"ready"} when the sandbox can serve
	// requests (its storage usable), else 503 {"status":"unavailable"}.
	ReadyzPath = api.ReadyzPath
)
