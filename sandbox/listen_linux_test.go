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
	"syscall"
	"testing"
	"time"

	paykit "github.com/paykit-dev/paykit-go"
)

// BenchmarkNotifyThroughput measures what a listener that never reads
// costs the sandbox: each op creates a payment with a notify_url and
// cancels it (a webhook delivered to a local receiver, and a
// notification in the merchant's listen feed), over real loopback HTTP.
// "stalled" has a listener connected whose socket takes a few kilobytes
// and is never read, so its stream blocks at once and its queue drops its
// oldest notifications; "none" has no listener, "reading" one that reads.
// The three should be within noise of each other.
func BenchmarkNotifyThroughput(b *testing.B) {
	for _, mode := range []string{"none", "reading", "stalled"} {
		b.Run(mode, func(b *testing.B) {
			sb := New(Config{Now: func() time.Time { return base }, MaxSamePendingAmount: 1 << 30})
			ts := httptest.NewServer(sb)
			recv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
			defer func() { ts.Close(); sb.Close(); recv.Close() }()
			var stalled net.Conn
			switch mode {
			case "stalled":
				stalled = dialListen(b, ts.URL, true)
				defer stalled.Close()
			case "reading":
				c := dialListen(b, ts.URL, false)
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
		})
	}
}

// dialListen opens GET /sandbox/listen on a raw connection and reads its
// answer's head; with small, the socket's receive buffer is a few
// kilobytes, so a stream nobody reads blocks the sandbox's writes to it at
// once.
func dialListen(b *testing.B, base string, small bool) net.Conn {
	d := net.Dialer{}
	if small {
		d.Control = func(_, _ string, c syscall.RawConn) error {
			var err error
			c.Control(func(fd uintptr) { err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
			return err
		}
	}
	host := strings.TrimPrefix(base, "http://")
	c, err := d.Dial("tcp", host)
	if err != nil {
		b.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/sandbox/listen", nil)
	sig, _ := paykit.HMACSigner(DefaultSecret).Sign(req, nil)
	fmt.Fprintf(c, "GET /sandbox/listen HTTP/1.1\r\nHost: %s\r\nX-Identity: %s\r\nX-Signature: %s\r\n\r\n", host, DefaultAPIKey, sig)
	br := bufio.NewReader(c)
	line, err := br.ReadString('\n')
	if err != nil || !strings.Contains(line, " 200 ") {
		b.Fatalf("listen answered %q, %v", line, err)
	}
	return c
}
