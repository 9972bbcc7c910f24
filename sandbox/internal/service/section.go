package service

import (
	"github.com/paykit-dev/paykit-go/internal/mask"
	"github.com/paykit-dev/paykit-go/internal/spec"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
	storage "github.com/paykit-dev/paykit-go/sandbox/internal/store"
	"github.com/paykit-dev/paykit-go/sandbox/internal/webhook"
)

// heldHook is a webhook a section decided to send: it is queued for
// delivery only once the section has committed, so no receiver hears of a
// change the store then failed to keep.
type heldHook struct {
	key  string
	dl   delivery // none when dl.rec is nil: the change is only for the listen feed
	note heldNote // nothing when merchant is empty
}

// begin opens a section: it takes the Service's lock, and everything the
// rules change until commit is one transaction of the store (see
// storage.Group, which commits it and, with -db, shares one fsync between
// the sections that commit meanwhile).
func (s *Service) begin() { s.tx = s.grp.Begin() }

// lock takes the Service's lock outside a section, to read its memory or
// note a diagnostic (kept with the next commit); see storage.Group.Lock.
func (s *Service) lock() { s.grp.Lock() }

func (s *Service) unlock() { s.grp.Unlock() }

// commit ends the section (end), for a section whose answer does not
// depend on what became of its changes, or that asks StoreFailed.
func (s *Service) commit() { s.end() }

// endInto ends the section (end) and, when its changes were not kept or
// may have been, puts that outcome in *lerr instead of the rule's answer:
// the API answers it (NotKept 503, MaybeKept 500).
func (s *Service) endInto(lerr **ledger.Error) {
	if out := s.end(); out != nil {
		*lerr = out
	}
}

// endErr ends the section (end) and, when its changes were not kept or may
// have been, puts that outcome (ledger.NotKept or MaybeKept) in *err
// instead of the control's own answer: the control routes answer it (503
// or 500), package sandbox's Go controls wrap ErrStore around it.
func (s *Service) endErr(err *error) {
	if out := s.end(); out != nil {
		*err = out
	}
}

// The outcomes of a section whose store failed (end).
var (
	errNotKept = &ledger.Error{Kind: ledger.NotKept, Code: spec.CodeSandboxStore,
		Message: "the sandbox's database failed: the change was not kept"}
	errMaybeKept = &ledger.Error{Kind: ledger.MaybeKept, Code: spec.CodeSandboxStore,
		Message: "the sandbox's database failed while making the change durable: it may or may not be kept"}
)

// end ends the section and says what became of its changes, as the API
// answers it: nil when they are kept (committed and, with -db, synced) or
// there were none to keep and what the section read is durable;
// errNotKept (503) when they were rolled back; errMaybeKept (500) when
// they were committed and the sync that would have made them durable
// failed. It returns once the answer is true (storage.Group.End); the
// section's webhooks are released after the same sync.
func (s *Service) end() *ledger.Error {
	switch s.grp.End() {
	case storage.NotKept:
		return errNotKept
	case storage.MaybeKept:
		return errMaybeKept
	}
	return nil
}

// checkpointLocked commits what the section did so far and sends its held
// webhooks (with -db, once the commit is synced); the section may go on
// (expiry of a long backlog commits in batches). See storage.Group.Checkpoint.
func (s *Service) checkpointLocked() { s.grp.Checkpoint() }

// StoreFailed returns the error of a failed commit, or nil.
func (s *Service) StoreFailed() error {
	s.lock()
	defer s.unlock()
	return s.grp.Err()
}

// outboxLocked records a delivery in the store's outbox within the current
// section and holds it until the section commits.
func (s *Service) outboxLocked(key string, dl delivery) {
	s.tx.Outbox(key, dl.out())
	s.grp.Hold(heldHook{key: key, dl: dl})
}

// deliveryUpdated is the dispatcher's report of an attempt or an end. An
// attempt is kept with the next commit; an end is committed now (with
// whatever waits in the open transaction), since a delivery not recorded as
// ended is sent again at the next start, and on a quiet sandbox the next
// commit may be far off. It is not synced for itself: a kill keeps it (the
// -wal file's writes are the kernel's), a power cut before the next sync may
// not, and the webhook is then sent again, as at-least-once allows.
func (s *Service) deliveryUpdated(rec Delivery) {
	s.lock()
	defer s.unlock()
	s.jr.deliveryUpdated(rec)
	if rec.State != webhook.Pending && s.grp.Deferred() {
		s.checkpointLocked()
	}
}

// openStore opens the store Config.DBPath names (or the in-memory one),
// builds the merchants from it and returns the deliveries to restore.
func (s *Service) openStore() ([]webhook.Stored, error) {
	path := s.cfg.DBPath
	if path == "" && s.cfg.TestDB != nil {
		path, s.removeDB = s.cfg.TestDB()
	}
	if path == "" {
		start := func() []*merchant { return startMerchants(s.cfg.Merchants) }
		s.grp, s.jr = storage.NewGroup(storage.NewMemory(start), s.groupConfig()), memJournal{}
		s.countersChanged = func() {} // memory: the counters are only in the Service
		return nil, nil
	}
	drv, ok := storage.Registered()
	if !ok {
		return nil, ErrNoDriver
	}
	st, err := storage.OpenSQL(drv, storage.SQLDeps{
		Start:  func() []*merchant { return startMerchants(s.cfg.Merchants) },
		Logger: s.cfg.Logger, MaskKey: mask.Key, Banks: s.cfg.Banks, MaxSamePending: s.cfg.MaxSamePendingAmount,
		RequestLogSize: RequestLogSize, DeliveryLogSize: DeliveryLogSize,
	}, path)
	if err != nil {
		return nil, err
	}
	jr := newSQLJournal(st)
	st.SetCounters(s.counterList)
	s.countersChanged = st.CountersChanged
	st.LoadMerchants() // nothing runs yet: no section to wait for
	s.grp, s.jr = storage.NewGroup(st, s.groupConfig()), jr
	r, err := jr.restore()
	if err != nil {
		st.Close()
		return nil, storage.FileError(path, "%v", err)
	}
	st.SetValue(offsetKey, r.offset)
	st.SetValue(faultsKey, r.faults)
	s.faultsArmed.Store(len(r.faults) > 0)
	s.requests = r.counters
	s.reqLog = append(s.reqLog, r.reqLog...)
	if len(s.reqLog) == RequestLogSize {
		s.reqPos = 0 // the ring is full: its oldest line is the next overwritten
	}
	st.MarkWritten() // a new file's merchants and terminals
	// What a restart gives back is on disk before the first request.
	if err := st.CommitSynced(); err != nil {
		st.Close()
		return nil, storage.FileError(path, "%v", err)
	}
	return r.deliveries, nil
}

// groupConfig is how the Service's sections commit: a failed store is
// ErrStore, and what a section held is released once it is kept.
func (s *Service) groupConfig() storage.GroupConfig[heldHook] {
	return storage.GroupConfig[heldHook]{Release: s.release, Failed: ErrStore, Logger: s.cfg.Logger}
}
