package webhook

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/paykit-dev/paykit-go/sandbox/internal/receivertest"
)

func TestParseFaults(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Faults
	}{
		{"", Faults{}},
		{"duplicate=0.1,reorder=0.25,delay=2s,seed=42", Faults{Duplicate: 0.1, Reorder: 0.25, Delay: 2 * time.Second, Seed: 42}},
		{" seed=-7 , delay=150ms ", Faults{Delay: 150 * time.Millisecond, Seed: -7}},
		{"duplicate=1", Faults{Duplicate: 1}},
	} {
		got, err := ParseFaults(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseFaults(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
		if again, err := ParseFaults(got.String()); err != nil || again != got {
			t.Errorf("String %q does not parse back: %+v, %v", got.String(), again, err)
		}
	}
	for _, c := range []struct{ in, msg string }{
		{"duplicate=1.5", "duplicate is a probability and must be between 0 and 1, not 1.5"},
		{"reorder=-0.1", "reorder is a probability and must be between 0 and 1"},
		{"reorder=NaN", "reorder is a probability"},
		{"delay=-1s", "delay must not be negative"},
		{"delay=2", `delay=2: time: missing unit in duration "2"`},
		{"seed=x", "seed=x: invalid syntax"},
		{"duplicate=0.1,duplicate=0.2", "duplicate is given twice"},
		{"dupes=0.1", `unknown setting "dupes"`},
		{"duplicate", `"duplicate" is not name=value`},
	} {
		_, err := ParseFaults(c.in)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("ParseFaults(%q) = %v, want an error with %q", c.in, err, c.msg)
		}
	}
}

// faultyRun queues three notifications of each of four resources, as a
// sandbox with a frozen clock does, lets the clock pass every delay and
// hold, and returns what the receiver got, in order, and the log.
func faultyRun(t *testing.T, f Faults) ([]string, []Delivery) {
	t.Helper()
	rec := receivertest.NewRecording(t)
	d := New(Config{Client: &http.Client{}, MaxAttempts: 1, RetryWait: time.Millisecond, LogSize: 100, Now: clock,
		Workers: 1, PerReceiver: 1, Faults: f})
	defer d.Close()
	for step := range 3 {
		for r := range 4 {
			d.Queue(fmt.Sprintf("payment:%d", r), Outgoing{URL: rec.URL, Body: []byte(fmt.Sprintf(`{"r":%d,"s":%d}`, r, step)),
				Rec: &Delivery{ID: fmt.Sprintf("dlv_%d_%d", r, step), State: Pending, CreatedAt: base}})
		}
	}
	d.Wake(base.Add(f.Delay + ReorderHold(f.Delay)))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	return rec.Bodies(), d.Deliveries()
}

// TestFaultsReplayBySeed: the same seed and the same notifications give
// the same deliveries, in the same order, twice; the faults did happen
// (copies, a resource's notifications out of order, waits in the log);
// another seed gives another run.
func TestFaultsReplayBySeed(t *testing.T) {
	f := Faults{Duplicate: 0.3, Reorder: 0.3, Delay: 2 * time.Second, Seed: 42}
	first, log := faultyRun(t, f)
	second, _ := faultyRun(t, f)
	if !reflect.DeepEqual(first, second) {
		t.Fatalf("seed 42 twice gave two sequences:\n%q\n%q", first, second)
	}
	if len(first) <= 12 {
		t.Fatalf("%d deliveries of 12 notifications: no duplicate", len(first))
	}
	outOfOrder := false
	last := map[byte]byte{}
	for _, b := range first {
		r, s := b[5], b[11] // {"r":R,"s":S}
		if s < last[r] {
			outOfOrder = true
		}
		last[r] = s
	}
	if !outOfOrder {
		t.Fatalf("no resource's notifications arrived out of order: %q", first)
	}
	var dup, delayed int
	for _, dl := range log {
		if reflect.DeepEqual(dl.Faults, []string{FaultDuplicate}) && dl.ResendOf != "" {
			dup++
		}
		if dl.DelayedBy > 0 && dl.DelayedBy < f.Delay {
			delayed++
		}
	}
	if dup != len(first)-12 || delayed == 0 {
		t.Fatalf("the log shows %d duplicates (%d extra deliveries) and %d delays", dup, len(first)-12, delayed)
	}
	other, _ := faultyRun(t, Faults{Duplicate: 0.3, Reorder: 0.3, Delay: 2 * time.Second, Seed: 43})
	if reflect.DeepEqual(first, other) {
		t.Fatal("seeds 42 and 43 gave the same run")
	}
}

// TestFaultsDelayWaitsForTheClock: a delayed delivery is not attempted
// before the owner's clock reaches its time (no real time passes in the
// test), then it is.
func TestFaultsDelayWaitsForTheClock(t *testing.T) {
	rec := receivertest.NewRecording(t)
	d := New(Config{Client: &http.Client{}, MaxAttempts: 1, RetryWait: time.Millisecond, LogSize: 10, Now: clock,
		Workers: 1, PerReceiver: 1, Faults: Faults{Delay: time.Hour, Seed: 1}})
	defer d.Close()
	d.Queue("payment:1", Outgoing{URL: rec.URL, Body: []byte(`{}`), Rec: &Delivery{ID: "dlv_1", State: Pending, CreatedAt: base}})
	wait := d.Deliveries()[0].DelayedBy
	if wait <= 0 || wait >= time.Hour {
		t.Fatalf("delay drawn %v, want within (0, 1h)", wait)
	}
	d.Wake(base.Add(wait - time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := d.Flush(ctx); err == nil || d.Backlog() != 1 || len(d.Deliveries()[0].Attempts) != 0 {
		t.Fatalf("attempted before its time: flush %v, backlog %d", err, d.Backlog())
	}
	d.Wake(base.Add(wait))
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if dl := d.Deliveries()[0]; dl.State != Delivered || !reflect.DeepEqual(dl.Faults, []string{FaultDelay}) {
		t.Fatalf("after its time: %s, faults %v", dl.State, dl.Faults)
	}
}

// TestFaultsReorderHoldEnds: a delivery held back for a successor that
// never comes goes alone once its hold is over; with the real clock, a
// timer ends it.
func TestFaultsReorderHoldEnds(t *testing.T) {
	rec := receivertest.NewRecording(t)
	d := New(Config{Client: &http.Client{}, MaxAttempts: 1, RetryWait: time.Millisecond, LogSize: 10, Now: time.Now,
		Workers: 1, PerReceiver: 1, Faults: Faults{Reorder: 1, Seed: 1}, RealTimers: true})
	defer d.Close()
	d.Queue("payment:1", Outgoing{URL: rec.URL, Body: []byte(`{}`), Rec: &Delivery{ID: "dlv_1", State: Pending, CreatedAt: time.Now()}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if dl := d.Deliveries()[0]; dl.State != Delivered || !reflect.DeepEqual(dl.Faults, []string{FaultReorder}) {
		t.Fatalf("held delivery: %s, faults %v", dl.State, dl.Faults)
	}
}
