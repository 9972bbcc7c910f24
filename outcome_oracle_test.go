package paykit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// FuzzOutcomeTruth checks the write path's promise against a model of the
// service rather than one case at a time. For every write operation of the
// operation table (and Client.Do's POST), a scripted loopback server
// decides per attempt whether to apply the request and what to answer,
// and scripts the read-backs and the bank list. Whatever the script, the
// call must end:
//
//   - in success only if the service holds the resource as asked;
//   - in a definite error (anything but ErrUnknownOutcome) only if this
//     call's request was not applied (another caller's may have been);
//   - otherwise in ErrUnknownOutcome naming the read that settles it;
//
// with the request applied at most once, and within its context's deadline
// plus a small margin.
//
// The service is honest where no client could tell a lie: a 4xx, a 429
// and PAY_004's 503 mean this attempt applied nothing, a 2xx means the
// request was applied if it could be (its body may still be anything), and
// a read "as stored" shows what is stored. Everything else is scripted.
//
// The layers below the SDK are scripted too (issue 35): the service speaks
// HTTP/1.1 or HTTP/2 (banks bit 0x80; over HTTP/2 behind h2Front, which
// resets a stream, sends GOAWAY or drops the connection after the service
// acted, all of which make Go's HTTP/2 client send a request again if it
// can), and a layer between the SDK and the transport may send a request
// again after its connection failed (0x40, resender). Without such a layer
// the service must never see the write more often than the SDK attempted
// it.
func FuzzOutcomeTruth(f *testing.F) {
	for _, s := range oracleSeeds {
		f.Add(s.op, s.world, s.banks, s.script)
	}
	f.Fuzz(func(t *testing.T, op, world, banks uint8, script []byte) {
		runOracle(t, oracleOps[int(op)%len(oracleOps)], world, banks, script)
	})
}

// The oracle covers every write of the operation table, as the kind its
// retry class makes it: a new write endpoint must join oracleOps.
func TestOracleCoversEveryWrite(t *testing.T) {
	kinds := map[retryClass][]oracleKind{classCreate: {createPaymentKind, createPayoutKind},
		classStateChange: {stateChangeKind}, classMoneyMove: {moneyMoveKind}}
	for _, op := range operations {
		if op.class == classRead {
			continue
		}
		var found *oracleOp
		for _, o := range oracleOps {
			if o.name == op.name {
				found = o
			}
		}
		if found == nil {
			t.Errorf("%s is a write the oracle does not run", op.name)
			continue
		}
		if !slices.Contains(kinds[op.class], found.kind) || found.path != strings.NewReplacer("{id}", paymentID).Replace(op.route) {
			t.Errorf("%s: the oracle's kind or path does not match the table's row", op.name)
		}
	}
}

// Timings of one run: short, so that a run takes milliseconds and a hang
// tens of them. The margin is for a loaded machine (CI shares two cores
// with -race and the other packages' tests), not for the SDK: a call that
// ignored its deadline waits on a hang that lasts until the run ends, or on
// a Retry-After of hours, far past it.
const (
	oracleDeadline       = 150 * time.Millisecond
	oracleAttemptTimeout = 40 * time.Millisecond
	oracleMargin         = 2 * time.Second
)

// oracleKind is the kind of write: what the model stores and what a
// read-back shows.
type oracleKind uint8

const (
	createPaymentKind oracleKind = iota
	createPayoutKind
	stateChangeKind
	moneyMoveKind
)

// oracleOp is one write operation under test.
type oracleOp struct {
	name string
	kind oracleKind
	path string // the POST's path
	// from and to: a state change's transition (from "" is any status not
	// in targets) and the statuses its want accepts; wrongCode answers a
	// payment not in from.
	from      []PaymentStatus
	targets   []PaymentStatus
	wrongCode func(PaymentStatus) (string, int)
	settle    string // what an ErrUnknownOutcome must name
	call      func(ctx context.Context, c *Client, w *oracleWorld) (any, error)
}

const (
	oracleExtID       = "oracle-1"
	oracleBankCode    = "sber"
	oracleBankName    = "Sberbank"
	oracleRenamedBank = "Sber Bank"
	oracleAddress     = "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE"
)

var oracleOps = []*oracleOp{
	{name: "CreatePayment", kind: createPaymentKind, path: "/v1/payments", settle: `GetPaymentByExtID("oracle-1")`,
		call: func(ctx context.Context, c *Client, w *oracleWorld) (any, error) {
			return c.CreatePayment(ctx, CreatePaymentParams{ExtID: oracleExtID, Amount: dec("1500.50"), Bank: w.askedBank})
		}},
	{name: "CreatePayout", kind: createPayoutKind, path: "/v1/payouts", settle: `GetPayoutByExtID("oracle-1")`,
		call: func(ctx context.Context, c *Client, w *oracleWorld) (any, error) {
			return c.CreatePayout(ctx, CreatePayoutParams{ExtID: oracleExtID, Amount: dec("2500"), Method: PayoutMethodSBP,
				Requisites: "79123456789", HolderName: "Ivan Ivanov", Bank: w.askedBank})
		}},
	{name: "ConfirmPayment", kind: stateChangeKind, path: "/v1/payments/" + paymentID + "/confirm",
		from: []PaymentStatus{PaymentStatusPending}, targets: []PaymentStatus{PaymentStatusProcessing, PaymentStatusCompleted},
		wrongCode: func(PaymentStatus) (string, int) { return "PAY_008", 400 }, settle: `GetPayment("` + paymentID + `")`,
		call: func(ctx context.Context, c *Client, _ *oracleWorld) (any, error) {
			return c.ConfirmPayment(ctx, paymentID, nil)
		}},
	{name: "CancelPayment", kind: stateChangeKind, path: "/v1/payments/" + paymentID + "/cancel",
		from: []PaymentStatus{PaymentStatusPending}, targets: []PaymentStatus{PaymentStatusCancelled},
		wrongCode: func(PaymentStatus) (string, int) { return "PAY_007", 400 }, settle: `GetPayment("` + paymentID + `")`,
		call: func(ctx context.Context, c *Client, _ *oracleWorld) (any, error) {
			return c.CancelPayment(ctx, paymentID)
		}},
	{name: "OpenDispute", kind: stateChangeKind, path: "/v1/payments/" + paymentID + "/dispute",
		from: []PaymentStatus{PaymentStatusCancelled, PaymentStatusCancelledAppeal}, targets: []PaymentStatus{PaymentStatusDispute},
		wrongCode: func(s PaymentStatus) (string, int) {
			if s == PaymentStatusDispute {
				return "DIS_002", 409
			}
			return "DIS_001", 400
		}, settle: `GetPayment("` + paymentID + `")`,
		call: func(ctx context.Context, c *Client, _ *oracleWorld) (any, error) {
			return c.OpenDispute(ctx, paymentID, OpenDisputeParams{Comment: "paid"})
		}},
	{name: "CancelDispute", kind: stateChangeKind, path: "/v1/payments/" + paymentID + "/dispute/cancel",
		from: []PaymentStatus{PaymentStatusDispute}, targets: []PaymentStatus{PaymentStatusCancelledAppeal},
		wrongCode: func(PaymentStatus) (string, int) { return "DIS_003", 400 }, settle: `GetPayment("` + paymentID + `")`,
		call: func(ctx context.Context, c *Client, _ *oracleWorld) (any, error) {
			return c.CancelDispute(ctx, paymentID)
		}},
	{name: "CreateTransfer", kind: moneyMoveKind, path: "/v1/transfers", settle: "ListTerminals",
		call: func(ctx context.Context, c *Client, _ *oracleWorld) (any, error) {
			return c.CreateTransfer(ctx, CreateTransferParams{FromTerminalID: "term-a", ToTerminalID: "term-b", Amount: dec("10.5")})
		}},
	{name: "CreateWithdrawal", kind: moneyMoveKind, path: "/v1/withdrawals", settle: "ListTerminals",
		call: func(ctx context.Context, c *Client, _ *oracleWorld) (any, error) {
			return c.CreateWithdrawal(ctx, CreateWithdrawalParams{TerminalID: "term-a", Amount: dec("100"), Address: oracleAddress})
		}},
	{name: "Do", kind: moneyMoveKind, path: "/v1/transfers", settle: "read the resource with a GET",
		call: func(ctx context.Context, c *Client, _ *oracleWorld) (any, error) {
			var out map[string]any
			err := c.Do(ctx, http.MethodPost, "/v1/transfers",
				map[string]any{"from_terminal_id": "term-a", "to_terminal_id": "term-b", "amount": "10.5"}, &out)
			return out, err
		}},
}

// oracleStatuses are the payment statuses a state change may start from.
var oracleStatuses = []PaymentStatus{PaymentStatusPending, PaymentStatusProcessing, PaymentStatusCompleted,
	PaymentStatusCancelled, PaymentStatusDispute, PaymentStatusCancelledAppeal}

// specErrors is every error code of the spec's table with its status, and
// the two refusals of the key or signature.
var specErrors = []struct {
	code   string
	status int
}{
	{"PAY_001", 500}, {"PAY_001", 404}, {"PAY_002", 400}, {"PAY_003", 409}, {"PAY_004", 503}, {"PAY_005", 429},
	{"PAY_006", 404}, {"PAY_007", 400}, {"PAY_008", 400}, {"DIS_001", 400}, {"DIS_002", 409}, {"DIS_003", 400},
	{"SYS_001", 500}, {"WDR_001", 400}, {"WDR_002", 400}, {"WDR_003", 404}, {"TRF_001", 400}, {"TRF_002", 404},
	{"TRF_003", 400}, {"AUTH_001", 401}, {"AUTH_002", 403},
}

// oracleRes is a created payment or payout as the service stores it.
type oracleRes struct {
	amount, bankCode, requisites, holder string
}

// oracleWorld is the scripted service of one run.
type oracleWorld struct {
	op        *oracleOp
	askedBank string // the bank code the call sends

	mu     sync.Mutex
	script []byte
	stored *oracleRes    // a create's resource under the ext_id; nil when none
	status PaymentStatus // a state change's payment
	prev   PaymentStatus // its status before this call changed it: what a stale read shows
	ours   int           // applications of this call's request
	posts  int           // deliveries of this call's request
	// bankName is the bank's name now; banks says how GET /v1/banks
	// answers: 0 as stored, 1 down, 2 hanging, 3 empty, 4 formatted
	// otherwise, 5 under the name before a rename, 6 with a null name.
	bankName string
	banks    uint8
	// h2: the service speaks HTTP/2 (TLS, through an h2Front that can
	// reset a stream after the service acted); otherwise HTTP/1.1.
	h2   bool
	stop chan struct{} // closed when the run ends: hanging handlers return
}

// next consumes one byte of the script; an exhausted script is zeros, a
// service behaving as specified.
func (w *oracleWorld) next() byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.script) == 0 {
		return 0
	}
	b := w.script[0]
	w.script = w.script[1:]
	return b
}

func runOracle(t *testing.T, op *oracleOp, world, banks uint8, script []byte) {
	runOracleBelow(t, op, world, banks, script, oracleLayer{})
}

// oracleLayer is what a test puts between the SDK and the run's
// transport, in place of the world's.
type oracleLayer struct {
	wrap func(*http.Transport) http.RoundTripper
	// resends: the layer keeps the bytes it read and may send them
	// again, which the SDK cannot stop, only see: a money move it
	// delivered twice must end in ErrUnknownOutcome, and the service may
	// apply it twice.
	resends bool
}

func runOracleBelow(t *testing.T, op *oracleOp, world, banks uint8, script []byte, below oracleLayer) {
	w := &oracleWorld{op: op, script: script, bankName: oracleBankName, banks: (banks & bModes) % 7, stop: make(chan struct{}),
		askedBank: oracleBankCode, h2: banks&bHTTP2 != 0}
	if world&0x80 != 0 {
		w.askedBank = strings.ToUpper(oracleBankCode) // codes are case-insensitive
	}
	switch op.kind {
	case createPaymentKind, createPayoutKind:
		// Free, or held by another caller: with another amount, another
		// bank or number, or exactly as asked.
		asked := w.asked()
		switch world % 4 {
		case 1:
			other := *asked
			other.amount = "1600.00"
			w.stored = &other
		case 2:
			other := *asked
			other.bankCode, other.requisites, other.holder = "vtb", "79123456780", "Petr Petrov"
			w.stored = &other
		case 3:
			w.stored = asked
		}
	case stateChangeKind:
		w.status = oracleStatuses[int(world)%len(oracleStatuses)]
		w.prev = w.status
	}

	var url string
	var tr *http.Transport
	if w.h2 {
		front := newH2Front(t, w)
		url, tr = front.URL, frontTransport()
		defer front.Close()
	} else {
		srv := httptest.NewServer(w)
		url, tr = srv.URL, &http.Transport{}
		defer func() {
			srv.CloseClientConnections()
			srv.Close()
		}()
	}
	defer func() {
		close(w.stop)
		tr.CloseIdleConnections()
	}()
	var rt http.RoundTripper = tr
	switch {
	case below.wrap != nil:
		rt = below.wrap(tr)
	case banks&bResender != 0:
		rt = resender{tr}
	}
	attempts := &attemptCounter{base: rt}
	hc := &http.Client{Transport: attempts, Timeout: oracleAttemptTimeout}
	if world&0x20 != 0 {
		hc.Timeout = 0 // only the caller's deadline ends a hang
	}
	c, err := NewClient(url, testKey, HMACSigner(testSecret), WithMaxRetries(3), WithHTTPClient(hc),
		WithRetryWait(time.Millisecond, 2*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if world&0x40 != 0 && op.kind == createPaymentKind {
		// A stale cache: filled before the bank was renamed.
		c.banks.names, c.banks.gen = bankIndex{oracleBankCode: {oracleBankName}, "vtb": {"VTB"}}, 1
		w.mu.Lock()
		w.bankName = oracleRenamedBank
		w.mu.Unlock()
	}

	ctx, cancel := context.WithTimeout(context.Background(), oracleDeadline)
	defer cancel()
	start := time.Now()
	res, err := op.call(ctx, c, w)
	elapsed := time.Since(start)

	w.mu.Lock()
	defer w.mu.Unlock()
	holds := w.holdsAsked()
	state := fmt.Sprintf("%s world=%d banks=%d script=%x: applied %d times, delivered %d times in %d attempts, holds as asked %v; err: %v",
		op.name, world, banks, script, w.ours, w.posts, attempts.n.Load(), holds, err)
	if elapsed > oracleDeadline+oracleMargin {
		t.Errorf("returned after %s, past the deadline of %s: %s", elapsed, oracleDeadline, state)
	}
	switch {
	case w.ours > 1 && below.resends:
		if !errors.Is(err, ErrUnknownOutcome) {
			t.Errorf("applied twice by a layer below the SDK, and not answered ErrUnknownOutcome: %s", state)
		}
	case w.ours > 1:
		t.Errorf("applied twice: %s", state)
	case !below.resends && banks&bResender == 0 && w.posts > int(attempts.n.Load()):
		// net/http alone never sends a write again within an attempt.
		t.Errorf("the transport delivered the write more often than the SDK attempted it: %s", state)
	}
	switch {
	case err == nil:
		if !holds {
			t.Errorf("success, but the service does not hold the resource as asked: %s", state)
		}
		if v := reflect.ValueOf(res); !v.IsValid() || v.IsNil() {
			t.Errorf("success without a result: %s", state)
		} else if !oracleResultAsked(op, res) {
			t.Errorf("success with a result that is not the resource as asked (%+v): %s", res, state)
		}
	case errors.Is(err, ErrUnknownOutcome):
		if !strings.Contains(err.Error(), op.settle) {
			t.Errorf("ErrUnknownOutcome does not name %s: %s", op.settle, state)
		}
	case w.ours > 0:
		t.Errorf("a definite error, but this call's request was applied: %s", state)
	}
}

// oracleResultAsked: a successful call's result is the resource it asked
// for.
func oracleResultAsked(op *oracleOp, res any) bool {
	switch r := res.(type) {
	case *Payment:
		if r.ExtID == oracleExtID { // a create
			return r.Amount.Equal(dec("1500.50")) && r.Method == MethodCard
		}
		return r.ID == paymentID && oracleIn(r.Status, op.targets)
	case *Payout:
		return r.ExtID == oracleExtID && r.Amount.Equal(dec("2500")) && r.Method == PayoutMethodSBP
	case *Transfer:
		return r.Success && r.FromTerminalID == "term-a" && r.ToTerminalID == "term-b" && r.Amount.Equal(dec("10.5"))
	case *Withdrawal:
		return r.Address == oracleAddress && r.Amount.Equal(dec("100"))
	case map[string]any:
		return true // Do decodes whatever the 2xx says
	}
	return false
}

// asked is the resource a create asks for.
func (w *oracleWorld) asked() *oracleRes {
	if w.op.kind == createPayoutKind {
		return &oracleRes{amount: "2500", bankCode: oracleBankCode, requisites: "79123456789", holder: "Ivan Ivanov"}
	}
	return &oracleRes{amount: "1500.50", bankCode: oracleBankCode}
}

// holdsAsked: the service holds the resource as the call asked.
func (w *oracleWorld) holdsAsked() bool {
	switch w.op.kind {
	case createPaymentKind, createPayoutKind:
		return w.stored != nil && *w.stored == *w.asked()
	case stateChangeKind:
		return oracleIn(w.status, w.op.targets)
	}
	return w.ours == 1
}

func oracleIn(s PaymentStatus, set []PaymentStatus) bool {
	for _, x := range set {
		if s == x {
			return true
		}
	}
	return false
}

// apply applies this call's request if the model allows it, and says
// whether it did.
func (w *oracleWorld) apply() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch w.op.kind {
	case createPaymentKind, createPayoutKind:
		if w.stored != nil {
			return false
		}
		w.stored = w.asked()
	case stateChangeKind:
		if !oracleIn(w.status, w.op.from) {
			return false
		}
		w.prev, w.status = w.status, w.op.targets[0]
	}
	w.ours++
	return true
}

func (w *oracleWorld) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if _, err := io.Copy(io.Discard, r.Body); err != nil {
		// A request cut short (a layer that sent a body it had already
		// read, say) is no request: the service acts on none.
		return
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == w.op.path:
		w.write(rw, r)
	case r.Method == http.MethodGet && r.URL.Path == "/v1/banks":
		w.bankList(rw, r)
	case r.Method == http.MethodGet:
		w.read(rw, r)
	default:
		oracleAnswer(rw, 404, `{"error":"PAY_006","message":"no such route"}`, "")
	}
}

// write answers one attempt of the call's POST as the script says.
func (w *oracleWorld) write(rw http.ResponseWriter, r *http.Request) {
	w.mu.Lock()
	w.posts++
	w.mu.Unlock()
	b := w.next()
	applyBit := b&0x80 != 0
	switch b & 0x7f % 11 {
	case 0, 10: // as the service would: apply, or refuse as it must
		if w.apply() {
			oracleAnswer(rw, w.createdStatus(), w.resource(false, false, false), "")
			return
		}
		code, status := w.refusal()
		oracleAnswer(rw, status, fmt.Sprintf(`{"error":%q,"message":"refused","data":{"ext_id":%q}}`, code, oracleExtID), "")
	case 1: // a 2xx about another resource
		w.apply()
		oracleAnswer(rw, w.createdStatus(), w.resource(false, false, true), "")
	case 2: // a 2xx that is not the resource
		w.apply()
		junk := []string{`{}`, `{"error":"PAY_004","message":"x"}`, `not json`, ``, `{"id":`, `null`, `[]`, `{"success":false}`}
		oracleAnswer(rw, 200, junk[int(w.next())%len(junk)], "")
	case 3: // an error code of the spec
		e := specErrors[int(w.next())%len(specErrors)]
		if applyBit && e.status >= 500 && e.code != "PAY_004" {
			w.apply()
		}
		oracleAnswer(rw, e.status, fmt.Sprintf(`{"error":%q,"message":"scripted","data":{}}`, e.code), w.retryAfter())
	case 4: // the answer is lost: the connection closes
		if applyBit {
			w.apply()
		}
		if w.h2 {
			frontFault(rw, faultCloseConn)
			return
		}
		oracleHangUp(rw)
	case 5: // a hang, until the client gives up
		if applyBit {
			w.apply()
		}
		select {
		case <-r.Context().Done():
		case <-w.stop:
		}
	case 6: // a 5xx without an API code
		if applyBit {
			w.apply()
		}
		statuses := []int{500, 502, 503, 504}
		oracleAnswer(rw, statuses[int(w.next())%len(statuses)], `<html>upstream trouble</html>`, w.retryAfter())
	case 7: // rate limited: nothing applied
		body := ``
		if applyBit {
			body = `{"error":"PAY_005","message":"too many"}`
		}
		oracleAnswer(rw, 429, body, w.retryAfter())
	case 8: // the answer arrives, then the connection breaks mid-body
		if applyBit {
			w.apply()
		}
		oracleTruncated(rw, w.resource(false, false, false))
	case 9: // the layers below are asked to deliver it again
		if applyBit {
			w.apply()
		}
		if w.h2 { // a stream reset, or GOAWAY, Go's client acts on by resending
			frontFault(rw, []byte{faultRSTProtocol, faultRSTRefused, faultGoAway}[int(w.next())%3])
			return
		}
		oracleHangUp(rw) // the connection closes after the request was read: a resender's cue
	}
}

// attemptCounter counts the attempts of the call's write: the SDK hands
// each to its transport once.
type attemptCounter struct {
	base http.RoundTripper
	n    atomic.Int32
}

func (c *attemptCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet {
		c.n.Add(1)
	}
	return c.base.RoundTrip(req)
}

// resender is a layer below the SDK (a RoundTripper passed in with
// WithHTTPClient, or what a proxy does) that sends a request again when
// its connection failed: through GetBody when the request has one, else
// the request as it is, body and all.
type resender struct{ base http.RoundTripper }

func (r resender) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.base.RoundTrip(req)
	if err == nil || req.Method == http.MethodGet || req.Context().Err() != nil {
		return resp, err
	}
	again := req
	if req.GetBody != nil {
		body, gerr := req.GetBody()
		if gerr != nil {
			return nil, err
		}
		again = req.Clone(req.Context())
		again.Body = body
	}
	return r.base.RoundTrip(again)
}

// refusal is the business error a request the model cannot apply gets.
func (w *oracleWorld) refusal() (string, int) {
	switch w.op.kind {
	case createPaymentKind, createPayoutKind:
		return "PAY_003", 409
	case stateChangeKind:
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.op.wrongCode(w.status)
	}
	return "TRF_003", 400 // unreachable: a money move always applies
}

func (w *oracleWorld) createdStatus() int {
	if w.op.kind == createPaymentKind || w.op.kind == createPayoutKind {
		return 201
	}
	return 200
}

// retryAfter is a scripted Retry-After: none, seconds (small, over the
// cap, out of range) or an HTTP date (past, near, year 9999), or garbage.
// A call never sleeps through one past its deadline.
func (w *oracleWorld) retryAfter() string {
	switch w.next() % 11 {
	case 8:
		return "Fri, 31 Dec 9999 23:59:59 GMT"
	case 9:
		return "99999999999999999999"
	case 10:
		return time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	case 1:
		return "0"
	case 2:
		return "1"
	case 3:
		return "120" // over the cap: answered at once
	case 4:
		return time.Now().Add(time.Second).UTC().Format(http.TimeFormat)
	case 5:
		return time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)
	case 6:
		return "soon"
	case 7:
		return "-1"
	}
	return ""
}

// read answers a read-back: as stored, down, hanging, stale, formatted
// otherwise, not a resource, or another resource.
func (w *oracleWorld) read(rw http.ResponseWriter, r *http.Request) {
	switch w.next() % 8 {
	case 5: // a 2xx that is not the resource
		oracleAnswer(rw, 200, `{}`, "")
		return
	case 6: // another resource
		oracleAnswer(rw, 200, strings.NewReplacer(oracleExtID, "oracle-2", paymentID, otherPaymentID).
			Replace(w.resource(true, false, false)), "")
		return
	case 1: // down
		oracleAnswer(rw, 500, `{"error":"SYS_001","message":"down"}`, w.retryAfter())
		return
	case 2: // hanging
		select {
		case <-r.Context().Done():
		case <-w.stop:
		}
		return
	case 3: // stale: before this call changed anything
		w.mu.Lock()
		stale := w.op.kind == stateChangeKind
		w.mu.Unlock()
		if !stale {
			w.notFound(rw)
			return
		}
		oracleAnswer(rw, 200, w.resourceIn(w.prevStatus(), true, false, false), "")
		return
	case 4: // formatted otherwise
		if !w.exists() {
			w.notFound(rw)
			return
		}
		oracleAnswer(rw, 200, w.resource(true, true, false), "")
		return
	}
	if !w.exists() {
		w.notFound(rw)
		return
	}
	oracleAnswer(rw, 200, w.resource(true, false, false), "")
}

func (w *oracleWorld) exists() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.op.kind == stateChangeKind || w.stored != nil
}

func (w *oracleWorld) prevStatus() PaymentStatus {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.prev
}

func (w *oracleWorld) notFound(rw http.ResponseWriter) {
	if w.op.kind == createPayoutKind {
		oracleAnswer(rw, 404, `{"error":"PAY_001","message":"payout not found"}`, "")
		return
	}
	oracleAnswer(rw, 404, `{"error":"PAY_006","message":"payment not found"}`, "")
}

// bankList answers GET /v1/banks as the run's mode says.
func (w *oracleWorld) bankList(rw http.ResponseWriter, r *http.Request) {
	w.mu.Lock()
	name, mode := w.bankName, w.banks
	w.mu.Unlock()
	switch mode {
	case 1:
		oracleAnswer(rw, 503, `<h1>Service Unavailable</h1>`, w.retryAfter())
	case 2:
		select {
		case <-r.Context().Done():
		case <-w.stop:
		}
	case 3:
		oracleAnswer(rw, 200, `{"banks":[]}`, "")
	case bLagging: // the list lags a rename
		oracleAnswer(rw, 200, `{"banks":[{"code":"sber","name":"Sberbank","is_active":true},{"code":"vtb","name":"VTB","is_active":true}]}`, "")
	case bNullName: // the list names the bank without a name
		oracleAnswer(rw, 200, `{"banks":[{"code":"sber","name":null,"is_active":true},{"code":"vtb","name":"VTB","is_active":true}]}`, "")
	case 4:
		oracleAnswer(rw, 200, fmt.Sprintf(`{"banks":[{"code":"SBER","name":%q,"is_active":true},{"code":"VTB","name":"vtb","is_active":true}]}`,
			strings.ToUpper(name)), "")
	default:
		oracleAnswer(rw, 200, fmt.Sprintf(`{"banks":[{"code":"sber","name":%q,"is_active":true},{"code":"vtb","name":"VTB","is_active":true}]}`, name), "")
	}
}

// resource is the stored resource as JSON: as a create or state change
// answers it, or (read) as a GET shows it; formatted writes the same
// values otherwise (case, separators, trailing zeros), other makes it
// another resource.
func (w *oracleWorld) resource(read, formatted, other bool) string {
	w.mu.Lock()
	status := w.status
	w.mu.Unlock()
	return w.resourceIn(status, read, formatted, other)
}

func (w *oracleWorld) resourceIn(status PaymentStatus, read, formatted, other bool) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch w.op.kind {
	case createPaymentKind:
		res := w.stored
		if res == nil || other {
			res = &oracleRes{amount: "1700.00", bankCode: "vtb"}
		}
		name := "VTB"
		if res.bankCode == oracleBankCode {
			name = w.bankName
		}
		amount, st, method := res.amount, `"PENDING"`, "CARD"
		if formatted {
			amount, st, method, name = `"`+res.amount+`0"`, `"pending"`, "card", strings.ToUpper(name)
		}
		bank := fmt.Sprintf(`"bank":%q,"bank_code":%q`, name, res.bankCode)
		if read {
			bank = fmt.Sprintf(`"bank":%q`, name) // a GET names the bank only
		}
		return fmt.Sprintf(`{"id":%q,"ext_id":%q,"amount":%s,"currency":"RUB","status":%s,"method":%q,`+
			`"requisites":{"type":"card","value":"2200123456789012",%s,"holder":"I. I."},`+
			`"valid_until":"2026-11-22T10:20:00Z","created_at":"2026-11-22T10:00:00Z","usdt_rate":92.5}`,
			paymentID, oracleExtID, amount, st, method, bank)
	case createPayoutKind:
		res := w.stored
		if res == nil || other {
			res = &oracleRes{amount: "2600", bankCode: "vtb", requisites: "79000000000", holder: "Anna Smirnova"}
		}
		amount, method, req, bank, holder := res.amount, "sbp", res.requisites, res.bankCode, res.holder
		if formatted {
			amount, method, bank, holder = `"`+res.amount+`.00"`, "SBP", strings.ToUpper(bank), strings.ToUpper(holder)
			if len(req) == 11 {
				req = "+" + req[:1] + " " + req[1:4] + " " + req[4:7] + "-" + req[7:9] + "-" + req[9:]
			}
		}
		return fmt.Sprintf(`{"id":%q,"ext_id":%q,"amount":%s,"currency":"RUB","method":%q,"requisites":%q,`+
			`"holder_name":%q,"bank":%q,"status":"pending","created_at":"2026-11-22T10:00:00Z"}`,
			payoutID, oracleExtID, amount, method, req, holder, bank)
	case stateChangeKind:
		id := paymentID
		if other {
			id = otherPaymentID
		}
		st := string(status)
		if formatted || status == PaymentStatusDispute || status == PaymentStatusCancelledAppeal {
			st = strings.ToLower(st) // as the dispute operations write it
		}
		return fmt.Sprintf(`{"id":%q,"ext_id":"oracle-sc","amount":1000,"currency":"RUB","status":%q,"method":"CARD",`+
			`"requisites":{"type":"card","value":"2200123456789012","bank":"Sberbank","holder":"I. I."},`+
			`"valid_until":"2026-11-22T10:20:00Z","created_at":"2026-11-22T10:00:00Z","usdt_rate":92.5}`, id, st)
	}
	if w.op.path == "/v1/withdrawals" {
		addr := oracleAddress
		if other {
			addr = "TOtherWalletOtherWalletOtherWallet1"
		}
		return fmt.Sprintf(`{"id":%q,"amount":100,"fee":1.5,"currency":"USDT","address":%q,"tx_hash":null,"status":"pending",`+
			`"created_at":"2026-11-22T10:00:00Z","updated_at":"2026-11-22T10:00:00Z"}`, withdrawID, addr)
	}
	to := "term-b"
	if other {
		to = "term-c"
	}
	return fmt.Sprintf(`{"success":true,"from_terminal_id":"term-a","to_terminal_id":%q,"amount":10.5,"currency":"USDT"}`, to)
}

// oracleAnswer writes a JSON (or any) answer with an optional Retry-After.
func oracleAnswer(rw http.ResponseWriter, status int, body, retryAfter string) {
	rw.Header().Set("Content-Type", "application/json")
	if retryAfter != "" {
		rw.Header().Set("Retry-After", retryAfter)
	}
	rw.WriteHeader(status)
	io.WriteString(rw, body)
}

// oracleHangUp closes the connection without an answer.
func oracleHangUp(rw http.ResponseWriter) {
	if conn, _, err := rw.(http.Hijacker).Hijack(); err == nil {
		if tc, ok := conn.(*net.TCPConn); ok {
			tc.SetLinger(0)
		}
		conn.Close()
	}
}

// oracleTruncated sends a 200 announcing the whole body, half of it, and
// closes the connection (over HTTP/2, resets the stream).
func oracleTruncated(rw http.ResponseWriter, body string) {
	hj, ok := rw.(http.Hijacker)
	if !ok {
		rw.Header().Set("Content-Type", "application/json")
		rw.Header().Set("Content-Length", strconv.Itoa(len(body)))
		rw.WriteHeader(http.StatusOK)
		io.WriteString(rw, body[:len(body)/2])
		rw.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body[:len(body)/2])
	buf.Flush()
}

// oracleSeed is one seed of FuzzOutcomeTruth.
type oracleSeed struct {
	op, world, banks uint8
	script           []byte
}

// Script bytes, for reading the seeds: a POST attempt's byte is its kind
// (b&0x7f%11) with the apply bit 0x80; some kinds read more bytes.
const (
	sAsService  = 0
	sOther      = 1
	sJunk       = 2
	sSpecError  = 3
	sLost       = 4
	sHang       = 5
	s5xx        = 6
	s429        = 7
	sTruncated  = 8
	sResend     = 9 // then a byte: over HTTP/2 the fault (RST PROTOCOL_ERROR, REFUSED_STREAM, GOAWAY)
	sApply      = 0x80
	rAsStored   = 0
	rDown       = 1
	rHang       = 2
	rStale      = 3
	rFormatted  = 4
	rJunk       = 5
	rOther      = 6
	bAsStored   = 0
	bDown       = 1
	bHang       = 2
	bEmpty      = 3
	bFormatted  = 4
	bLagging    = 5
	bNullName   = 6
	bModes      = 0x3f // the bits of the bank list's mode; the others are the transport's
	bResender   = 0x40 // a layer below the SDK resends after a failed connection
	bHTTP2      = 0x80 // the service speaks HTTP/2
	wNoTimeout  = 0x20
	wStaleBanks = 0x40
	wUpperBank  = 0x80
)

// oracleSeeds: the review's cases first, then each kind of answer for
// every operation.
var oracleSeeds = func() []oracleSeed {
	seeds := []oracleSeed{
		// Point 1: a lost create, PAY_003 on the retry, a matching
		// read-back, and the bank list down, hanging or empty.
		{0, 0, bDown, []byte{s5xx | sApply, 0, 0, sAsService, rAsStored}},
		{0, 0, bHang, []byte{s5xx | sApply, 0, 0, sAsService, rAsStored}},
		{0, 0, bEmpty, []byte{s5xx | sApply, 0, 0, sAsService, rAsStored}},
		// Point 2: the bank renamed after the cache was filled.
		{0, wStaleBanks, bAsStored, []byte{sLost | sApply, sAsService, rAsStored}},
		{0, wStaleBanks | wUpperBank, bFormatted, []byte{sLost | sApply, sAsService, rFormatted}},
		{0, wStaleBanks, bLagging, []byte{sLost | sApply, sAsService, rAsStored}},
		{0, wStaleBanks, bLagging, []byte{sOther | sApply, rAsStored}},
		{0, 0, bNullName, []byte{sLost | sApply, sAsService, rAsStored}},
		{0, 2, bLagging, []byte{sLost, sAsService, rAsStored}},
		// Point 3: a payout read back as SBER, +7 912 345-67-89.
		{1, wUpperBank, bAsStored, []byte{sLost | sApply, sAsService, rFormatted}},
		{1, 0, bAsStored, []byte{sHang | sApply, sAsService, rFormatted}},
		// Someone else's: the ext_id held with another amount or bank.
		{0, 1, bAsStored, []byte{s5xx, 0, 0, sAsService, rAsStored}},
		{0, 2, bAsStored, []byte{s5xx, 0, 0, sAsService, rAsStored}},
		{1, 2, bAsStored, []byte{sLost, sAsService, rFormatted}},
		{1, 3, bAsStored, []byte{sAsService}},
		// Retry-After in both forms, small.
		{0, 0, bAsStored, []byte{s429, 4, s5xx | sApply, 1, 4, sAsService, rAsStored}},
		{1, 0, bAsStored, []byte{s5xx, 0, 2, s5xx | sApply, 0, 5, sAsService}},
		{0, 0, bAsStored, []byte{s5xx | sApply, 0, 8, sAsService, rDown, 8, rAsStored}},
		{7, 0, bAsStored, []byte{sSpecError, 12, 9}},
		{3, 0, bAsStored, []byte{s429, 10, s5xx | sApply, 3, 8, sAsService, rAsStored}},
		// No attempt timeout: the caller's deadline ends a hang.
		{0, wNoTimeout, bAsStored, []byte{sHang | sApply}},
		{6, wNoTimeout, bAsStored, []byte{sHang | sApply}},
		{2, wNoTimeout, bAsStored, []byte{s5xx | sApply, 0, 0, sAsService, rHang}},
		{0, wNoTimeout, bHang, []byte{sLost | sApply, sAsService, rAsStored}},
	}
	for op := range oracleOps {
		o := uint8(op)
		for _, script := range [][]byte{
			{sAsService},
			{sOther, rAsStored},
			{sOther | sApply, rStale, rAsStored},
			{sJunk, 0, rAsStored}, {sJunk, 2, rDown, 0, rDown, 0, rDown, 0, rDown, 0},
			{sSpecError, 3}, {sSpecError | sApply, 12, sAsService, rAsStored},
			{sLost | sApply, sAsService, rAsStored}, {sLost, sLost, sLost, sLost},
			{sHang | sApply, sAsService, rHang}, {sHang, sHang, sHang, sHang},
			{s5xx | sApply, 1, 3, s5xx | sApply, 0, 4, sAsService, rFormatted},
			{s429 | sApply, 2, sAsService},
			{sTruncated | sApply, sAsService, rStale, rAsStored},
			{sLost | sApply, sAsService, rJunk, rOther, rAsStored},
		} {
			// Creates: free, held with another amount, another bank,
			// as asked. State changes: PENDING, PROCESSING, CANCELLED,
			// DISPUTE. Money moves have no world.
			worlds := []uint8{0, 1, 2, 3}
			if oracleOps[op].kind == stateChangeKind {
				worlds = []uint8{0, 1, 3, 4}
			} else if oracleOps[op].kind == moneyMoveKind {
				worlds = worlds[:1]
			}
			for _, world := range worlds {
				seeds = append(seeds, oracleSeed{o, world, bAsStored, script})
			}
		}
		// Issue 35: the layers below the SDK, in the world where the
		// write applies. HTTP/2 resets a stream, sends GOAWAY or drops
		// the connection after the service acted; a layer resends.
		world := applicableWorld(oracleOps[op])
		for _, s := range []struct {
			banks  uint8
			script []byte
		}{
			{bHTTP2, []byte{sResend | sApply, o % 3, sAsService, rAsStored}},
			{bHTTP2, []byte{sLost | sApply, sAsService, rAsStored}},
			{bHTTP2, []byte{sTruncated | sApply, sAsService, rStale, rAsStored}},
			{bHTTP2, []byte{sResend, 1, sHang, sAsService, rAsStored}},
			{bHTTP2 | bResender, []byte{sResend | sApply, 2, sAsService, rAsStored}},
			{bResender, []byte{sResend | sApply, sAsService, rAsStored}},
			{bResender, []byte{sLost, s5xx | sApply, 0, 0, sAsService, rAsStored}},
		} {
			seeds = append(seeds, oracleSeed{o, world, s.banks, s.script})
		}
	}
	return seeds
}()
