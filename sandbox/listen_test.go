package sandbox

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox/internal/receivertest"
)

// listener follows a Remote's listen feed in the background.
type listener struct {
	t      *testing.T
	events chan ListenEvent
	done   chan error
	cancel context.CancelFunc
	once   sync.Once
}

func listen(t *testing.T, r *Remote, opts ...ListenOption) *listener {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	l := &listener{t: t, events: make(chan ListenEvent, 4096), done: make(chan error, 1), cancel: cancel}
	go func() {
		l.done <- r.Listen(ctx, func(ev ListenEvent) error {
			l.events <- ev
			return nil
		}, opts...)
	}()
	t.Cleanup(l.stop)
	return l
}

// stop ends Listen and waits for it.
func (l *listener) stop() {
	l.once.Do(func() {
		l.cancel()
		select {
		case <-l.done:
		case <-time.After(10 * time.Second):
			l.t.Error("Listen did not return after its context ended")
		}
	})
}

// next is the next event, within a deadline.
func (l *listener) next() ListenEvent {
	l.t.Helper()
	select {
	case ev := <-l.events:
		return ev
	case err := <-l.done:
		l.t.Fatalf("Listen ended: %v", err)
	case <-time.After(10 * time.Second):
		l.t.Fatal("no listen event within 10 s")
	}
	return ListenEvent{}
}

func (l *listener) session() *ListenSession {
	l.t.Helper()
	ev := l.next()
	if ev.Session == nil {
		l.t.Fatalf("first event is not a session: %+v", ev)
	}
	return ev.Session
}

func (l *listener) notification() *ListenNotification {
	l.t.Helper()
	ev := l.next()
	if ev.Notification == nil {
		l.t.Fatalf("event is not a notification: %+v", ev)
	}
	return ev.Notification
}

// quiet says that no event is waiting once the sandbox is idle: read
// after a marker notification the caller knows comes last.
func (l *listener) quiet() {
	l.t.Helper()
	select {
	case ev := <-l.events:
		l.t.Fatalf("unexpected event %+v", ev)
	default:
	}
}

func (e *env) remote(t *testing.T, key, secret string) *Remote {
	t.Helper()
	r, err := NewRemote(e.ts.URL, WithMerchant(key, paykit.HMACSigner(secret)))
	must(t, err)
	return r
}

const wallet = "TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf"

// TestListenFeed: every notification of the merchant's resources, in
// order, with the headers and exact body a notify_url gets; resources
// without a notify_url or token carry the session's token; withdrawals,
// which have no notify_url, are in it too.
func TestListenFeed(t *testing.T) {
	e := newEnv(t, Config{})
	sink := receivertest.NewRecording(t)
	l := listen(t, e.remote(t, e.key, e.sec))
	sess := l.session()
	if !strings.HasPrefix(sess.Token, "lst_") || len(sess.Token) != 36 {
		t.Fatalf("session token has not the sandbox's form (lst_ and 32 hex digits)")
	}

	withHook := e.createPayment(`{"ext_id":"l1","amount":150,"notify_url":"` + sink.URL + `","notification_token":"tok-1"}`).str("id")
	bare := e.createPayment(`{"ext_id":"l2","amount":150}`).str("id")
	wantStatus(t, e.do("POST", "/v1/payments/"+withHook+"/cancel", ""), 200, "")
	wantStatus(t, e.do("POST", "/v1/payments/"+bare+"/cancel", ""), 200, "")
	po := e.do("POST", "/v1/payouts", `{"ext_id":"l3","amount":1,"method":"card","requisites":"2200000000000004","holder_name":"A","notify_url":"`+sink.URL+`?secret=s3"}`).str("id")
	must(t, e.sb.SetPayoutStatus(po, "processing"))
	wd := e.do("POST", "/v1/withdrawals", `{"terminal_id":"term_sandbox_main","amount":1,"address":"`+wallet+`"}`).str("id")
	must(t, e.sb.SetWithdrawalStatus(wd, "completed", ""))
	e.flush()

	type want struct{ kind, id, status, url, token string }
	wants := []want{
		{"payment", withHook, "CANCELLED", sink.URL, "tok-1"},
		{"payment", bare, "CANCELLED", "", sess.Token},
		{"payout", po, "processing", sink.URL + "?secret=xxxxx", sess.Token},
		{"withdrawal", wd, "completed", "", sess.Token},
	}
	var got []*ListenNotification
	for i, w := range wants {
		n := l.notification()
		got = append(got, n)
		if n.Kind != w.kind || n.ID != w.id || n.Status != w.status || n.NotifyURL != w.url {
			t.Errorf("notification %d = %s %s %s %q, want %s %s %s %q", i, n.Kind, n.ID, n.Status, n.NotifyURL, w.kind, w.id, w.status, w.url)
		}
		if n.Headers["X-Notification-Token"] != w.token {
			t.Errorf("notification %d: X-Notification-Token is not the %s's token", i, map[bool]string{true: "resource", false: "session"}[w.token == "tok-1"])
		}
		if n.Headers["Content-Type"] != "application/json" || n.Headers["User-Agent"] != "paykit-sandbox-webhooks" || len(n.Headers) != 3 {
			t.Errorf("notification %d headers: Content-Type %q, User-Agent %q, %d headers", i, n.Headers["Content-Type"], n.Headers["User-Agent"], len(n.Headers))
		}
		if want := sess.Position + uint64(i) + 1; n.Position != want {
			t.Errorf("notification %d at position %d, want %d", i, n.Position, want)
		}
	}
	l.quiet()
	// The bodies are the very bytes the receiver got (two resources: in
	// either order).
	bodies, tokens := sink.Bodies(), sink.Tokens()
	if len(bodies) != 2 || !slices.Contains(bodies, string(got[0].Body)) || !slices.Contains(bodies, string(got[2].Body)) {
		t.Fatalf("feed bodies differ from the receiver's:\nfeed %s\n     %s\nsink %q", got[0].Body, got[2].Body, bodies)
	}
	if i := slices.Index(bodies, string(got[2].Body)); tokens[i] != "" {
		t.Errorf("the payout's real delivery carries a token; only the feed's copy has the session's")
	}
	for _, frag := range []string{`"id":"` + bare + `"`, `"status":"CANCELLED"`} {
		if !strings.Contains(string(got[1].Body), frag) {
			t.Errorf("payment body without notify_url lacks %s: %s", frag, got[1].Body)
		}
	}
	if !strings.Contains(string(got[3].Body), `"tx_hash":"`) || !strings.Contains(string(got[3].Body), `"status":"completed"`) {
		t.Errorf("withdrawal body: %s", got[3].Body)
	}
}

// TestListenWire: the exact wire of the feed, as a client in any
// language reads it.
func TestListenWire(t *testing.T) {
	e := newEnv(t, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.ts.URL+"/sandbox/listen?token=my-token&events=payment", nil)
	sig, _ := paykit.HMACSigner(e.sec).Sign(req, nil)
	req.Header.Set("X-Identity", e.key)
	req.Header.Set("X-Signature", sig)
	res, err := e.ts.Client().Do(req)
	must(t, err)
	defer res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" || res.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("answer %d, Content-Type %q, Cache-Control %q", res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("Cache-Control"))
	}
	rd := bufio.NewReader(res.Body)
	event := func() string {
		var b strings.Builder
		for {
			line, err := rd.ReadString('\n')
			must(t, err)
			if line == "\n" {
				return b.String()
			}
			b.WriteString(line)
		}
	}
	first := event()
	pos := e.sb.svc.Probe().Feed().Log(e.key).Last()
	if want := "event: session\ndata: {\"token\":\"my-token\",\"position\":" + strconv.FormatUint(pos, 10) + "}\n"; first != want {
		t.Fatalf("session event:\n%q\nwant\n%q", first, want)
	}
	// A payout is filtered out; the payment's cancel is the next event.
	po := e.do("POST", "/v1/payouts", `{"ext_id":"w1","amount":1,"method":"card","requisites":"2200000000000004","holder_name":"A"}`).str("id")
	must(t, e.sb.SetPayoutStatus(po, "processing"))
	id := e.createPayment(`{"ext_id":"w2","amount":150}`).str("id")
	p := e.do("POST", "/v1/payments/"+id+"/cancel", "")
	// The API's view, and the rate a webhook body carries besides.
	body := strings.TrimSuffix(strings.TrimSuffix(p.raw, "\n"), "}") + `,"usdt_rate":92.50}`
	quoted := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(body)
	want := "id: " + strconv.FormatUint(pos+2, 10) + "\nevent: notification\ndata: {\"kind\":\"payment\",\"id\":\"" + id +
		"\",\"status\":\"CANCELLED\",\"notify_url\":\"\",\"headers\":{\"Content-Type\":\"application/json\",\"User-Agent\":\"paykit-sandbox-webhooks\",\"X-Notification-Token\":\"my-token\"},\"body\":\"" +
		quoted + "\"}\n"
	if got := event(); got != want {
		t.Fatalf("notification event:\n%q\nwant\n%q", got, want)
	}
}

// TestListenSeesOnlyItsMerchant: a merchant's feed never carries another
// merchant's notifications, and a wrong signature is refused for good.
func TestListenSeesOnlyItsMerchant(t *testing.T) {
	e := newEnv(t, Config{Merchants: []Merchant{DefaultMerchant("pk_a", "sk_a"), DefaultMerchant("pk_b", "sk_b")}})
	la := listen(t, e.remote(t, "pk_a", "sk_a"))
	lb := listen(t, e.remote(t, "pk_b", "sk_b"))
	la.session()
	lb.session()
	eb := e.as("pk_b", "sk_b")
	idB := eb.createPayment(`{"ext_id":"b1","amount":150}`).str("id")
	wantStatus(t, eb.do("POST", "/v1/payments/"+idB+"/cancel", ""), 200, "")
	idA := e.createPayment(`{"ext_id":"a1","amount":150}`).str("id")
	wantStatus(t, e.do("POST", "/v1/payments/"+idA+"/cancel", ""), 200, "")
	if n := la.notification(); n.ID != idA {
		t.Fatalf("merchant a's feed carries %s, want only its own %s", n.ID, idA)
	}
	if n := lb.notification(); n.ID != idB {
		t.Fatalf("merchant b's feed carries %s, want only its own %s", n.ID, idB)
	}
	la.quiet()
	lb.quiet()

	err := e.remote(t, "pk_a", "sk_b").Listen(context.Background(), func(ListenEvent) error {
		t.Error("an event reached a listener with a wrong signature")
		return nil
	})
	var ce *ControlError
	if !errors.As(err, &ce) || ce.StatusCode != 401 || ce.Code != "AUTH_001" {
		t.Fatalf("wrong signature: %v, want a 401 AUTH_001 ControlError", err)
	}
	r, _ := NewRemote(e.ts.URL)
	if err := r.Listen(context.Background(), nil); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("Listen without WithMerchant: %v, want ErrInvalidArgument", err)
	}
	if err := e.remote(t, "pk_a", "sk_a").Listen(context.Background(), nil); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("Listen without a function: %v, want ErrInvalidArgument", err)
	}
	noop := func(ListenEvent) error { return nil }
	if err := e.remote(t, "pk_a", "sk_a").Listen(context.Background(), noop, ListenToken("two words")); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a token with a space: %v, want ErrInvalidArgument before any request", err)
	}
}

// TestListenResume: a listener that comes back with its last position
// gets what happened meanwhile, and nothing twice.
func TestListenResume(t *testing.T) {
	e := newEnv(t, Config{})
	r := e.remote(t, e.key, e.sec)
	cancelled := func(ext string) string {
		id := e.createPayment(`{"ext_id":"` + ext + `","amount":150}`).str("id")
		wantStatus(t, e.do("POST", "/v1/payments/"+id+"/cancel", ""), 200, "")
		return id
	}
	l := listen(t, r, ListenToken("tok-r"))
	l.session()
	first := cancelled("r1")
	n := l.notification()
	if n.ID != first {
		t.Fatalf("got %s, want %s", n.ID, first)
	}
	l.stop()
	second, third := cancelled("r2"), cancelled("r3")

	l2 := listen(t, r, ListenToken("tok-r"), ListenAfter(n.Position))
	if s := l2.session(); s.Position != n.Position || s.Token != "tok-r" {
		t.Fatalf("resumed session at %d with another token, want %d", s.Position, n.Position)
	}
	for _, want := range []string{second, third} {
		if got := l2.notification(); got.ID != want || got.Headers["X-Notification-Token"] != "tok-r" {
			t.Fatalf("replayed %s, want %s with the session's token", got.ID, want)
		}
	}
	l2.quiet()
}

// TestListenReconnects: Listen resumes by itself when the connection is
// cut, keeping its session's token, and loses nothing.
func TestListenReconnects(t *testing.T) {
	e := newEnv(t, Config{})
	l := listen(t, e.remote(t, e.key, e.sec))
	sess := l.session()
	id := e.createPayment(`{"ext_id":"c1","amount":150}`).str("id")
	e.ts.CloseClientConnections()        // the stream is cut
	e.ts.Client().CloseIdleConnections() // and the next request dials anew
	wantStatus(t, e.do("POST", "/v1/payments/"+id+"/cancel", ""), 200, "")
	var got *ListenNotification
	for got == nil {
		switch ev := l.next(); {
		case ev.Session != nil:
			if ev.Session.Token != sess.Token {
				t.Fatal("the reconnection has another session token")
			}
		case ev.Notification != nil:
			got = ev.Notification
		default:
			t.Fatalf("unexpected %+v", ev)
		}
	}
	if got.ID != id || got.Headers["X-Notification-Token"] != sess.Token {
		t.Fatalf("after the reconnection: %s, want %s with the first session's token", got.ID, id)
	}
}

// TestListenAcrossRestart: positions of a new run are above the old run's,
// and a listener resuming with an old position is told it may have missed
// something (the count unknown), then gets the new run's notifications;
// never an old run's position reused for another resource. Memory and
// SQLite alike: the feed is not kept in the file.
func TestListenAcrossRestart(t *testing.T) {
	for _, mode := range []string{"memory", "file"} {
		t.Run(mode, func(t *testing.T) {
			cfg := Config{Now: func() time.Time { return base }, WebhookRetryWait: time.Millisecond}
			if mode == "file" {
				cfg.DBPath = filepath.Join(t.TempDir(), "sandbox.db")
			}
			run := func() (*Server, *httptest.Server) {
				sb := New(cfg)
				return sb, httptest.NewServer(sb)
			}
			sb1, ts1 := run()
			e1 := &env{t: t, sb: sb1, ts: ts1, key: DefaultAPIKey, sec: DefaultSecret}
			l := listen(t, e1.remote(t, e1.key, e1.sec))
			l.session()
			id1 := e1.createPayment(`{"ext_id":"x1","amount":150}`).str("id")
			wantStatus(t, e1.do("POST", "/v1/payments/"+id1+"/cancel", ""), 200, "")
			last := l.notification().Position
			l.stop()
			ts1.Close()
			sb1.Close()

			sb2, ts2 := run()
			t.Cleanup(func() { ts2.Close(); sb2.Close() }) // after the listener's stop
			e2 := &env{t: t, sb: sb2, ts: ts2, key: DefaultAPIKey, sec: DefaultSecret}
			if b := sb2.svc.Probe().Feed().Log(DefaultAPIKey).Base(); b < last {
				t.Fatalf("the new run's positions begin at %d, below the old run's %d", b+1, last)
			}
			l2 := listen(t, e2.remote(t, e2.key, e2.sec), ListenAfter(last))
			s := l2.session()
			if s.Position != sb2.svc.Probe().Feed().Log(DefaultAPIKey).Base() {
				t.Fatalf("session resumes from %d, want the new run's base", s.Position)
			}
			m := l2.next().Missed
			if m == nil || m.Reason != "restart" || m.Count != -1 || m.From != last+1 {
				t.Fatalf("after a restart: %+v, want a restart notice from %d with an unknown count", m, last+1)
			}
			id2 := e2.createPayment(`{"ext_id":"x2","amount":150}`).str("id")
			wantStatus(t, e2.do("POST", "/v1/payments/"+id2+"/cancel", ""), 200, "")
			if n := l2.notification(); n.ID != id2 || n.Position <= last {
				t.Fatalf("new run: %s at %d, want %s above %d", n.ID, n.Position, id2, last)
			}
			l2.quiet()
		})
	}
}

// blockedWriter is a listener's connection that takes no bytes until
// released: a listener that never reads.
type blockedWriter struct {
	header  http.Header
	release chan struct{}
	mu      sync.Mutex
	buf     strings.Builder
	wrote   chan struct{} // closed once the first write is blocked
	once    sync.Once
	more    chan struct{} // signalled after each write
}

func (w *blockedWriter) Header() http.Header { return w.header }
func (w *blockedWriter) WriteHeader(int)     {}
func (w *blockedWriter) Write(b []byte) (int, error) {
	w.once.Do(func() { close(w.wrote) })
	<-w.release
	w.mu.Lock()
	n, err := w.buf.WriteString(string(b))
	w.mu.Unlock()
	select {
	case w.more <- struct{}{}:
	default:
	}
	return n, err
}
func (w *blockedWriter) Flush() {}

// TestStalledListenerNeverBlocks: a listener whose connection takes
// nothing does not hold up the sandbox: every change goes through while it
// is stalled, and once it reads again it is told exactly how many
// notifications it lost, then gets the latest DefaultListenBuffer.
func TestStalledListenerNeverBlocks(t *testing.T) {
	e := newEnv(t, Config{})
	w := &blockedWriter{header: http.Header{}, release: make(chan struct{}), wrote: make(chan struct{}),
		more: make(chan struct{}, 1)}
	req := httptest.NewRequest(http.MethodGet, "/sandbox/listen", nil)
	sig, _ := paykit.HMACSigner(e.sec).Sign(req, nil)
	req.Header.Set("X-Identity", e.key)
	req.Header.Set("X-Signature", sig)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan struct{})
	go func() { e.sb.ServeHTTP(w, req.WithContext(ctx)); close(served) }()
	<-w.wrote // the session event is stuck in the connection

	const n = DefaultListenBuffer + 40
	ids := make([]string, n)
	for i := range ids {
		ids[i] = e.createPayment(`{"ext_id":"s` + strconv.Itoa(i) + `","amount":150}`).str("id")
		wantStatus(t, e.do("POST", "/v1/payments/"+ids[i]+"/cancel", ""), 200, "")
	}
	close(w.release)
	// The marker: the last cancel's id arrives last.
	for deadline := time.After(10 * time.Second); ; {
		w.mu.Lock()
		s := w.buf.String()
		w.mu.Unlock()
		if strings.Contains(s, ids[n-1]) {
			break
		}
		select {
		case <-w.more:
		case <-deadline:
			t.Fatalf("the listener never got the last notification")
		}
	}
	cancel()
	<-served
	s := w.buf.String()
	first := e.sb.svc.Probe().Feed().Log(e.key).Base() + 1
	wantMissed := "event: missed\ndata: {\"from\":" + strconv.FormatUint(first, 10) + ",\"to\":" + strconv.FormatUint(first+39, 10) +
		",\"count\":40,\"reason\":\"slow\"}\n\n"
	if !strings.Contains(s, wantMissed) {
		t.Fatalf("no notice of the 40 notifications lost; the stream begins %q", s[:min(len(s), 600)])
	}
	if strings.Contains(s, ids[39]+`\"`) || !strings.Contains(s, ids[40]) {
		t.Fatalf("the stream does not hold exactly the latest %d notifications", DefaultListenBuffer)
	}
	if c := strings.Count(s, "event: notification"); c != DefaultListenBuffer {
		t.Fatalf("%d notifications, want %d", c, DefaultListenBuffer)
	}
}

// TestListenEndsWithTheServer: Close ends every listener's stream, so a
// test's httptest server does not wait on it.
func TestListenEndsWithTheServer(t *testing.T) {
	e := newEnv(t, Config{})
	req, _ := http.NewRequest(http.MethodGet, e.ts.URL+"/sandbox/listen", nil)
	sig, _ := paykit.HMACSigner(e.sec).Sign(req, nil)
	req.Header.Set("X-Identity", e.key)
	req.Header.Set("X-Signature", sig)
	res, err := e.ts.Client().Do(req)
	must(t, err)
	defer res.Body.Close()
	e.sb.Close()
	done := make(chan error, 1)
	go func() { _, err := io.ReadAll(res.Body); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("stream ended with %v, want a clean end", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stream outlived the Server")
	}
}

// TestListenRefusals: a bad option is a 400 that names it.
func TestListenRefusals(t *testing.T) {
	e := newEnv(t, Config{})
	for _, c := range []struct{ query, header, msg string }{
		{"?events=refund", "", `unknown kind "refund"`},
		{"?after=abc", "", "decimal position"},
		{"", "-1", "decimal position"},
		{"?token=" + strings.Repeat("t", 257), "", "at most 256"},
	} {
		req, _ := http.NewRequest(http.MethodGet, e.ts.URL+"/sandbox/listen"+c.query, nil)
		if c.header != "" {
			req.Header.Set("Last-Event-ID", c.header)
		}
		sig, _ := paykit.HMACSigner(e.sec).Sign(req, nil)
		req.Header.Set("X-Identity", e.key)
		req.Header.Set("X-Signature", sig)
		r := e.send(req)
		wantStatus(t, r, 400, "SANDBOX_INVALID")
		if !strings.Contains(r.str("message"), c.msg) {
			t.Errorf("%s%s: message %q lacks %q", c.query, c.header, r.str("message"), c.msg)
		}
	}
	// Unsigned: as /v1.
	wantStatus(t, e.send(must2(http.NewRequest(http.MethodGet, e.ts.URL+"/sandbox/listen", nil))), 401, "AUTH_001")
}

func must2[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// follower follows a Remote's request log in the background.
func follow(t *testing.T, r *Remote) (chan RequestEvent, context.CancelFunc, chan error) {
	ctx, cancel := context.WithCancel(context.Background())
	events, done := make(chan RequestEvent, 4096), make(chan error, 1)
	go func() {
		done <- r.FollowRequests(ctx, func(ev RequestEvent) error { events <- ev; return nil })
	}()
	t.Cleanup(func() { cancel(); <-done })
	return events, cancel, done
}

func nextRequest(t *testing.T, events chan RequestEvent) RequestEvent {
	t.Helper()
	select {
	case ev := <-events:
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no request event within 10 s")
	}
	return RequestEvent{}
}

// TestFollowRequests: the request log live, with the control token, masked
// as the log is: the records of the run so far first, then each request as
// it is answered, positions increasing; a follower that comes back with
// its position gets what it missed.
func TestFollowRequests(t *testing.T) {
	const tok = "ctl-77-9f3c2a7b1e8d4c6f0a5b9e2d"
	e := newEnv(t, Config{AllowRemote: true, ControlToken: tok})
	wantStatus(t, e.do("GET", "/v1/balance", ""), 200, "")

	anon, _ := NewRemote(e.ts.URL)
	var ce *ControlError
	if err := anon.FollowRequests(context.Background(), func(RequestEvent) error { return nil }); !errors.As(err, &ce) || ce.StatusCode != 401 {
		t.Fatalf("without the control token: %v, want 401", err)
	}
	r, _ := NewRemote(e.ts.URL, WithControlToken(tok))
	events, cancel, done := follow(t, r)
	// The past of this run first: the balance, then the refused follow.
	first := nextRequest(t, events)
	if first.Record == nil || first.Record.Route != "/v1/balance" || first.Record.Status != 200 {
		t.Fatalf("first record %+v, want GET /v1/balance 200", first.Record)
	}
	if rec := nextRequest(t, events).Record; rec == nil || rec.Path != "/sandbox/requests" || rec.Status != 401 || rec.Merchant != "" {
		t.Fatalf("second record %+v, want the refused follow", rec)
	}
	wantStatus(t, e.do("GET", "/v1/payments/by-ext-id/4111111111111111", ""), 404, "PAY_006")
	live := nextRequest(t, events)
	if rec := live.Record; rec == nil || rec.Method != "GET" || rec.Route != "/v1/payments/by-ext-id/{extId}" ||
		rec.Path != "/v1/payments/by-ext-id/************1111" || rec.Status != 404 || rec.Code != "PAY_006" {
		t.Fatalf("live record %+v, want the masked GET 404 PAY_006", live.Record)
	}
	if live.Record.Merchant != "pk_s…" || first.Record.Merchant != "pk_s…" {
		t.Fatalf("merchant of a signed request %q, %q, want the key's start pk_s…", live.Record.Merchant, first.Record.Merchant)
	}
	if live.Position <= first.Position {
		t.Fatalf("positions %d then %d: not increasing", first.Position, live.Position)
	}
	cancel()
	<-done
	done <- nil // for the cleanup
	// The follow is logged once the server has ended it.
	for deadline := time.Now().Add(10 * time.Second); ; {
		if rs := e.sb.Requests(); len(rs) > 0 && rs[0].Path == "/sandbox/requests" && rs[0].Status == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the ended follow was never logged")
		}
		time.Sleep(time.Millisecond)
	}
	wantStatus(t, e.do("GET", "/v1/terminals", ""), 200, "")
	// Resumed by hand, as a reconnection does: what came after, and no more.
	req, _ := http.NewRequest(http.MethodGet, e.ts.URL+"/sandbox/requests?follow=1", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Last-Event-ID", strconv.FormatUint(live.Position, 10))
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	res, err := e.ts.Client().Do(req.WithContext(ctx))
	must(t, err)
	defer res.Body.Close()
	rd := bufio.NewReader(res.Body)
	var lines []string
	for len(lines) < 10 {
		line, err := rd.ReadString('\n')
		must(t, err)
		lines = append(lines, line)
	}
	if lines[0] != "event: session\n" || lines[1] != "data: {\"position\":"+strconv.FormatUint(live.Position, 10)+"}\n" ||
		lines[3] != "id: "+strconv.FormatUint(live.Position+1, 10)+"\n" || lines[4] != "event: request\n" ||
		!strings.Contains(lines[5], `"route":"/sandbox/requests","path":"/sandbox/requests","status":200`) ||
		lines[6] != "\n" || lines[7] != "id: "+strconv.FormatUint(live.Position+2, 10)+"\n" ||
		lines[8] != "event: request\n" || !strings.Contains(lines[9], `"route":"/v1/terminals"`) {
		t.Fatalf("resumed stream:\n%s", strings.Join(lines, ""))
	}
}

// TestListenOutlivesServerTimeouts: the binary's http.Server has a read
// and a write timeout (a minute, two); a feed lifts them for its own
// request, so a listener is not cut off after them. Here they are 50 ms,
// and a notification comes after both have passed.
func TestListenOutlivesServerTimeouts(t *testing.T) {
	sb := New(Config{Now: func() time.Time { return base }})
	ts := httptest.NewUnstartedServer(sb)
	ts.Config.ReadTimeout, ts.Config.WriteTimeout = 50*time.Millisecond, 50*time.Millisecond
	ts.Start()
	t.Cleanup(func() { ts.Close(); sb.Close() })
	e := &env{t: t, sb: sb, ts: ts, key: DefaultAPIKey, sec: DefaultSecret}
	l := listen(t, e.remote(t, e.key, e.sec))
	l.session()
	<-time.After(200 * time.Millisecond) // both timeouts pass: what is tested, not a synchronisation
	id := e.createPayment(`{"ext_id":"t1","amount":150}`).str("id")
	wantStatus(t, e.do("POST", "/v1/payments/"+id+"/cancel", ""), 200, "")
	ev := l.next()
	if ev.Notification == nil || ev.Notification.ID != id {
		t.Fatalf("after the timeouts: %+v, want the notification on the same connection", ev)
	}
}
