package service

import (
	"context"
	"slices"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox/internal/api"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
)

// The Service is the merchant API's api.Backend: the API (package api)
// reads, checks and renders; each method is one section of the state
// (begin, the rule, the store, commit) and returns copies.
var _ api.Backend = (*Service)(nil)

// Credential is how the merchant key's requests are authenticated, fixed
// by the configuration (read without the lock).
func (s *Service) Credential(key string) (paykit.Signer, bool, bool) {
	m, ok := s.creds[key]
	return m.Signer, m.AcceptUnsigned, ok
}

// Ready is the readiness of /readyz: the store can be used.
func (s *Service) Ready(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.grp.Ping()
}

// CatchUp runs the autopilot steps now due.
func (s *Service) CatchUp() {
	if s.pilot != nil {
		s.pilot.RunDue(s.Now())
	}
}

// Served keeps the request in the request log.
func (s *Service) Served(r api.Served) { s.recordRequest(r) }

// Banks is the configured list GET /v1/banks answers.
func (s *Service) Banks() []ledger.Bank { return slices.Clone(s.cfg.Banks) }
