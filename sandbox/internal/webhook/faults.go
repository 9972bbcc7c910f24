package webhook

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Faults makes deliveries misbehave on purpose, so that a receiver can be
// shown to survive what a real service's deliveries do now and then:
// arrive twice, late, or out of order. Each delivery queued draws three
// numbers from a generator seeded with Seed, in the order the deliveries
// are queued, so the same seed and the same sequence of notifications
// give the same faults (and, with one delivery worker, the same sequence
// of deliveries).
type Faults struct {
	// Duplicate is the probability, in [0,1], that a delivery is sent
	// twice: a copy with its own log record (fault "duplicate") follows it
	// once it has ended.
	Duplicate float64 `json:"duplicate"`
	// Reorder is the probability, in [0,1], that a delivery is held back
	// until the next notification of the same resource has gone first
	// (fault "reorder"), or, when none comes, for ReorderHold(Delay) on
	// the sandbox clock.
	Reorder float64 `json:"reorder"`
	// Delay is the most a delivery waits, on the sandbox clock, before its
	// first attempt: each waits a time drawn evenly from [0, Delay)
	// (fault "delay"). With an injected clock only Advance lets that time
	// pass. 0 delays none.
	Delay time.Duration `json:"delay_ns"`
	// Seed seeds the draws; a run with the same seed and the same
	// notifications replays the same faults.
	Seed int64 `json:"seed"`
}

// On says whether any fault is set.
func (f Faults) On() bool { return f.Duplicate > 0 || f.Reorder > 0 || f.Delay > 0 }

// Check refuses rates outside [0,1] (or not numbers) and a negative delay.
func (f Faults) Check() error {
	for _, r := range []struct {
		name string
		v    float64
	}{{"duplicate", f.Duplicate}, {"reorder", f.Reorder}} {
		if math.IsNaN(r.v) || r.v < 0 || r.v > 1 {
			return fmt.Errorf("webhook faults: %s is a probability and must be between 0 and 1, not %v", r.name, r.v)
		}
	}
	if f.Delay < 0 {
		return fmt.Errorf("webhook faults: delay must not be negative, not %v", f.Delay)
	}
	return nil
}

// String writes f as ParseFaults reads it.
func (f Faults) String() string {
	return "duplicate=" + strconv.FormatFloat(f.Duplicate, 'g', -1, 64) + ",reorder=" + strconv.FormatFloat(f.Reorder, 'g', -1, 64) +
		",delay=" + f.Delay.String() + ",seed=" + strconv.FormatInt(f.Seed, 10)
}

// ParseFaults reads "duplicate=0.1,reorder=0.1,delay=2s,seed=42": any of
// the four, in any order, each at most once; empty is no faults.
func ParseFaults(s string) (Faults, error) {
	var f Faults
	if strings.TrimSpace(s) == "" {
		return f, nil
	}
	var seen []string
	for _, part := range strings.Split(s, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || value == "" {
			return Faults{}, fmt.Errorf("webhook faults: %q is not name=value (duplicate=0.1,reorder=0.1,delay=2s,seed=42)", part)
		}
		if slices.Contains(seen, name) {
			return Faults{}, fmt.Errorf("webhook faults: %s is given twice", name)
		}
		seen = append(seen, name)
		var err error
		switch name {
		case "duplicate", "reorder":
			var v float64
			v, err = strconv.ParseFloat(value, 64)
			if err == nil && name == "duplicate" {
				f.Duplicate = v
			} else if err == nil {
				f.Reorder = v
			}
		case "delay":
			f.Delay, err = time.ParseDuration(value)
		case "seed":
			f.Seed, err = strconv.ParseInt(value, 10, 64)
		default:
			return Faults{}, fmt.Errorf("webhook faults: unknown setting %q; the settings are duplicate, reorder, delay and seed", name)
		}
		if err != nil {
			var ne *strconv.NumError
			if errors.As(err, &ne) {
				err = ne.Err // without strconv's echo of the value
			}
			return Faults{}, fmt.Errorf("webhook faults: %s=%s: %v", name, value, err)
		}
	}
	return f, f.Check()
}

// ReorderHold is how long a delivery held back for reordering waits for
// the next notification of its resource before it goes alone: Delay, and
// at least a second.
func ReorderHold(delay time.Duration) time.Duration { return max(delay, time.Second) }

// Fault names a delivery's log record carries (Delivery.Faults).
const (
	FaultDuplicate = "duplicate"
	FaultReorder   = "reorder"
	FaultDelay     = "delay"
)

// newRand is the generator of a Faults' draws.
func newRand(seed int64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), uint64(seed)^0x9e3779b97f4a7c15))
}

// decideLocked draws dl's faults: a wait before its first attempt, a
// hold for reordering, and a duplicate to queue behind it (nil when
// none). Three draws per delivery, whatever the rates, so that the draws
// of one delivery never depend on another's outcome.
func (d *Dispatcher) decideLocked(dl *Outgoing) *Outgoing {
	u1, u2, u3 := d.rng.Float64(), d.rng.Float64(), d.rng.Float64()
	at := dl.Rec.CreatedAt
	var names []string
	var delay time.Duration
	if d.faults.Delay > 0 {
		if delay = time.Duration(u3 * float64(d.faults.Delay)); delay > 0 {
			dl.notBefore, dl.wait = at.Add(delay), delay
			names = append(names, FaultDelay)
		}
	}
	if u2 < d.faults.Reorder {
		hold := ReorderHold(d.faults.Delay)
		dl.holdUntil, dl.holdWait = at.Add(hold), hold
		names = append(names, FaultReorder)
	}
	var dup *Outgoing
	if u1 < d.faults.Duplicate {
		c := Outgoing{URL: dl.URL, Token: dl.Token, Body: dl.Body, notBefore: dl.notBefore, wait: dl.wait}
		o := dl.Rec
		c.Rec = &Delivery{ID: "dlv_" + uuid.NewString(), Resource: o.Resource, ResourceID: o.ResourceID, ExtID: o.ExtID,
			ResourceStatus: o.ResourceStatus, URL: o.URL, State: Pending, CreatedAt: o.CreatedAt, ResendOf: o.ID,
			Faults: []string{FaultDuplicate}}
		dup = &c
	}
	if len(names) > 0 {
		d.logMu.Lock()
		dl.Rec.Faults, dl.Rec.DelayedBy = names, delay
		d.logMu.Unlock()
	}
	return dup
}

// releaseAt is when q's parked head may go: its delay and its hold both
// over.
func releaseAt(o Outgoing) time.Time {
	if o.holdUntil.After(o.notBefore) {
		return o.holdUntil
	}
	return o.notBefore
}

// readyLocked makes q's head due, or parks it while its delay or hold
// lasts. A head held for reordering with a delivery already behind it
// lets that one go first at once.
func (d *Dispatcher) readyLocked(q *hookQueue) {
	// Only a later notification overtakes: not the held one's copy, nor
	// the one it has just overtaken itself.
	if h := &q.items[0]; !h.holdUntil.IsZero() && len(q.items) > 1 && q.items[1].seq > h.seq && !isCopyOf(q.items[1], *h) {
		h.holdUntil, h.holdWait = time.Time{}, 0
		q.items[0], q.items[1] = q.items[1], q.items[0]
	}
	h := &q.items[0]
	if !h.holdUntil.After(d.clock) {
		h.holdUntil, h.holdWait = time.Time{}, 0
	}
	if !h.notBefore.After(d.clock) {
		h.notBefore, h.wait = time.Time{}, 0
	}
	if h.notBefore.IsZero() && h.holdUntil.IsZero() {
		d.dueLocked(q)
		return
	}
	q.parked = true
	d.parked = append(d.parked, q)
	if d.realTimers {
		d.wakeAfterLocked(max(h.wait, h.holdWait))
	}
}

// isCopyOf says whether o is the duplicate of orig: it follows its
// original, and is not the next notification a held delivery waits for.
func isCopyOf(o, orig Outgoing) bool {
	return o.Rec != nil && orig.Rec != nil && o.Rec.ResendOf == orig.Rec.ID
}

// wakeAfterLocked runs Wake with the owner's clock after wait (the real
// clock: the sandbox clock moves with it, and Advance wakes too).
func (d *Dispatcher) wakeAfterLocked(wait time.Duration) {
	var t *time.Timer
	t = time.AfterFunc(wait, func() {
		d.mu.Lock()
		delete(d.wakers, t)
		d.mu.Unlock()
		d.Wake(d.now())
	})
	d.wakers[t] = struct{}{}
}

// unparkLocked takes q out of the parked list.
func (d *Dispatcher) unparkLocked(q *hookQueue) {
	q.parked = false
	if i := slices.Index(d.parked, q); i >= 0 {
		d.parked = slices.Delete(d.parked, i, i+1)
	}
}

// Wake tells the Dispatcher the owner's clock reads now (the owner calls
// it when its clock moves: Advance), and sends the deliveries whose delay
// or hold is over, those that became free first going first (then in the
// order they were queued), so that a seeded run replays.
func (d *Dispatcher) Wake(now time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	if now.After(d.clock) {
		d.clock = now
	}
	var ready []*hookQueue
	for _, q := range d.parked {
		if !releaseAt(q.items[0]).After(d.clock) {
			ready = append(ready, q)
		}
	}
	slices.SortStableFunc(ready, func(a, b *hookQueue) int {
		if c := releaseAt(a.items[0]).Compare(releaseAt(b.items[0])); c != 0 {
			return c
		}
		return cmp.Compare(a.items[0].seq, b.items[0].seq)
	})
	for _, q := range ready {
		d.unparkLocked(q)
		h := &q.items[0]
		h.notBefore, h.holdUntil, h.wait, h.holdWait = time.Time{}, time.Time{}, 0, 0
		d.dueLocked(q)
	}
}
