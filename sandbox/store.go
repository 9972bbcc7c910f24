package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/paykit-dev/paykit-go/sandbox/internal/autopilot"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
	storage "github.com/paykit-dev/paykit-go/sandbox/internal/store"
	"github.com/paykit-dev/paykit-go/sandbox/internal/webhook"
)

// store is where the sandbox keeps its resources: core, the
// storage.Store (the Store the ledger defines with the outbox beside it).
// storage.Memory keeps Go maps (no Config.DBPath: today's speed for tests)
// and storage.SQL an SQLite file. Every method is called with Server.mu
// held, inside one section that Server.commit ends with commit: a
// section's changes reach the file together or not at all. Both stores
// hand out copies and keep only what is saved (see ledger.Store), so a
// forgotten save loses the change in memory as on a file, and the suite in
// memory catches it.
//
// The rules and the sandbox call core by the Store's own names; the struct
// adds only what the sandbox needs besides: the autopilot's view of what
// is in flight, and the outbox in the webhooks' form.
type store struct{ core storage.Store }

// inFlight lists what the autopilot may still move.
func (s store) inFlight() []autopilot.InFlight {
	pm, po, wd := s.core.InFlight()
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

// outbox records dl in the section's transaction.
func (s store) outbox(key string, dl delivery) { s.core.Outbox(key, dl.out()) }

// journal keeps the sandbox's diagnostics, apart from its resources: the
// clock offset, the faults, the request counters and log, and the
// delivery log's updates. In memory they live in the Server alone
// (memJournal keeps nothing); with Config.DBPath they are written with
// the next change, so that a restart finds them.
type journal interface {
	saveOffset(d time.Duration)
	saveFaults(f []*Fault)
	// saveCounters records the request counters; the journal may write
	// them with the next change rather than at once (they are
	// diagnostics).
	saveCounters(c map[routeKey]int)
	// logRequest records one line of the request log, lazily like
	// saveCounters.
	logRequest(r RequestRecord)
	// deliveryUpdated records a delivery's attempts and state, lazily.
	deliveryUpdated(rec Delivery)
}

// memJournal is the journal without Config.DBPath: the Server's memory is
// the only copy, and nothing survives it.
type memJournal struct{}

func (memJournal) saveOffset(time.Duration)      {}
func (memJournal) saveFaults([]*Fault)           {}
func (memJournal) saveCounters(map[routeKey]int) {}
func (memJournal) logRequest(RequestRecord)      {}
func (memJournal) deliveryUpdated(Delivery)      {}

// SchemaVersion is the version of the database layout this sandbox writes,
// kept in PRAGMA user_version. A file of an older version is migrated when
// opened; one of a newer version is refused.
const SchemaVersion = storage.SchemaVersion

// errNoDriver is Open's answer when Config.DBPath is set but no database
// driver is registered: the program lacks the import it names.
var errNoDriver = errors.New(`sandbox: Config.DBPath is set but no database driver is registered: ` +
	`add import _ "github.com/paykit-dev/paykit-go/sandbox/sqlite" to the program (paykit-sandbox and paykit sandbox have it)`)

// uiListLimit bounds the rows the dashboard shows per list: the newest
// ones. A staging sandbox holds hundreds of thousands of payments; a page
// that rendered them all would be useless and pin memory.
const uiListLimit = 500

// startMerchants turns the configured merchants into their starting
// state, in their configured order.
func startMerchants(cfg []Merchant) []*merchant {
	out := make([]*merchant, 0, len(cfg))
	for _, mc := range cfg {
		m := &merchant{APIKey: mc.APIKey, Name: mc.Name}
		for _, t := range mc.Terminals {
			m.Terminals = append(m.Terminals, &terminal{
				ID: t.ID, Name: t.Name, Balance: ledger.Balance{Available: t.Balance, Frozen: t.BalanceFrozen},
				Fee: t.WithdrawalFee, Active: t.IsActive,
			})
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
type sqlJournal struct {
	st       *storage.SQL
	counters map[routeKey]int // under Server.mu: the Server's, as of the last saveCounters
	list     func() []storage.Counter
}

func newSQLJournal(st *storage.SQL) *sqlJournal {
	j := &sqlJournal{st: st}
	j.list = j.counterList // one method value, not one per request
	return j
}

func (j *sqlJournal) saveOffset(d time.Duration) { j.st.SaveOffset(d) }

func (j *sqlJournal) saveFaults(f []*Fault) {
	if f == nil {
		f = []*Fault{}
	}
	b, _ := json.Marshal(f) // plain fields: cannot fail
	j.st.SaveFaults(b)
}

func (j *sqlJournal) saveCounters(c map[routeKey]int) {
	j.counters = c
	j.st.CountersChanged(j.list)
}

// counterList is the counters as the store writes them, called within a
// commit (under Server.mu).
func (j *sqlJournal) counterList() []storage.Counter {
	out := make([]storage.Counter, 0, len(j.counters))
	for k, n := range j.counters {
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
// resources, decoded: the Server takes it in openStore.
type restoredState struct {
	offset     time.Duration
	faults     []*Fault
	counters   map[routeKey]int
	reqLog     []RequestRecord // oldest first, at most DefaultRequestLogSize
	deliveries []webhook.Stored
}

// restore reads the journal back from st.
func (j *sqlJournal) restore() (restoredState, error) {
	r := j.st.Restore()
	out := restoredState{offset: r.Offset, counters: make(map[routeKey]int, len(r.Counters)), deliveries: r.Deliveries}
	if r.Faults != nil {
		if err := json.Unmarshal(r.Faults, &out.faults); err != nil {
			return out, fmt.Errorf("stored faults: %w", err)
		}
		if slices.Contains(out.faults, nil) {
			// Valid JSON, but no fault: refused like any malformed record,
			// rather than armed as a nil that the first request trips on.
			return out, errors.New("stored faults: a null entry")
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

// durable is the SQL store as the group commit asks it (durableStore).
type durable struct{ st *storage.SQL }

func (d durable) lastCommit() uint64         { return d.st.LastCommit() }
func (d durable) pending() bool              { return d.st.Pending() }
func (d durable) needs(synced uint64) uint64 { return d.st.Needs(synced) }
func (d durable) syncWAL() error             { return d.st.SyncWAL() }
func (d durable) salvage()                   { d.st.Salvage() }
