// Package remote is the wire side of sandbox.Remote: the JSON requests of
// the /sandbox/ controls and inspection views, and the two feeds it
// follows (the listen feed, GET /sandbox/listen, and the request log's
// follow, GET /sandbox/requests?follow=1) decoded into events. Package
// sandbox keeps the public types, the checks made before any request and
// the errors a caller sees (its Refused and Final); the event types here
// have the public ones' fields, so sandbox converts them as they are.
package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox/internal/service"
	"github.com/paykit-dev/paykit-go/sandbox/internal/sse"
)

// Conn is one sandbox as a Remote reaches it.
type Conn struct {
	// Base is the sandbox's base URL, without a trailing slash.
	Base string
	// Token is the control token, sent as Authorization: Bearer to the
	// controls and inspection views when set.
	Token string
	// HC makes the requests.
	HC *http.Client
	// APIKey and Signer authenticate as a merchant (the listen feed).
	APIKey string
	Signer paykit.Signer
	// Refused is the caller's error for an answer other than 2xx (200 for
	// a feed): its status, and the error code and message of its body
	// (the status text when the body is not an error body).
	Refused func(status int, code, message string) error
	// Final says whether a refusal ends a feed: another try cannot change
	// it.
	Final func(error) bool
}

// Post sends in as JSON to path and decodes the answer into out (nil: the
// answer is not read).
func (c *Conn) Post(ctx context.Context, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodPost, path, body, out)
}

// Get reads path into out.
func (c *Conn) Get(ctx context.Context, path string, out any) error {
	return c.do(ctx, http.MethodGet, path, nil, out)
}

func (c *Conn) do(ctx context.Context, method, path string, body []byte, out any) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Base+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	res, err := c.HC.Do(req)
	if err != nil {
		return fmt.Errorf("sandbox: %s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("sandbox: %s %s: %w", method, path, err)
	}
	if res.StatusCode/100 != 2 {
		return c.refused(res.StatusCode, data)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("sandbox: %s %s: decoding the answer: %w", method, path, err)
	}
	return nil
}

// refused is the caller's error for a refusal whose body is data.
func (c *Conn) refused(status int, data []byte) error {
	var eb struct{ Error, Message string }
	if json.Unmarshal(data, &eb) == nil {
		return c.Refused(status, eb.Error, eb.Message)
	}
	return c.Refused(status, "", http.StatusText(status))
}

// Session is the first event of a connection to the listen feed.
type Session struct {
	Token    string `json:"token"`
	Position uint64 `json:"position"`
}

// Notification is one notification of the listen feed.
type Notification struct {
	Position  uint64            `json:"-"`
	Kind      string            `json:"kind"`
	ID        string            `json:"id"`
	Status    string            `json:"status"`
	NotifyURL string            `json:"notify_url"`
	Headers   map[string]string `json:"headers"`
	Body      []byte            `json:"-"`
}

// Missed says events were lost to the listener or follower.
type Missed struct {
	From   uint64 `json:"from"`
	To     uint64 `json:"to"`
	Count  int    `json:"count"`
	Reason string `json:"reason"`
}

// Event is one event of the listen feed: exactly one field is set.
type Event struct {
	Session      *Session
	Notification *Notification
	Missed       *Missed
}

// Listen follows the listen feed as the merchant, asking for these event
// kinds (none: all) with token (empty: the sandbox makes one, kept across
// reconnections), resuming after position after when resume is set, and
// calls fn with each event until ctx ends or fn returns an error.
func (c *Conn) Listen(ctx context.Context, events []string, token string, resume bool, after uint64, fn func(Event) error) error {
	s := c.stream("/sandbox/listen", true)
	s.Resume, s.After = resume, after
	return s.Run(ctx, func(ev sse.Event) error {
		switch ev.Name {
		case "session":
			var v Session
			if err := json.Unmarshal(ev.Data, &v); err != nil {
				return sse.ErrBadEvent
			}
			if token == "" {
				token = v.Token // the same token on every reconnection
			}
			// Where this connection's notifications begin: after a
			// restart, the new run's start, so the next reconnection
			// neither hears of the restart again nor gets its
			// notifications twice.
			s.Resume, s.After = true, v.Position
			return fn(Event{Session: &v})
		case "notification":
			var v Notification
			var body struct {
				Body *string `json:"body"`
			}
			if ev.ID == 0 || json.Unmarshal(ev.Data, &v) != nil || json.Unmarshal(ev.Data, &body) != nil || body.Body == nil {
				return sse.ErrBadEvent
			}
			v.Position, v.Body = ev.ID, []byte(*body.Body)
			return fn(Event{Notification: &v})
		case "missed":
			var v Missed
			if err := json.Unmarshal(ev.Data, &v); err != nil {
				return sse.ErrBadEvent
			}
			return fn(Event{Missed: &v})
		}
		return nil // an event of a later sandbox: not ours to read
	}, func() url.Values {
		q := url.Values{}
		if len(events) > 0 {
			q.Set("events", strings.Join(events, ","))
		}
		if token != "" {
			q.Set("token", token)
		}
		return q
	})
}

// RequestEvent is one event of the request log's follow: a record or a
// Missed.
type RequestEvent struct {
	Position uint64
	Record   *service.RequestRecord
	Missed   *Missed
}

// FollowRequests follows the request log (with the control token) and
// calls fn with each event until ctx ends or fn returns an error.
func (c *Conn) FollowRequests(ctx context.Context, fn func(RequestEvent) error) error {
	s := c.stream("/sandbox/requests", false)
	return s.Run(ctx, func(ev sse.Event) error {
		switch ev.Name {
		case "session":
			var v struct {
				Position uint64 `json:"position"`
			}
			if err := json.Unmarshal(ev.Data, &v); err != nil {
				return sse.ErrBadEvent
			}
			s.Resume, s.After = true, v.Position
		case "request":
			var v service.RequestRecord
			if ev.ID == 0 || json.Unmarshal(ev.Data, &v) != nil {
				return sse.ErrBadEvent
			}
			return fn(RequestEvent{Position: ev.ID, Record: &v})
		case "missed":
			var v Missed
			if err := json.Unmarshal(ev.Data, &v); err != nil {
				return sse.ErrBadEvent
			}
			return fn(RequestEvent{Missed: &v})
		}
		return nil
	}, func() url.Values { return url.Values{"follow": {"1"}} })
}

// stream is the feed at path, signed as the merchant or with the control
// token; a refusal is the caller's error, and Final ones end the stream.
func (c *Conn) stream(path string, merchant bool) *sse.Stream {
	return &sse.Stream{URL: c.Base + path, Client: c.HC,
		Auth: func(req *http.Request) error {
			if !merchant {
				if c.Token != "" {
					req.Header.Set("Authorization", "Bearer "+c.Token)
				}
				return nil
			}
			req.Header.Set("X-Identity", c.APIKey)
			sig, err := c.Signer.Sign(req, nil)
			if err != nil {
				return fmt.Errorf("sandbox: signing the listen request: %w", err)
			}
			if strings.ContainsAny(sig, "\r\n") {
				return errors.New("sandbox: signing the listen request: the signature contains a line break")
			}
			req.Header.Set("X-Signature", sig)
			return nil
		},
		Refused: c.refused,
		Final:   c.Final,
	}
}
