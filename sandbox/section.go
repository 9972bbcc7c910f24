package sandbox

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
)

// heldHook is a webhook a section decided to send: it is queued for
// delivery only once the section has committed, so no receiver hears of a
// change the store then failed to keep.
type heldHook struct {
	key string
	dl  delivery
}

// ErrStore is wrapped by the errors of a store that cannot be used: a
// commit that failed (disk full, the file removed or damaged underneath).
// After one the Server answers every request 503 SANDBOX_STORE and /readyz
// 503, because what it holds in memory may no longer match the file;
// restarting it on the same file resumes from the last committed state.
var ErrStore = errors.New("sandbox: the database cannot be used")

// begin opens a section: it takes the Server's lock, and everything the
// rules change until commit is one transaction of the store.
func (s *Server) begin() { s.mu.Lock() }

// commit ends the section: it commits the store's transaction (before any
// answer is written: callers commit before they return the value their
// handler writes), then releases the webhooks the section held, and the
// lock.
func (s *Server) commit() {
	s.checkpointLocked()
	s.mu.Unlock()
}

// checkpointLocked commits what the section did so far and sends its held
// webhooks; the section may go on (expiry of a long backlog commits in
// batches).
func (s *Server) checkpointLocked() {
	if err := s.st.commit(); err != nil && s.storeErr == nil {
		s.storeErr = fmt.Errorf("%w: %v", ErrStore, err)
		if l := s.cfg.Logger; l != nil {
			l.Error("database commit failed: answering 503 until restarted", slog.String("error", err.Error()))
		}
	}
	if s.storeErr == nil {
		for _, h := range s.held {
			s.hooks.queue(h.key, h.dl)
		}
	}
	clear(s.held)
	s.held = s.held[:0]
}

// storeFailed returns the error of a failed commit, or nil.
func (s *Server) storeFailed() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.storeErr
}

// orStoreErr is the error a Go control returns: the store's when it
// failed, else the control's own.
func (s *Server) orStoreErr(err error) error {
	if serr := s.storeFailed(); serr != nil {
		return serr // the control's own answer came from a store that failed
	}
	return err
}

// storeUnavailable is the answer of the API when the store failed.
func storeUnavailable() *apiError {
	return newErr(http.StatusServiceUnavailable, "SANDBOX_STORE",
		"the sandbox's database cannot be used; see its log, fix the cause and restart it")
}

// enqueueLocked sends a webhook of the current section (see outboxLocked).
func (s *Server) enqueueLocked(h hook, target, token string, v any) {
	if key, dl, ok := s.hooks.prepare(h, target, token, v); ok {
		s.outboxLocked(key, dl)
	}
}

// outboxLocked records a delivery in the store's outbox within the current
// section and holds it until the section commits.
func (s *Server) outboxLocked(key string, dl delivery) {
	s.st.outbox(key, dl)
	s.held = append(s.held, heldHook{key: key, dl: dl})
}

// deliveryUpdated is the dispatcher's report of an attempt or an end.
func (s *Server) deliveryUpdated(rec Delivery) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.deliveryUpdated(rec)
}

// openStore opens the store Config.DBPath names (or the in-memory one),
// builds the merchants from it and returns the deliveries to restore.
func (s *Server) openStore() ([]storedDelivery, error) {
	path := s.cfg.DBPath
	if path == "" && testDBPath != nil {
		path, s.removeDB = testDBPath()
	}
	if path == "" {
		s.st = newMemStore(s.cfg.Merchants)
		s.merchants = s.st.merchants()
		return nil, nil
	}
	st, err := openSQLStore(s, path)
	if err != nil {
		return nil, err
	}
	s.st = st
	s.mu.Lock()
	defer s.mu.Unlock()
	s.merchants = st.merchants()
	restored := st.restore(s)
	st.wrote = true // a new file's merchants and terminals
	if err := st.commit(); err != nil {
		st.close()
		return nil, openError(path, "%v", err)
	}
	return restored, nil
}

// testDBPath, when set, gives each Server without Config.DBPath a file of
// its own and the function that removes it after Close. Only the package's
// tests set it (PAYKIT_SANDBOX_TEST_DB=file, in helpers_test.go), so the
// whole suite runs once more on SQLite; a program never does.
var testDBPath func() (path string, remove func())
