package feed

import (
	"reflect"
	"testing"
	"time"
)

func drain(t *testing.T, s *Sub[string]) []Item[string] {
	t.Helper()
	items, _ := s.Drain(nil)
	return items
}

func TestLiveSubscriberGetsWhatIsPublishedAfterIt(t *testing.T) {
	l := New[string](1000, 10, 10)
	l.Publish("before")
	s, at := l.Subscribe(false, 0, nil)
	if at != 1001 {
		t.Fatalf("position at subscribe = %d, want 1001", at)
	}
	l.Publish("a")
	l.Publish("b")
	got := drain(t, s)
	want := []Item[string]{{Pos: 1002, Value: "a"}, {Pos: 1003, Value: "b"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if got := drain(t, s); len(got) != 0 {
		t.Fatalf("second drain = %+v, want nothing", got)
	}
}

func TestFilter(t *testing.T) {
	l := New[string](0, 10, 10)
	s, _ := l.Subscribe(false, 0, func(v string) bool { return v[0] == 'p' })
	for _, v := range []string{"payment", "withdrawal", "payout"} {
		l.Publish(v)
	}
	want := []Item[string]{{Pos: 1, Value: "payment"}, {Pos: 3, Value: "payout"}}
	if got := drain(t, s); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

// A subscriber that never reads loses its oldest events, is told exactly
// which, and Publish never waits for it.
func TestSlowSubscriberLosesOldestAndIsTold(t *testing.T) {
	l := New[string](0, 100, 3)
	s, _ := l.Subscribe(false, 0, nil)
	for _, v := range []string{"1", "2", "3", "4", "5"} {
		l.Publish(v)
	}
	want := []Item[string]{
		{Missed: &Missed{From: 1, To: 2, Count: 2, Reason: ReasonSlow}},
		{Pos: 3, Value: "3"}, {Pos: 4, Value: "4"}, {Pos: 5, Value: "5"},
	}
	if got := drain(t, s); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	// Dropped again after a read: a new notice, counting only the new loss.
	for _, v := range []string{"6", "7", "8", "9"} {
		l.Publish(v)
	}
	want = []Item[string]{
		{Missed: &Missed{From: 6, To: 6, Count: 1, Reason: ReasonSlow}},
		{Pos: 7, Value: "7"}, {Pos: 8, Value: "8"}, {Pos: 9, Value: "9"},
	}
	if got := drain(t, s); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func TestResumeReplaysTheWindow(t *testing.T) {
	l := New[string](100, 3, 10)
	for _, v := range []string{"a", "b", "c", "d", "e"} { // 101..105; the window keeps 103..105
		l.Publish(v)
	}
	t.Run("inside the window", func(t *testing.T) {
		s, at := l.Subscribe(true, 103, nil)
		want := []Item[string]{{Pos: 104, Value: "d"}, {Pos: 105, Value: "e"}}
		if got := drain(t, s); !reflect.DeepEqual(got, want) || at != 103 {
			t.Fatalf("got %+v from %d, want %+v from 103", got, at, want)
		}
	})
	t.Run("up to date", func(t *testing.T) {
		s, _ := l.Subscribe(true, 105, nil)
		if got := drain(t, s); len(got) != 0 {
			t.Fatalf("got %+v, want nothing", got)
		}
	})
	t.Run("before the window", func(t *testing.T) {
		s, _ := l.Subscribe(true, 100, nil)
		want := []Item[string]{{Missed: &Missed{From: 101, To: 102, Count: 2, Reason: ReasonWindow}},
			{Pos: 103, Value: "c"}, {Pos: 104, Value: "d"}, {Pos: 105, Value: "e"}}
		if got := drain(t, s); !reflect.DeepEqual(got, want) {
			t.Fatalf("got %+v, want %+v", got, want)
		}
	})
	t.Run("an earlier run", func(t *testing.T) {
		s, from := l.Subscribe(true, 42, nil)
		if from != 100 {
			t.Errorf("resumed from %d, want the run's base 100", from)
		}
		want := []Item[string]{{Missed: &Missed{From: 43, To: 102, Count: -1, Reason: ReasonRestart}},
			{Pos: 103, Value: "c"}, {Pos: 104, Value: "d"}, {Pos: 105, Value: "e"}}
		if got := drain(t, s); !reflect.DeepEqual(got, want) {
			t.Fatalf("got %+v, want %+v", got, want)
		}
	})
	t.Run("a position never given", func(t *testing.T) {
		s, _ := l.Subscribe(true, 999, nil)
		want := []Item[string]{{Missed: &Missed{From: 0, To: 102, Count: -1, Reason: ReasonRestart}},
			{Pos: 103, Value: "c"}, {Pos: 104, Value: "d"}, {Pos: 105, Value: "e"}}
		if got := drain(t, s); !reflect.DeepEqual(got, want) {
			t.Fatalf("got %+v, want %+v", got, want)
		}
	})
}

// A run that restarts: its positions are above the earlier run's, and a
// resume with the earlier run's last position is told it may have missed
// something, never served the new run's events as if they followed.
func TestRunsDoNotShareAPosition(t *testing.T) {
	start := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	first := New[string](RunBase(start), 10, 10)
	for range 1000 {
		first.Publish("x")
	}
	second := New[string](RunBase(start.Add(time.Millisecond)), 10, 10)
	if second.Base() < first.Last() {
		t.Fatalf("second run's base %d is below the first run's last position %d", second.Base(), first.Last())
	}
	second.Publish("y")
	s, _ := second.Subscribe(true, first.Last(), nil)
	got := drain(t, s)
	if len(got) != 2 || got[0].Missed == nil || got[0].Missed.Reason != ReasonRestart || got[0].Missed.Count != -1 ||
		got[1].Value != "y" {
		t.Fatalf("got %+v, want a Restart notice then y", got)
	}
	// Opened again at once in the same process: still above.
	third := New[string](RunBase(start.Add(time.Millisecond)), 10, 10)
	if third.Base() < second.Last() {
		t.Fatalf("a run opened in the same millisecond begins at %d, below %d", third.Base()+1, second.Last())
	}
	if RunBase(time.Now()) >= 1<<53 {
		t.Fatalf("positions of today are not exact in a JavaScript number")
	}
}

func TestCloseEndsSubscribers(t *testing.T) {
	l := New[string](0, 10, 10)
	s, _ := l.Subscribe(false, 0, nil)
	l.Publish("a")
	l.Close()
	if _, open := <-s.Ready(); !open {
		t.Fatal("Ready closed before the queued event was signalled")
	}
	items, ended := s.Drain(nil)
	if len(items) != 1 || ended {
		t.Fatalf("drain = %+v, %v; want the queued event first", items, ended)
	}
	if _, ended = s.Drain(nil); !ended {
		t.Fatal("not ended after the Log closed and the queue emptied")
	}
	if _, open := <-s.Ready(); open {
		t.Fatal("Ready not closed")
	}
	late, _ := l.Subscribe(false, 0, nil)
	if _, ended := late.Drain(nil); !ended {
		t.Fatal("a subscription to a closed Log is not ended")
	}
}

func TestHubKeepsMerchantsApart(t *testing.T) {
	h := NewHub[string]([]string{"m1", "m2"}, 0, 10, 10)
	s1, _ := h.Log("m1").Subscribe(false, 0, nil)
	s2, _ := h.Log("m2").Subscribe(false, 0, nil)
	h.Publish("m1", "one")
	h.Publish("m2", "two")
	h.Publish("nobody", "lost")
	if got := drain(t, s1); len(got) != 1 || got[0].Value != "one" || got[0].Pos != 1 {
		t.Fatalf("m1 got %+v", got)
	}
	if got := drain(t, s2); len(got) != 1 || got[0].Value != "two" || got[0].Pos != 1 {
		t.Fatalf("m2 got %+v", got)
	}
	if h.Log("nobody") != nil {
		t.Fatal("a Log for a key the Hub was not made with")
	}
}

// BenchmarkPublishStalledSubscriber: publishing with a subscriber that
// never reads costs what it costs with a reader (the queue is bounded).
func BenchmarkPublishStalledSubscriber(b *testing.B) {
	l := New[string](0, 1000, 256)
	l.Subscribe(false, 0, nil)
	b.ReportAllocs()
	for b.Loop() {
		l.Publish("x")
	}
}

func TestUsedOnceSubscribed(t *testing.T) {
	h := NewHub[string]([]string{"m1"}, 0, 10, 10)
	if h.Used("m1") || h.Used("nobody") {
		t.Fatal("used before any subscription")
	}
	s, _ := h.Log("m1").Subscribe(false, 0, nil)
	s.Close()
	if !h.Used("m1") {
		t.Fatal("not used after a subscription (a client may resume from its position)")
	}
}
