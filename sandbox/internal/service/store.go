package service

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/paykit-dev/paykit-go/sandbox/internal/api"
	"github.com/paykit-dev/paykit-go/sandbox/internal/autopilot"
	storage "github.com/paykit-dev/paykit-go/sandbox/internal/store"
	"github.com/paykit-dev/paykit-go/sandbox/internal/webhook"
)

// inFlight lists what the autopilot may still move, as tx sees it.
func inFlight(tx storage.Txn) []autopilot.InFlight {
	pm, po, wd := tx.InFlight()
	var out []autopilot.InFlight
	for _, p := range pm {
		out = appendInFlightPayment(out, p)
	}
	for _, p := range po {
		out = appendInFlightPayout(out, p)
	}
	for _, w := range wd {
		out = appendInFlightWithdrawal(out, w)
	}
	return out
}

// journal keeps the sandbox's diagnostics, apart from its resources: the
// clock offset, the faults, the request log and the delivery log's
// updates (the request counters reach the SQL store through
// SetCounters/CountersChanged instead). In memory they live in the
// Service alone (memJournal keeps nothing); with Config.DBPath they are
// written with the next change, so that a restart finds them.
type journal interface {
	saveOffset(d time.Duration)
	saveFaults(f []api.Fault)
	// logRequest records one line of the request log, lazily.
	logRequest(r RequestRecord)
	// deliveryUpdated records a delivery's attempts and state, lazily.
	deliveryUpdated(rec Delivery)
}

// memJournal is the journal without Config.DBPath: the Service's memory is
// the only copy, and nothing survives it.
type memJournal struct{}

func (memJournal) saveOffset(time.Duration) {}
func (memJournal) saveFaults([]api.Fault)   {}
func (memJournal) logRequest(RequestRecord) {}
func (memJournal) deliveryUpdated(Delivery) {}

// ErrNoDriver is Open's answer when Config.DBPath is set but no database
// driver is registered: the program lacks the import it names.
var ErrNoDriver = errors.New(`sandbox: Config.DBPath is set but no database driver is registered: ` +
	`add import _ "github.com/paykit-dev/paykit-go/sandbox/sqlite" to the program (paykit-sandbox and paykit sandbox have it)`)

// uiListLimit bounds the rows the dashboard shows per list: the newest
// ones. A staging sandbox holds hundreds of thousands of payments; a page
// that rendered them all would be useless and pin memory.
const uiListLimit = 500

// startMerchants builds the configured merchants' starting state, in
// their configured order: each a fresh copy, so a Reset starts over.
func startMerchants(cfg []Merchant) []*merchant {
	out := make([]*merchant, 0, len(cfg))
	for _, mc := range cfg {
		m := &merchant{APIKey: mc.APIKey, Name: mc.Name}
		for _, t := range mc.Terminals {
			t := t
			m.Terminals = append(m.Terminals, &t)
		}
		out = append(out, m)
	}
	return out
}

// sqlJournal is the journal with Config.DBPath: the SQL store's, which
// writes the diagnostics with the next commit of a change. The faults and
// the request log's lines reach it encoded as JSON: the store keeps them
// as text and gives them back at start, and their public types (Fault,
// RequestRecord) stay the one definition of that form, here.
type sqlJournal struct{ st *storage.SQL }

func newSQLJournal(st *storage.SQL) *sqlJournal { return &sqlJournal{st: st} }

func (j *sqlJournal) saveOffset(d time.Duration) { j.st.SaveOffset(d) }

func (j *sqlJournal) saveFaults(f []api.Fault) {
	if f == nil {
		f = []api.Fault{}
	}
	b, _ := json.Marshal(f) // plain fields: cannot fail
	j.st.SaveFaults(b)
}

// counterList is the request counters as the store writes them, called
// within a commit (under the lock, then reqMu).
func (s *Service) counterList() []storage.Counter {
	s.reqMu.Lock()
	defer s.reqMu.Unlock()
	out := make([]storage.Counter, 0, len(s.requests))
	for k, n := range s.requests {
		out = append(out, storage.Counter{Method: k.method, Route: k.route, N: n})
	}
	return out
}

func (j *sqlJournal) logRequest(r RequestRecord) {
	b, _ := json.Marshal(r) // plain fields: cannot fail
	j.st.LogRequest(b)
}

func (j *sqlJournal) deliveryUpdated(rec Delivery) { j.st.DeliveryUpdated(rec) }

// restoredState is what a file gives back at start besides the
// resources, decoded: the Service takes it in openStore.
type restoredState struct {
	offset     time.Duration
	faults     []api.Fault
	counters   map[routeKey]int
	reqLog     []RequestRecord // oldest first, at most RequestLogSize
	deliveries []webhook.Stored
}

// restore reads the journal back from st.
func (j *sqlJournal) restore() (restoredState, error) {
	r := j.st.Restore()
	out := restoredState{offset: r.Offset, counters: make(map[routeKey]int, len(r.Counters)), deliveries: r.Deliveries}
	if r.Faults != nil {
		var faults []*api.Fault
		if err := json.Unmarshal(r.Faults, &faults); err != nil {
			return out, fmt.Errorf("stored faults: %w", err)
		}
		if slices.Contains(faults, nil) {
			// Valid JSON, but no fault: refused like any malformed record,
			// rather than armed as a nil that the first request trips on.
			return out, errors.New("stored faults: a null entry")
		}
		for _, f := range faults {
			out.faults = append(out.faults, *f)
		}
	}
	for _, c := range r.Counters {
		out.counters[routeKey{method: c.Method, route: c.Route}] = c.N
	}
	for _, b := range r.RequestLog {
		var rec RequestRecord
		if err := json.Unmarshal(b, &rec); err != nil {
			return out, fmt.Errorf("stored request log: %w", err)
		}
		out.reqLog = append(out.reqLog, rec)
	}
	return out, nil
}
