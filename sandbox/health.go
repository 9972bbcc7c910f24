package sandbox

import (
	"context"

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

// ready reports whether the sandbox can serve. The in-memory state is
// always usable; a persistent store (Config.DBPath) adds its check here.
func (s *Server) ready(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.storeErr != nil {
		return s.storeErr
	}
	err := s.st.core.Ping()
	if err != nil && s.grp.open > 0 {
		// Sections left their changes in the open transaction: its commit
		// meets the same failure now (rolled back, they are told it was
		// not kept), and a removed -wal file's commits are copied into the
		// database before this probe answers, not at some later change.
		s.checkpointLocked()
	}
	return err
}
