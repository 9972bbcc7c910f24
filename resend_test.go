package paykit

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 35, point 1: no layer below the SDK puts a write on the wire twice
// within one attempt without the SDK knowing. These run the outcome
// oracle's worlds (outcome_oracle_test.go) with one transport fault each,
// for every write of the operation table and Do: the service applies the
// request at most once, the answer is true (success only if applied as
// asked, a definite error only if not applied, otherwise ErrUnknownOutcome
// naming the read that settles it), and the service never sees the write
// more often than the SDK attempted it.

// applicableWorld is the oracle world in which op's request can be
// applied: a free ext_id, or the payment in the state op starts from.
func applicableWorld(op *oracleOp) uint8 {
	if op.kind == stateChangeKind {
		return uint8(slices.Index(oracleStatuses, op.from[0]))
	}
	return 0
}

// h2Faults are the faults after which Go's HTTP/2 client sends a request
// again by itself, in sResend's order.
var h2Faults = []string{"RST_STREAM PROTOCOL_ERROR", "RST_STREAM REFUSED_STREAM", "GOAWAY"}

// The service (a real Go HTTP/2 server behind a front that acts as a load
// balancer) applies the write, then resets its stream or sends GOAWAY:
// Go's HTTP/2 client would send it again, and the SDK would count one
// attempt (on the old code: a transfer applied twice and answered as a
// success; PAY_003 answered as ErrDuplicateExtID; a cancel answered as
// "cannot be cancelled").
func TestHTTP2DoesNotResendAWrite(t *testing.T) {
	t.Parallel()
	for _, op := range oracleOps {
		for f, fault := range h2Faults {
			t.Run(op.name+"/"+fault, func(t *testing.T) {
				t.Parallel()
				runOracle(t, op, applicableWorld(op), bHTTP2,
					[]byte{sResend | sApply, byte(f), sAsService, sAsService, rAsStored, rAsStored})
			})
		}
	}
}

// The same through a proxy the transport knows of (Transport.Proxy, an
// HTTP CONNECT tunnel to the service).
func TestHTTP2ThroughAProxyDoesNotResendAWrite(t *testing.T) {
	t.Parallel()
	proxy := httptest.NewUnstartedServer(http.HandlerFunc(connectProxy))
	var tunnels atomic.Int32
	proxy.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateHijacked {
			tunnels.Add(1)
		}
	}
	proxy.Start()
	t.Cleanup(proxy.Close) // after the parallel subtests
	proxyURL, _ := url.Parse(proxy.URL)
	through := oracleLayer{wrap: func(tr *http.Transport) http.RoundTripper {
		tr.Proxy = http.ProxyURL(proxyURL)
		return tr
	}}
	for _, op := range oracleOps {
		t.Run(op.name, func(t *testing.T) {
			t.Parallel()
			runOracleBelow(t, op, applicableWorld(op), bHTTP2,
				[]byte{sResend | sApply, 0, sAsService, sAsService, rAsStored, rAsStored}, through)
		})
	}
	t.Cleanup(func() {
		if tunnels.Load() == 0 {
			t.Error("no call went through the proxy")
		}
	})
}

// connectProxy is an HTTP CONNECT proxy: it tunnels bytes and never
// sends anything again.
func connectProxy(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodConnect {
		http.Error(w, "CONNECT only", http.StatusMethodNotAllowed)
		return
	}
	up, err := net.Dial("tcp", r.Host)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer up.Close()
	w.WriteHeader(http.StatusOK)
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	done := make(chan struct{})
	go func() {
		io.Copy(up, buf)
		up.(*net.TCPConn).CloseWrite()
		close(done)
	}()
	io.Copy(conn, up)
	<-done
}

// A layer between the SDK and the transport that sends a request again
// after its connection failed (through GetBody, or the request as it is),
// over HTTP/1.1 and HTTP/2, with the service having applied the first
// delivery and the connection closed after it was read: the layer gets no
// body it can send a second time (on the old code it got GetBody: a
// transfer applied twice, answered as a success).
func TestAResendingLayerGetsNoSecondBody(t *testing.T) {
	t.Parallel()
	for _, proto := range []uint8{0, bHTTP2} {
		for _, op := range oracleOps {
			t.Run(op.name+map[uint8]string{0: "/HTTP1.1", bHTTP2: "/HTTP2"}[proto], func(t *testing.T) {
				t.Parallel()
				runOracle(t, op, applicableWorld(op), proto|bResender,
					[]byte{sResend | sApply, 0, sAsService, sAsService, rAsStored, rAsStored})
			})
		}
	}
}

// A layer that keeps the bytes it read and sends them again (as
// go-retryablehttp's RoundTripper does, on any method) cannot be stopped
// from below it, but net/http tells the request's trace of each write:
// the SDK sees the second one and treats the attempt as possibly applied.
// A money move the service applied twice is then ErrUnknownOutcome, never
// a success (on the old code: a success); a create or state change whose
// second delivery found the work done is read back, never answered as
// someone else's (on the old code: ErrDuplicateExtID, "cannot be
// cancelled").
func TestABufferingResenderIsSeen(t *testing.T) {
	t.Parallel()
	buffering := oracleLayer{resends: true, wrap: func(tr *http.Transport) http.RoundTripper {
		return bufferingResender{tr}
	}}
	for _, proto := range []uint8{0, bHTTP2} {
		for _, op := range oracleOps {
			t.Run(op.name+map[uint8]string{0: "/HTTP1.1", bHTTP2: "/HTTP2"}[proto], func(t *testing.T) {
				t.Parallel()
				runOracleBelow(t, op, applicableWorld(op), proto,
					[]byte{sResend | sApply, 0, sAsService, sAsService, rAsStored, rAsStored}, buffering)
			})
		}
	}
}

// bufferingResender reads a request's body once and sends the bytes again
// after a failed connection.
type bufferingResender struct{ base http.RoundTripper }

func (b bufferingResender) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		req.Body.Close()
	}
	send := func() (*http.Response, error) {
		r := req.Clone(req.Context())
		if req.Body != nil {
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		return b.base.RoundTrip(r)
	}
	resp, err := send()
	if err != nil && req.Context().Err() == nil {
		return send()
	}
	return resp, err
}

// A write without a body goes out with an empty one that the transport
// cannot send again: over HTTP/1.1 "Transfer-Encoding: chunked" and a
// zero chunk, in one write with the headers; over HTTP/2 no length and an
// empty body. The signature is the body-less one either way.
func TestBodilessWriteOnTheWire(t *testing.T) {
	t.Parallel()
	type seen struct {
		proto    string
		length   int64
		encoding []string
	}
	for _, h2 := range []bool{false, true} {
		rec := &recorder{}
		var mu sync.Mutex
		var got []seen
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec.record(r)
			mu.Lock()
			got = append(got, seen{r.Proto, r.ContentLength, r.TransferEncoding})
			mu.Unlock()
			writeCanned(w, http.StatusOK, []byte(paymentBody(paymentID, "order-1", "1000", "CANCELLED")))
		})
		var writes atomic.Int32
		var base string
		var tr *http.Transport
		if h2 {
			front := newH2Front(t, h)
			defer front.Close()
			base, tr = front.URL, frontTransport()
		} else {
			srv := newBenchServer(t, h, nil)
			base, tr = srv.URL, defaultTransport()
			countWrites(tr, &writes)
		}
		t.Cleanup(tr.CloseIdleConnections)
		c, err := NewClient(base, testKey, HMACSigner(testSecret), WithHTTPClient(&http.Client{Transport: tr}))
		require.NoError(t, err)
		_, err = c.CancelPayment(ctx, paymentID)
		require.NoError(t, err)
		reqs := rec.all()
		require.Len(t, reqs, 1)
		assertWire(t, reqs[0], "POST", "/v1/payments/"+paymentID+"/cancel", "", "")
		if h2 {
			assert.Equal(t, seen{"HTTP/2.0", -1, nil}, got[0])
			continue
		}
		assert.Equal(t, seen{"HTTP/1.1", -1, []string{"chunked"}}, got[0])
		assert.Equal(t, int32(1), writes.Load(), "writes of the request")
	}
}

// Do with any write method, with a body or without, is sent once over
// HTTP/2 when the service acts and resets the stream, and ends in
// ErrUnknownOutcome naming the read to make (on the old code a DELETE or
// PUT was delivered twice and answered as a success).
func TestDoWritesAreNotResentByHTTP2(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		method string
		body   any
	}{{http.MethodDelete, nil}, {http.MethodPut, map[string]string{"status": "x"}}, {http.MethodPatch, nil}, {http.MethodPost, nil}} {
		t.Run(tc.method, func(t *testing.T) {
			t.Parallel()
			var deliveries atomic.Int32
			front := newH2Front(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if _, err := io.ReadAll(r.Body); err != nil {
					return
				}
				if deliveries.Add(1) == 1 {
					frontFault(w, faultRSTProtocol) // applied, then reset
					return
				}
				writeCanned(w, http.StatusOK, []byte(`{}`))
			}))
			defer front.Close()
			tr := frontTransport()
			defer tr.CloseIdleConnections()
			c, err := NewClient(front.URL, testKey, HMACSigner(testSecret), WithHTTPClient(&http.Client{Transport: tr}))
			require.NoError(t, err)
			var out map[string]any
			err = c.Do(ctx, tc.method, "/v1/things/1", tc.body, &out)
			require.ErrorIs(t, err, ErrUnknownOutcome)
			assert.Contains(t, err.Error(), "read the resource with a GET")
			assert.Equal(t, int32(1), deliveries.Load(), "deliveries")
		})
	}
}
