// Package feed is the sandbox's live feeds: a log of events with
// positions, a bounded window of the latest kept for a listener that
// resumes, and subscribers that may be as slow as they like without ever
// holding up whoever publishes. GET /sandbox/listen (a merchant's
// notifications, one Log per merchant in a Hub) and GET
// /sandbox/requests?follow=1 (the request log) are served from it.
//
// Positions. Every event gets a position one above the previous one of its
// Log. The first position of a Log is Base()+1, and Base is taken from the
// wall clock when the sandbox starts (its Unix milliseconds times 1024, see
// RunBase), so that the positions of a later run of the sandbox are above
// those of an earlier one: a listener that resumes after a restart with a
// position of the earlier run is told what it may have missed (Missed with
// Reason Restart and Count -1), never replayed another run's events as if
// they followed its own. Positions stay below 2^53, so a JavaScript client
// reads them exactly.
//
// Loss is always told. A subscriber has a bounded queue: when it is full,
// the oldest event in it is dropped and the subscriber's next read begins
// with a Missed naming the positions dropped and how many. A subscriber
// that resumes from a position the window no longer holds gets a Missed
// too. Publish never waits for a subscriber.
//
// The package is a leaf: standard library only, nothing of HTTP or of the
// sandbox's resources.
package feed

import (
	"sync"
	"sync/atomic"
	"time"
)

// Reasons a Missed gives.
const (
	// ReasonSlow: the subscriber's queue was full and its oldest events
	// were dropped.
	ReasonSlow = "slow"
	// ReasonWindow: the subscriber resumed from a position older than the
	// window the Log still keeps.
	ReasonWindow = "window"
	// ReasonRestart: the subscriber resumed from a position this run of
	// the sandbox never gave (an earlier run's, or another sandbox's);
	// what it may have missed cannot be counted.
	ReasonRestart = "restart"
)

// Missed tells a subscriber that it did not get the events at positions
// From to To (both included).
type Missed struct {
	// From and To are the first and last positions not received. From
	// is 0 when the position resumed from is above every position of
	// this run (another sandbox's, or a run whose clock was ahead): which
	// events it may have missed cannot be told.
	From, To uint64
	// Count is how many events the subscriber did not get in that range,
	// or -1 when it cannot be told (Reason Restart). With a filter,
	// a Missed of Reason Window counts every event of the range, the
	// filter's or not, since the events no longer exist to be filtered.
	Count int
	// Reason is ReasonSlow, ReasonWindow or ReasonRestart.
	Reason string
}

// Item is what a subscriber reads: an event (Pos and Value), or, when
// Missed is not nil, a notice of events it did not get.
type Item[T any] struct {
	// Pos is the event's position (zero for a Missed).
	Pos uint64
	// Value is the event.
	Value T
	// Missed, when not nil, makes the item a notice of loss instead.
	Missed *Missed
}

// RunBase is the base of the positions of a run starting at now: the Unix
// milliseconds times 1024. A run that publishes fewer than 1024 events
// per millisecond of its life on average (a million a second) leaves its
// positions below the next run's base. Within one process (sandboxes
// opened one after another on the same file, in a test) it is also above
// every position any Log of the process gave, however quick the restart.
func RunBase(now time.Time) uint64 {
	ms := now.UnixMilli()
	if ms < 0 {
		ms = 0
	}
	return max(uint64(ms)<<10, highest.Load())
}

// highest is the highest position any Log of the process gave.
var highest atomic.Uint64

func noteHighest(pos uint64) {
	for {
		h := highest.Load()
		if pos <= h || highest.CompareAndSwap(h, pos) {
			return
		}
	}
}

// Log is one feed: positions, a window of the latest events and the
// subscribers. It is safe for concurrent use.
type Log[T any] struct {
	mu     sync.Mutex
	base   uint64
	last   uint64
	window []Item[T] // circular once full: the oldest at start
	start  int
	retain int
	buffer int
	subs   map[*Sub[T]]struct{}
	closed bool
	used   bool // someone subscribed once: see Used
}

// New returns a Log whose first position is base+1, keeping the latest
// retain events for a resume, and giving each subscriber a queue of
// buffer events (at least 1).
func New[T any](base uint64, retain, buffer int) *Log[T] {
	return &Log[T]{base: base, last: base, retain: max(retain, 0), buffer: max(buffer, 1), subs: map[*Sub[T]]struct{}{}}
}

// Base is the position before the first event of this Log.
func (l *Log[T]) Base() uint64 { return l.base }

// Last is the position of the latest event published, Base() while none
// was.
func (l *Log[T]) Last() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last
}

// Used says whether anyone ever subscribed. Until then nobody can have
// seen a position, nor resume from one, so a publisher may skip the work
// of making events nobody can read.
func (l *Log[T]) Used() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.used
}

// Publish gives v the next position, keeps it in the window and hands it
// to every subscriber whose filter takes it. It never waits for a
// subscriber: a full queue loses its oldest event (and says so).
func (l *Log[T]) Publish(v T) uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last++
	noteHighest(l.last)
	it := Item[T]{Pos: l.last, Value: v}
	if l.retain > 0 {
		if len(l.window) < l.retain {
			l.window = append(l.window, it)
		} else {
			l.window[l.start] = it
			l.start = (l.start + 1) % l.retain
		}
	}
	for s := range l.subs {
		if s.keep == nil || s.keep(v) {
			s.pushLocked(it)
		}
	}
	return l.last
}

// Close ends every subscription: their Ready channels are closed and
// Drain reports the end once their queues are empty. Later subscriptions
// are ended at once.
func (l *Log[T]) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	for s := range l.subs {
		s.endLocked()
	}
	clear(l.subs)
}

// Sub is one subscriber: a bounded queue of events the Log filled and
// the notice of what it dropped.
type Sub[T any] struct {
	l      *Log[T]
	keep   func(T) bool
	queue  []Item[T] // circular: head at qhead, qlen items
	qhead  int
	qlen   int
	missed *Missed // the events dropped before the queue's head, nil when none
	ready  chan struct{}
	ended  bool
}

// Subscribe adds a subscriber that gets the events keep takes (nil takes
// all). With resume false it gets the events published from now on. With
// resume true it first gets what the window holds after position after,
// preceded by a Missed when the window no longer holds all of it or
// after is not a position of this Log (ReasonRestart). It returns the
// subscriber and the position its events follow (the latest published
// when live, after when resuming, Base for a position of another run):
// a client that gets nothing else resumes from it, and loses nothing.
func (l *Log[T]) Subscribe(resume bool, after uint64, keep func(T) bool) (*Sub[T], uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := &Sub[T]{l: l, keep: keep, queue: make([]Item[T], l.buffer), ready: make(chan struct{}, 1)}
	if l.closed {
		s.endLocked()
		return s, l.last
	}
	l.subs[s] = struct{}{}
	l.used = true
	if !resume {
		return s, l.last
	}
	first := l.last + 1 // the oldest position the window holds
	if len(l.window) > 0 {
		first = l.window[l.start].Pos
	}
	var m *Missed
	switch {
	case after < l.base:
		m = &Missed{From: after + 1, To: first - 1, Count: -1, Reason: ReasonRestart}
		after = l.base
	case after > l.last:
		// A position this run never gave: another sandbox's, or a run
		// whose clock was ahead. Nothing of this run can be told apart
		// from what the client had, so it gets everything the window
		// still holds, and From 0 says the range is unknown.
		m = &Missed{From: 0, To: first - 1, Count: -1, Reason: ReasonRestart}
		after = l.base
	case after+1 < first:
		m = &Missed{From: after + 1, To: first - 1, Count: int(first - 1 - after), Reason: ReasonWindow}
	}
	s.missed = m
	n := len(l.window)
	for i := 0; i < n; i++ {
		it := l.window[(l.start+i)%n]
		if it.Pos > after && (keep == nil || keep(it.Value)) {
			s.pushLocked(it)
		}
	}
	s.signalLocked()
	return s, after
}

// pushLocked queues it, dropping the oldest queued event when full.
func (s *Sub[T]) pushLocked(it Item[T]) {
	if s.ended {
		return
	}
	if s.qlen == len(s.queue) {
		old := s.queue[s.qhead]
		s.queue[s.qhead] = Item[T]{}
		s.qhead = (s.qhead + 1) % len(s.queue)
		s.qlen--
		if s.missed == nil {
			s.missed = &Missed{From: old.Pos, To: old.Pos, Count: 1, Reason: ReasonSlow}
		} else {
			// Folded into the notice not yet read, which keeps its
			// reason: loss is never hidden, and an unknown count stays
			// unknown.
			s.missed.To = old.Pos
			if s.missed.Count >= 0 {
				s.missed.Count++
			}
		}
	}
	s.queue[(s.qhead+s.qlen)%len(s.queue)] = it
	s.qlen++
	s.signalLocked()
}

func (s *Sub[T]) signalLocked() {
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

func (s *Sub[T]) endLocked() {
	if !s.ended {
		s.ended = true
		close(s.ready)
	}
}

// Ready is signalled when the queue may have something to Drain, and
// closed when the subscription ends (the Log closed).
func (s *Sub[T]) Ready() <-chan struct{} { return s.ready }

// Drain appends to dst and returns the notice of loss, if any, then every
// queued event, oldest first, emptying the queue; ended is true once the
// Log closed and nothing is left.
func (s *Sub[T]) Drain(dst []Item[T]) (items []Item[T], ended bool) {
	l := s.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if s.missed != nil {
		dst = append(dst, Item[T]{Missed: s.missed})
		s.missed = nil
	}
	for s.qlen > 0 {
		dst = append(dst, s.queue[s.qhead])
		s.queue[s.qhead] = Item[T]{}
		s.qhead = (s.qhead + 1) % len(s.queue)
		s.qlen--
	}
	return dst, s.ended && len(dst) == 0
}

// Close ends the subscription; the Log forgets it.
func (s *Sub[T]) Close() {
	l := s.l
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.subs, s)
	s.endLocked()
}

// Hub is one Log per key (the merchants of a sandbox, by API key), fixed
// when it is made.
type Hub[T any] struct {
	logs map[string]*Log[T]
}

// NewHub returns a Hub with a Log for each key, all with base, retain and
// buffer.
func NewHub[T any](keys []string, base uint64, retain, buffer int) *Hub[T] {
	h := &Hub[T]{logs: make(map[string]*Log[T], len(keys))}
	for _, k := range keys {
		h.logs[k] = New[T](base, retain, buffer)
	}
	return h
}

// Log is the Log of key, nil for a key the Hub was not made with.
func (h *Hub[T]) Log(key string) *Log[T] {
	if h == nil {
		return nil
	}
	return h.logs[key]
}

// Used says whether key's Log was ever subscribed to (Log.Used).
func (h *Hub[T]) Used(key string) bool {
	l := h.Log(key)
	return l != nil && l.Used()
}

// Publish publishes v on key's Log; nothing for an unknown key.
func (h *Hub[T]) Publish(key string, v T) {
	if l := h.Log(key); l != nil {
		l.Publish(v)
	}
}

// Close closes every Log.
func (h *Hub[T]) Close() {
	if h == nil {
		return
	}
	for _, l := range h.logs {
		l.Close()
	}
}

// Notification is one notification of the listen feed: what the sandbox
// sends, or would send, to a resource's notify_url when it enters a
// status.
type Notification struct {
	// Kind is "payment", "payout" or "withdrawal".
	Kind string
	// ID is the resource's id, Status the status it entered, as the body
	// writes it.
	ID, Status string
	// NotifyURL is the resource's notify_url, empty when it has none.
	NotifyURL string
	// Token is the resource's notification token; empty when it has none
	// (a payout never has one), and the listener's session token is sent
	// in its place.
	Token string
	// Body is the exact JSON body of the notification.
	Body []byte
}

// Kinds are the kinds of Notification, as ?events= names them.
var Kinds = []string{"payment", "payout", "withdrawal"}
