package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	paykit "github.com/paykit-dev/paykit-go"
)

// BenchmarkNotifyThroughput measures what a listener that never reads
// costs the sandbox: each op creates a payment with a notify_url and
// cancels it (a webhook delivered to a local receiver, and a
// notification in the merchant's listen feed), over real loopback HTTP.
// "stalled" has a listener whose connection takes no byte at all (its
// handler is blocked in its first write for the whole run, so its queue
// is full and drops its oldest notifications from the 257th on); "none"
// has no listener, "reading" one that reads over TCP. The three should be
// within noise of each other.
func BenchmarkNotifyThroughput(b *testing.B) {
	for _, mode := range []string{"none", "reading", "stalled"} {
		b.Run(mode, func(b *testing.B) {
			sb := New(Config{Now: func() time.Time { return base }, MaxSamePendingAmount: 1 << 30})
			ts := httptest.NewServer(sb)
			recv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
			defer func() { ts.Close(); sb.Close(); recv.Close() }()
			var stalled *blockedWriter
			letGo := func() {}
			switch mode {
			case "stalled":
				stalled = &blockedWriter{header: http.Header{}, release: make(chan struct{}), wrote: make(chan struct{}),
					more: make(chan struct{}, 1)}
				req := httptest.NewRequest(http.MethodGet, "/sandbox/listen", nil)
				sig, _ := paykit.HMACSigner(DefaultSecret).Sign(req, nil)
				req.Header.Set("X-Identity", DefaultAPIKey)
				req.Header.Set("X-Signature", sig)
				ctx, cancel := context.WithCancel(context.Background())
				served := make(chan struct{})
				go func() { sb.ServeHTTP(stalled, req.WithContext(ctx)); close(served) }()
				// Its handler stays blocked in Write until release: let it go
				// also when the run was too short to stall it (-benchtime=1x).
				var release sync.Once
				letGo = func() { release.Do(func() { close(stalled.release) }) }
				defer func() { cancel(); letGo(); <-served }()
				<-stalled.wrote
			case "reading":
				c := dialListen(b, ts.URL)
				defer c.Close()
				go io.Copy(io.Discard, c)
			}
			hc := ts.Client()
			send := func(method, path, body string) string {
				req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
				if body != "" {
					req.Header.Set("Content-Type", "application/json")
				}
				var raw []byte
				if body != "" {
					raw = []byte(body)
				}
				sig, _ := paykit.HMACSigner(DefaultSecret).Sign(req, raw)
				req.Header.Set("X-Identity", DefaultAPIKey)
				req.Header.Set("X-Signature", sig)
				res, err := hc.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				out, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != 200 {
					b.Fatalf("%s %s: %d %s", method, path, res.StatusCode, out)
				}
				return string(out)
			}
			i := 0
			b.ResetTimer()
			for b.Loop() {
				i++
				out := send("POST", "/v1/payments", `{"ext_id":"b`+strconv.Itoa(i)+`","amount":150,"notify_url":"`+recv.URL+`"}`)
				id := out[strings.Index(out, `"id":"`)+6:]
				id = id[:strings.IndexByte(id, '"')]
				send("POST", "/v1/payments/"+id+"/cancel", "")
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := sb.FlushWebhooks(ctx); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if got := len(sb.Deliveries()); got < min(i, DefaultDeliveryLogSize) {
				b.Fatalf("%d deliveries logged for %d cancels", got, i)
			}
			if stalled != nil && i > DefaultListenBuffer {
				// It did stall: let go, it is told it lost notifications.
				letGo()
				for deadline := time.After(10 * time.Second); ; {
					stalled.mu.Lock()
					told := strings.Contains(stalled.buf.String(), "event: missed\n")
					stalled.mu.Unlock()
					if told {
						break
					}
					select {
					case <-stalled.more:
					case <-deadline:
						b.Fatal("the stalled listener was never told it lost notifications")
					}
				}
			}
		})
	}
}

// dialListen opens GET /sandbox/listen on a raw connection and reads its
// answer's status line.
func dialListen(b *testing.B, base string) net.Conn {
	host := strings.TrimPrefix(base, "http://")
	c, err := net.Dial("tcp", host)
	if err != nil {
		b.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/sandbox/listen", nil)
	sig, _ := paykit.HMACSigner(DefaultSecret).Sign(req, nil)
	fmt.Fprintf(c, "GET /sandbox/listen HTTP/1.1\r\nHost: %s\r\nX-Identity: %s\r\nX-Signature: %s\r\n\r\n", host, DefaultAPIKey, sig)
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.Contains(line, " 200 ") {
		b.Fatalf("listen answered %q, %v", line, err)
	}
	return c
}
