package paykit

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// h2Front is an HTTP/2 server over TLS that behaves as a load balancer
// that acts on a request and then resets its stream, or sends GOAWAY, or
// drops the connection: what makes Go's HTTP/2 client send a request
// again by itself (h2_bundle.go, canRetryError).
//
// It passes frames between the client and an h2c backend (a real Go
// HTTP/2 server running the test's handler), reading only frame headers:
// HPACK state stays between the two ends, and the client's SETTINGS ask
// the backend for a dynamic table of size 0 so that a response the front
// drops leaves the client's decoder in step. A handler asks for a fault by
// answering with frontFault's body: the front holds each response's
// HEADERS until its first DATA frame, and in place of a fault's response
// it acts, so the client never sees any of that response.
type h2Front struct {
	ln      net.Listener
	backend *httptest.Server
	URL     string
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   map[net.Conn]bool
}

// Faults a handler asks the front for, after it has done its work.
const (
	faultRSTProtocol = 'P' // RST_STREAM PROTOCOL_ERROR: Go's client resends
	faultRSTRefused  = 'R' // RST_STREAM REFUSED_STREAM: "not processed", a lie
	faultGoAway      = 'G' // GOAWAY naming an earlier last stream: "not processed", a lie
	faultCloseConn   = 'C' // the connection drops: the answer is lost
)

const frontMarker = "\x00paykit-h2front-fault:"

// frontFault answers a request with the marker that asks the front for
// fault f instead of this response.
func frontFault(w http.ResponseWriter, f byte) {
	w.Header().Set("Content-Type", "application/octet-stream")
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, frontMarker+string(f))
	w.(http.Flusher).Flush()
}

// frontCert is httptest's certificate and a pool that trusts it.
var frontCert = sync.OnceValues(func() ([]tls.Certificate, *x509.CertPool) {
	s := httptest.NewUnstartedServer(http.NotFoundHandler())
	s.StartTLS()
	defer s.Close()
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate())
	return s.TLS.Certificates, pool
})

func newH2Front(t testing.TB, h http.Handler) *h2Front {
	t.Helper()
	backend := httptest.NewUnstartedServer(h)
	backend.Config.Protocols = new(http.Protocols)
	backend.Config.Protocols.SetUnencryptedHTTP2(true)
	backend.Start()
	certs, _ := frontCert()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &h2Front{ln: ln, backend: backend, URL: "https://" + ln.Addr().String(), conns: map[net.Conn]bool{}}
	cfg := &tls.Config{Certificates: certs, NextProtos: []string{"h2"}}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			f.wg.Add(1)
			go func() {
				defer f.wg.Done()
				f.serve(tls.Server(c, cfg))
			}()
		}
	}()
	return f
}

// Close stops the front, its connections and the backend. Handlers that
// hang must have returned, or been told to, first.
func (f *h2Front) Close() {
	f.ln.Close()
	f.mu.Lock()
	for c := range f.conns {
		c.Close()
	}
	f.conns = nil
	f.mu.Unlock()
	f.wg.Wait()
	f.backend.CloseClientConnections()
	f.backend.Close()
}

func (f *h2Front) track(c net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conns == nil {
		return false
	}
	f.conns[c] = true
	return true
}

// frontTransport is the SDK's default transport, trusting the front.
func frontTransport() *http.Transport {
	_, pool := frontCert()
	tr := defaultTransport()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool}
	return tr
}

const (
	frameData     = 0x0
	frameHeaders  = 0x1
	frameRST      = 0x3
	frameSettings = 0x4
	frameGoAway   = 0x7
	flagEndStream = 0x1
	flagAck       = 0x1
	flagEndHdrs   = 0x4
	flagPadded    = 0x8
)

type frame struct {
	typ, flags byte
	stream     uint32
	payload    []byte
}

func readFrame(r io.Reader) (frame, error) {
	var h [9]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return frame{}, err
	}
	fr := frame{typ: h[3], flags: h[4], stream: binary.BigEndian.Uint32(h[5:]) & 0x7fffffff,
		payload: make([]byte, int(h[0])<<16|int(h[1])<<8|int(h[2]))}
	_, err := io.ReadFull(r, fr.payload)
	return fr, err
}

func (fr frame) append(b []byte) []byte {
	n := len(fr.payload)
	b = append(b, byte(n>>16), byte(n>>8), byte(n), fr.typ, fr.flags)
	b = binary.BigEndian.AppendUint32(b, fr.stream)
	return append(b, fr.payload...)
}

func (f *h2Front) serve(client *tls.Conn) {
	if !f.track(client) {
		client.Close()
		return
	}
	defer client.Close()
	if client.Handshake() != nil || client.ConnectionState().NegotiatedProtocol != "h2" {
		return
	}
	backend, err := net.Dial("tcp", f.backend.Listener.Addr().String())
	if err != nil {
		return
	}
	defer backend.Close()
	done := make(chan struct{})
	go func() { // client to backend
		defer close(done)
		defer backend.Close()
		preface := make([]byte, len(http2Preface))
		if _, err := io.ReadFull(client, preface); err != nil || string(preface) != http2Preface {
			return
		}
		if _, err := backend.Write(preface); err != nil {
			return
		}
		for {
			fr, err := readFrame(client)
			if err != nil {
				return
			}
			if fr.typ == frameSettings && fr.flags&flagAck == 0 {
				fr.payload = append(fr.payload, 0, 1, 0, 0, 0, 0) // SETTINGS_HEADER_TABLE_SIZE = 0
			}
			if _, err := backend.Write(fr.append(nil)); err != nil {
				return
			}
		}
	}()
	f.pumpBack(client, backend)
	client.Close()
	<-done
}

const http2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// pumpBack passes the backend's frames to the client, holding each
// response's HEADERS until its first DATA and acting on a fault's marker.
func (f *h2Front) pumpBack(client, backend net.Conn) {
	held := map[uint32]frame{}
	dropped := map[uint32]bool{}
	for {
		fr, err := readFrame(backend)
		if err != nil {
			return
		}
		var out []byte
		switch {
		case fr.stream != 0 && dropped[fr.stream]:
			continue
		case fr.typ == frameHeaders && fr.stream != 0 && fr.flags&flagEndStream == 0 && fr.flags&flagEndHdrs != 0:
			held[fr.stream] = fr
			continue
		case fr.typ == frameData && fr.flags&flagPadded == 0 && bytes.HasPrefix(fr.payload, []byte(frontMarker)):
			delete(held, fr.stream)
			dropped[fr.stream] = true
			fault := fr.payload[len(frontMarker)]
			switch fault {
			case faultRSTProtocol, faultRSTRefused:
				code := uint32(0x1)
				if fault == faultRSTRefused {
					code = 0x7
				}
				out = frame{typ: frameRST, stream: fr.stream, payload: binary.BigEndian.AppendUint32(nil, code)}.append(nil)
			case faultGoAway:
				last := uint32(0)
				if fr.stream > 2 {
					last = fr.stream - 2
				}
				p := binary.BigEndian.AppendUint32(nil, last)
				out = frame{typ: frameGoAway, payload: binary.BigEndian.AppendUint32(p, 0)}.append(nil)
			}
			if len(out) > 0 {
				if _, err := client.Write(out); err != nil {
					return
				}
			}
			if fault == faultGoAway || fault == faultCloseConn {
				return
			}
			continue
		default:
			if h, ok := held[fr.stream]; ok {
				delete(held, fr.stream)
				out = h.append(out)
			}
		}
		if _, err := client.Write(fr.append(out)); err != nil {
			return
		}
	}
}

// The front's faults are what they claim: after each, Go's HTTP/2 client
// sends a request it can rewind again by itself. Were a Go release to stop
// doing so, the tests that prove the SDK prevents it would pass without
// proving anything; this one would fail.
func TestH2FrontMakesGoResend(t *testing.T) {
	t.Parallel()
	for _, fault := range []byte{faultRSTProtocol, faultRSTRefused, faultGoAway} {
		var deliveries atomic.Int32
		front := newH2Front(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, err := io.ReadAll(r.Body); err != nil {
				return
			}
			if deliveries.Add(1) == 1 {
				frontFault(w, fault)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		}))
		tr := frontTransport()
		req, err := http.NewRequest(http.MethodPost, front.URL+"/v1/transfers", strings.NewReader(`{"amount":1}`))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := (&http.Client{Transport: tr}).Do(req) // GetBody set by NewRequest
		if err != nil {
			t.Fatalf("fault %c: %v", fault, err)
		}
		resp.Body.Close()
		tr.CloseIdleConnections()
		front.Close()
		if resp.StatusCode != http.StatusNoContent || resp.ProtoMajor != 2 || deliveries.Load() != 2 {
			t.Errorf("fault %c: HTTP %d over HTTP/%d after %d deliveries; want 204 over HTTP/2 after 2",
				fault, resp.StatusCode, resp.ProtoMajor, deliveries.Load())
		}
	}
}
