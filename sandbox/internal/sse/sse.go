// Package sse follows a server-sent event stream across reconnections,
// for sandbox.Remote's Listen and FollowRequests: it resumes after the
// last event with an id (Last-Event-ID), backs off between tries, gives up
// a silent connection, and bounds what one event may hold, so that no
// answer, however malformed or huge, makes it hold unbounded memory or
// spin.
package sse

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// ErrBadEvent ends a connection whose event cannot be read: the stream
// is not what the sandbox writes, and the next connection resumes.
var ErrBadEvent = errors.New("sandbox: the feed sent an event that cannot be read")

// Bounds of a feed as Remote reads it: no answer, however malformed or
// huge, makes it hold unbounded memory or spin.
const (
	maxEventBytes  = 4 << 20          // one event's lines
	feedSilence    = 45 * time.Second // three keep-alives missed: the connection is dead
	feedRetryFirst = 100 * time.Millisecond
	feedRetryMax   = 5 * time.Second
)

// Stream is one feed followed across reconnections.
type Stream struct {
	// URL is the feed's URL without its query.
	URL string
	// Client makes the requests; its Timeout is not used (the stream
	// lasts; silence is watched instead).
	Client *http.Client
	// Auth sets the request's credentials; an error ends Run.
	Auth func(*http.Request) error
	// Refused is the error of an answer other than 200, from its status
	// and the start of its body.
	Refused func(status int, body []byte) error
	// Final says whether an error of Refused ends Run: another try cannot
	// change it.
	Final func(error) bool
	// Resume and After: the next connection resumes after position After
	// (Last-Event-ID); set as events with an id are handled, and by the
	// caller (a session's position).
	Resume bool
	After  uint64
}

// Event is one server-sent event.
type Event struct {
	// ID is its id field (0: none).
	ID uint64
	// Name is its event field ("message" when none).
	Name string
	// Data is its data lines, joined by newlines.
	Data    []byte
	hasData bool
}

// errStop carries the caller's error out of a connection.
type errStop struct{ err error }

func (e errStop) Error() string { return e.err.Error() }

// Run connects, hands each event to handle and reconnects after the
// connection ends, until ctx ends, handle returns an error (other than
// ErrBadEvent, which ends only the connection), or the sandbox refuses for
// good (Final).
func (s *Stream) Run(ctx context.Context, handle func(Event) error, query func() url.Values) error {
	wait := feedRetryFirst
	for {
		got, err := s.connect(ctx, handle, query())
		var stop errStop
		switch {
		case errors.As(err, &stop):
			return stop.err
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil && s.Final(err):
			return err
		}
		if got {
			wait = feedRetryFirst // it worked for a while: the next try is quick
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, feedRetryMax)
	}
}

// connect makes one connection and reads it to its end; got says whether
// an event arrived.
func (s *Stream) connect(ctx context.Context, handle func(Event) error, q url.Values) (got bool, err error) {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	u := s.URL
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, u, nil)
	if err != nil {
		return false, errStop{err}
	}
	req.Header.Set("Accept", "text/event-stream")
	if s.Resume {
		req.Header.Set("Last-Event-ID", strconv.FormatUint(s.After, 10))
	}
	if err := s.Auth(req); err != nil {
		return false, errStop{err}
	}
	hc := *s.Client
	hc.Timeout = 0 // the stream lasts; silence is watched below
	res, err := hc.Do(req)
	if err != nil {
		return false, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
		return false, s.Refused(res.StatusCode, data)
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		return false, fmt.Errorf("sandbox: %s answered %q, not an event stream", req.URL.Path, ct)
	}
	// A watchdog: a connection silent for feedSilence is given up.
	alive := make(chan struct{}, 1)
	go func() {
		t := time.NewTimer(feedSilence)
		defer t.Stop()
		for {
			select {
			case <-cctx.Done():
				return
			case <-alive:
				t.Reset(feedSilence)
			case <-t.C:
				cancel()
				return
			}
		}
	}()
	rd := bufio.NewReaderSize(res.Body, 64<<10)
	var ev Event
	var size int
	for {
		line, err := readLine(rd, maxEventBytes-size)
		if err != nil {
			return got, err
		}
		select {
		case alive <- struct{}{}:
		default:
		}
		size += len(line)
		switch {
		case len(line) == 0: // the end of an event
			if ev.Name != "" || ev.hasData {
				if ev.Name == "" {
					ev.Name = "message"
				}
				if err := handle(ev); err != nil {
					if errors.Is(err, ErrBadEvent) {
						return got, err
					}
					return got, errStop{err}
				}
				got = true
				if ev.ID != 0 {
					s.Resume, s.After = true, ev.ID
				}
			}
			ev, size = Event{}, 0
		case line[0] == ':': // a comment: the keep-alive
		default:
			field, value, _ := bytes.Cut(line, []byte(":"))
			value = bytes.TrimPrefix(value, []byte(" "))
			switch string(field) {
			case "id":
				n, err := strconv.ParseUint(string(value), 10, 64)
				if err != nil {
					return got, ErrBadEvent
				}
				ev.ID = n
			case "event":
				ev.Name = string(value)
			case "data":
				if ev.hasData {
					ev.Data = append(ev.Data, '\n')
				}
				ev.Data, ev.hasData = append(ev.Data, value...), true
			}
		}
	}
}

// readLine reads one line without its end (LF, CRLF or CR-less), refusing
// one longer than limit.
func readLine(rd *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := rd.ReadSlice('\n')
		if len(line)+len(chunk) > limit {
			return nil, errors.New("sandbox: the feed sent an event larger than 4 MB")
		}
		line = append(line, chunk...)
		switch {
		case err == nil:
			line = bytes.TrimSuffix(line[:len(line)-1], []byte("\r"))
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
}
