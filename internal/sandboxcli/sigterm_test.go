package sandboxcli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

// accepted reports whether process pid holds the server side of the
// loopback TCP connection from clientPort to serverPort, that is, whether
// it has accepted it: a connection still in the listen backlog has no file
// descriptor in the process. Linux only (/proc).
func accepted(pid, serverPort, clientPort int) (bool, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/net/tcp", pid))
	if err != nil {
		return false, err
	}
	defer f.Close()
	local := fmt.Sprintf(":%04X", serverPort)
	remote := fmt.Sprintf(":%04X", clientPort)
	inode := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) > 9 && strings.HasSuffix(fs[1], local) && strings.HasSuffix(fs[2], remote) {
			inode = fs[9]
		}
	}
	if inode == "" {
		return false, sc.Err()
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return false, err
	}
	for _, fd := range fds {
		if l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil && l == "socket:["+inode+"]" {
			return true, nil
		}
	}
	return false, nil
}

// signalConn sends its local port on wrote at its first Write: the request
// is on its way.
type signalConn struct {
	net.Conn
	once  sync.Once
	wrote chan<- int
}

func (c *signalConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.once.Do(func() { c.wrote <- c.LocalAddr().(*net.TCPAddr).Port })
	return n, err
}

// TestSIGTERMFinishesInFlightAndKeepsOutbox: SIGTERM while requests are
// in flight (two creates and a transfer, each held 1.5 s in the handler by
// a delay fault, longer than the second that connections without a request
// may hold the shutdown, each on its own connection that the process has
// accepted) lets them finish with their answers, the process exits 0, and
// the notifications still in the outbox (the receiver answered 503 until
// then) are delivered by the next process on the same file, which also
// has the in-flight writes.
func TestSIGTERMFinishesInFlightAndKeepsOutbox(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("tells accepted connections from /proc")
	}
	if testing.Short() {
		t.Skip("builds the binary")
	}
	exe := buildSandbox(t)
	dir := t.TempDir()
	args := []string{"-db", filepath.Join(dir, "sandbox.db"), "-webhook-attempts", "60", "-webhook-retry-wait", "2ms"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	hooks := newHookReceiver(t, hookToken)
	hooks.setDown(true)

	p := startProc(t, exe, dir, args...)
	c, ctl := p.clients(t, 4)
	want := map[string]int{}
	credit := decimal.Zero
	for i, amt := range []string{"1850.00", "2775.50"} {
		pm, err := c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "term-hook-" + strconv.Itoa(i),
			Amount: decimal.RequireFromString(amt), Method: paykit.MethodCard, NotifyURL: hooks.url, NotificationToken: hookToken})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.ConfirmPayment(ctx, pm.ID, nil); err != nil {
			t.Fatal(err)
		}
		want[pm.ID+"/PROCESSING"] = 1
		if i == 0 {
			if err := ctl.VerifyPayment(ctx, pm.ID, sandbox.OutcomeCompleted); err != nil {
				t.Fatal(err)
			}
			want[pm.ID+"/COMPLETED"] = 1
			credit = usdtCredit(pm.Amount, pm.USDTRate)
		}
	}
	po, err := c.CreatePayout(ctx, paykit.CreatePayoutParams{ExtID: "term-po", Amount: decimal.NewFromInt(700),
		Method: paykit.PayoutMethodSBP, Requisites: "79990000000", HolderName: "TERM TEST", NotifyURL: hooks.url})
	if err != nil {
		t.Fatal(err)
	}
	if err := ctl.SetPayoutStatus(ctx, po.ID, sandbox.PayoutProcessing); err != nil {
		t.Fatal(err)
	}
	want[po.ID+"/processing"] = 1

	for _, f := range []sandbox.Fault{
		{Method: "POST", Path: "/v1/payments", Mode: sandbox.FaultDelay, DelayMS: 1500, Count: 2},
		{Method: "POST", Path: "/v1/transfers", Mode: sandbox.FaultDelay, DelayMS: 1500, Count: 1},
	} {
		if err := ctl.InjectFault(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	// One connection per call, so each can be told accepted or not. (Not
	// httptrace: the SDK drops a caller's ClientTrace on calls that change
	// something, see the report of issue 21.)
	wrote := make(chan int, 3)
	var dialer net.Dialer
	fresh, err := paykit.NewClient(p.base, sandbox.DefaultAPIKey, paykit.HMACSigner(sandbox.DefaultSecret),
		paykit.WithMaxRetries(0), paykit.WithHTTPClient(&http.Client{Transport: &http.Transport{DisableKeepAlives: true,
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := dialer.DialContext(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				return &signalConn{Conn: c, wrote: wrote}, nil
			}}}))
	if err != nil {
		t.Fatal(err)
	}
	type answer struct {
		what string
		err  error
		id   string
	}
	answers := make(chan answer, 3)
	for i := range 2 {
		go func() {
			pm, err := fresh.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "term-inflight-" + strconv.Itoa(i),
				Amount: decimal.NewFromInt(int64(3000 + i)), Method: paykit.MethodCard})
			a := answer{what: "create " + strconv.Itoa(i), err: err}
			if err == nil {
				a.id = pm.ID
			}
			answers <- a
		}()
	}
	moved := decimal.RequireFromString("12.345678")
	go func() {
		_, err := fresh.CreateTransfer(ctx, paykit.CreateTransferParams{FromTerminalID: sandbox.DefaultMainTerminalID,
			ToTerminalID: sandbox.DefaultReserveTerminalID, Amount: moved})
		answers <- answer{what: "transfer", err: err}
	}()
	_, portText, _ := net.SplitHostPort(strings.TrimPrefix(p.base, "http://"))
	serverPort, _ := strconv.Atoi(portText)
	deadline := time.Now().Add(10 * time.Second)
	for range 3 {
		port := <-wrote
		for {
			ok, err := accepted(p.cmd.Process.Pid, serverPort, port)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the connection from port %d was not accepted within 10 s", port)
			}
			runtime.Gosched()
		}
	}

	if code := p.term(t, 10*time.Second); code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0\n%s", code, p.logTail())
	}
	var created []string
	for range 3 {
		a := <-answers
		if a.err != nil {
			t.Errorf("%s in flight at SIGTERM: %v", a.what, a.err)
		}
		if a.id != "" {
			created = append(created, a.id)
		}
	}
	hooks.mu.Lock()
	early := len(hooks.got)
	hooks.mu.Unlock()
	if early != 0 {
		t.Fatalf("the receiver was down, yet took %d notifications", early)
	}

	hooks.setDown(false)
	p = startProc(t, exe, dir, args...)
	c, _ = p.clients(t, 4)
	wctx, wcancel := context.WithTimeout(ctx, 20*time.Second)
	defer wcancel()
	if missing := hooks.waitFor(wctx, want); len(missing) > 0 {
		t.Errorf("notifications in the outbox at SIGTERM never delivered after the restart: %v", missing)
	}
	for _, id := range created {
		pm, err := c.GetPayment(ctx, id)
		if err != nil || pm.Status != paykit.PaymentStatusPending {
			t.Errorf("payment %s, created in flight at SIGTERM, after the restart: %v %v", id, pm, err)
		}
	}
	ts, err := c.ListTerminals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantBal := map[string]decimal.Decimal{
		sandbox.DefaultMainTerminalID:    decimal.RequireFromString("1000.00").Add(credit).Sub(moved),
		sandbox.DefaultReserveTerminalID: moved,
	}
	for _, x := range ts {
		if !x.Balance.Equal(wantBal[x.ID]) || !x.BalanceFrozen.IsZero() {
			t.Errorf("terminal %s after the restart: balance %s frozen %s, want %s and 0", x.ID, x.Balance, x.BalanceFrozen, wantBal[x.ID])
		}
	}
	if len(created) != 2 || t.Failed() {
		t.Fatalf("the sandbox's log:\n%s", p.logTail())
	}
	if code := p.term(t, 10*time.Second); code != 0 {
		t.Errorf("exit code %d after SIGTERM", code)
	}
}

// shutdown waits for a request in flight past idle, but not past grace: a
// handler that never ends is cut when grace runs out, and a connection
// without a request is closed once idle has passed.
func TestShutdownBounds(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	srv := newHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hang" {
			close(entered)
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
	}))
	conns := trackConns(srv)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	idle, err := net.Dial("tcp", ln.Addr().String()) // a preconnect: never sends
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	answered := make(chan error, 1)
	go func() {
		res, err := http.Get("http://" + ln.Addr().String() + "/hang")
		if err == nil {
			res.Body.Close()
		}
		answered <- err
	}()
	<-entered
	if n := conns.activeCount(); n != 1 {
		t.Fatalf("%d connections serving a request, want 1", n)
	}
	start := time.Now()
	shutdown(srv, conns, 300*time.Millisecond, 50*time.Millisecond)
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Errorf("shutdown took %v with a request hanging, want the grace of 300ms", took)
	}
	if err := <-answered; err == nil {
		t.Error("the hanging request was answered; it should have been cut at the grace")
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		t.Errorf("Serve: %v", err)
	}
}
