package store

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/paykit-dev/paykit-go/sandbox/internal/webhook"
)

// The SQL store's journal of diagnostics (clock offset, faults, request
// counters and log, the outbox and delivery log), written with the
// transactions of the changes, and read back at start.

// ---- clock, faults, diagnostics

func (st *SQL) setMeta(key string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		st.fail(err)
		return
	}
	st.exec(`INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, string(b))
}

func (st *SQL) meta(key string, v any) bool {
	var s string
	if !st.one([]any{&s}, `SELECT value FROM meta WHERE key = ?`, key) {
		return false
	}
	if err := json.Unmarshal([]byte(s), v); err != nil {
		st.fail(fmt.Errorf("stored %s: %w", key, err)) // says which record refuses the file
	}
	return true
}

// The journal: the sandbox's diagnostics, kept with the resources' next
// commit (sandbox/internal/service's journal interface calls these).

// SaveOffset records the clock offset.
func (st *SQL) SaveOffset(d time.Duration) { st.setMeta("offset", int64(d)) }

// SaveFaults records the armed faults, as the sandbox encodes them (JSON).
func (st *SQL) SaveFaults(encoded []byte) { st.setMeta("faults", json.RawMessage(encoded)) }

// CountersChanged and LogRequest keep diagnostics: they are written with
// a commit that changes state anyway (and at close), never with an fsync
// of their own, so a GET costs no disk write; and only with the first such
// commit after DiagEvery commits or diagAfter since they were last written,
// so that a busy sandbox does not rewrite the counters' row and the request
// log's pages with every change. A kill loses the request lines and
// counts of at most that interval before the last change and those after
// it, never a resource. CountersChanged says the request counters
// changed: it may be called without the sandbox's lock (a request counts
// itself on arrival, before it takes the lock, if it takes it at all);
// the counters SetCounters gave are read when they are written.
func (st *SQL) CountersChanged() { st.countersDirty.Store(true) }

// SetCounters gives the request counters as they are when written, under
// the sandbox's lock; set once, before the first section.
func (st *SQL) SetCounters(counters func() []Counter) { st.counters = counters }

// LogRequest records one line of the request log, as the sandbox encodes
// it (JSON).
func (st *SQL) LogRequest(encoded []byte) {
	st.reqs = append(st.reqs, encoded)
	if len(st.reqs) > st.deps.RequestLogSize {
		st.reqs = st.reqs[len(st.reqs)-st.deps.RequestLogSize:]
	}
}

// Outbox: see Store.
func (st *SQL) Outbox(key string, o webhook.Outgoing) {
	rec, err := json.Marshal(o.Rec)
	if err != nil {
		st.fail(err)
		return
	}
	// Keyed by the delivery's id: no section reads the outbox back (the
	// dispatcher keeps its own log), only a start does.
	st.execRow(o.Rec.ID, `INSERT INTO deliveries (id, key, url, token, body, rec, state) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		o.Rec.ID, key, o.URL, o.Token, o.Body, string(rec), o.Rec.State)
}

// DeliveryUpdated records a delivery's attempts and state: an attempt
// lazily (written with the next commit of a change), an end so that the
// next Commit writes it even when nothing else changed (the sandbox
// commits it at once: a delivery not recorded as ended is sent again at
// the next start). Neither makes a section wait for its sync: the
// delivery log is a diagnostic nobody's answer reads.
func (st *SQL) DeliveryUpdated(rec webhook.Delivery) {
	if st.closed {
		return
	}
	if st.dlv == nil {
		st.dlv = map[string]webhook.Delivery{}
	}
	st.dlv[rec.ID] = rec
	if rec.State != webhook.Pending && st.q() != nil {
		st.wrote = true
	}
}

// DiagEvery and diagAfter say how often a commit carries the request
// counters and log lines (see CountersChanged): they bound what a kill
// loses of them, and how many times one page of the request log is
// rewritten.
const (
	DiagEvery = 64
	diagAfter = 200 * time.Millisecond
)

// flushLazy writes the diagnostics gathered since the last commit: the
// deliveries' records always, the counters and request lines when all or
// when they are due (DiagEvery, diagAfter).
func (st *SQL) flushLazy(all bool) {
	st.lazy = true
	defer func() { st.lazy = false }()
	st.diagN++
	if !all && st.diagN < DiagEvery && time.Since(st.diagAt) < diagAfter {
		st.flushDeliveries()
		return
	}
	st.diagN, st.diagAt = 0, time.Now()
	if st.countersDirty.Swap(false) && st.counters != nil {
		c := st.counters()
		if c == nil {
			c = []Counter{}
		}
		st.setMeta("counters", c)
	}
	if len(st.reqs) > 0 {
		for _, r := range st.reqs {
			st.exec(`INSERT INTO reqlog (rec) VALUES (?)`, string(r))
		}
		st.reqs = st.reqs[:0]
		st.exec(`DELETE FROM reqlog WHERE seq <= (SELECT max(seq) FROM reqlog) - ?`, st.deps.RequestLogSize)
	}
	st.flushDeliveries()
}

// flushDeliveries writes the deliveries' records gathered since the last
// commit: with every change, as a delivery not recorded as ended is sent
// again at the next start.
func (st *SQL) flushDeliveries() {
	if len(st.dlv) > 0 {
		for id, rec := range st.dlv {
			b, _ := json.Marshal(rec)
			st.exec(`UPDATE deliveries SET rec = ?, state = ? WHERE id = ?`, string(b), rec.State, id)
		}
		clear(st.dlv)
		// The log keeps the newest DeliveryLogSize deliveries, as
		// in memory; one still owed stays whatever its age.
		st.exec(`DELETE FROM deliveries WHERE state <> ? AND seq <= (SELECT max(seq) FROM deliveries) - ?`,
			webhook.Pending, st.deps.DeliveryLogSize)
	}
}

// Counter is one request counter of the journal: how many requests one
// method and route template had.
type Counter struct {
	// Method is the HTTP method, or OTHER.
	Method string `json:"method"`
	// Route is the route template that served them.
	Route string `json:"route"`
	// N is how many.
	N int `json:"n"`
}

// ---- restoring at start

// Restored is what a file gives back at start besides the resources: the
// journal, for the caller to take back into its memory.
type Restored struct {
	// Offset is the clock offset.
	Offset time.Duration
	// Faults are the armed faults as SaveFaults was given them (nil: none
	// recorded).
	Faults []byte
	// Counters are the request counters.
	Counters []Counter
	// RequestLog is the request log, oldest first, at most
	// RequestLogSize lines, each as LogRequest was given it.
	RequestLog [][]byte
	// Deliveries are the deliveries still owed and the newest
	// DeliveryLogSize others, oldest first.
	Deliveries []webhook.Stored
}

// Restore reads the clock offset, faults, counters, the request log and
// the deliveries back.
func (st *SQL) Restore() Restored {
	var out Restored
	var off int64
	if st.meta("offset", &off) {
		out.Offset = time.Duration(off)
	}
	var faults json.RawMessage
	if st.meta("faults", &faults) {
		out.Faults = faults
	}
	st.meta("counters", &out.Counters)
	st.rows(func(r *sql.Rows) error {
		var b []byte
		if err := r.Scan(&b); err != nil {
			return err
		}
		out.RequestLog = append(out.RequestLog, b)
		return nil
	}, `SELECT rec FROM (SELECT seq, rec FROM reqlog ORDER BY seq DESC LIMIT ?) ORDER BY seq`, st.deps.RequestLogSize)
	st.rows(func(r *sql.Rows) error {
		var sd webhook.Stored
		var rec string
		var seq int64
		sd.Out.Rec = &webhook.Delivery{}
		if err := r.Scan(&seq, &sd.Key, &sd.Out.URL, &sd.Out.Token, &sd.Out.Body, &rec); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(rec), sd.Out.Rec); err != nil {
			return fmt.Errorf("stored delivery %d: %w", seq, err)
		}
		out.Deliveries = append(out.Deliveries, sd)
		return nil
	}, `SELECT seq, key, url, token, body, rec FROM deliveries
		WHERE state = ? OR seq > (SELECT coalesce(max(seq), 0) FROM deliveries) - ? ORDER BY seq`,
		webhook.Pending, st.deps.DeliveryLogSize)
	return out
}
