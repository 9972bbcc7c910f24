package ledger_test

import (
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go/internal/spec"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
	"github.com/paykit-dev/paykit-go/sandbox/internal/store"
)

// The creation rules run here on the memory store, the one package store
// tests against both stores (storetest): what they add is what a later
// transaction finds, and a refusal adds nothing.

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 700_000_000, time.UTC)

// newStore is a memory store with two merchants: "m" with an inactive
// terminal before two active ones (100 and 0 USDT, fee 1.50), and "other"
// with one terminal of the id "t2" too.
func newStore(t *testing.T) (*store.Memory, *ledger.Merchant, *ledger.Merchant) {
	t.Helper()
	st := store.NewMemory(func() []*ledger.Merchant {
		fee := dec("1.50")
		return []*ledger.Merchant{
			{APIKey: "m", Terminals: []*ledger.Terminal{
				{ID: "off", Balance: ledger.Balance{Available: dec("7"), Frozen: dec("0")}, Fee: fee},
				{ID: "t1", Balance: ledger.Balance{Available: dec("100"), Frozen: dec("0")}, Fee: fee, Active: true},
				{ID: "t2", Balance: ledger.Balance{Available: dec("0"), Frozen: dec("0")}, Fee: fee, Active: true},
			}},
			{APIKey: "other", Terminals: []*ledger.Terminal{
				{ID: "t2", Balance: ledger.Balance{Available: dec("5"), Frozen: dec("0")}, Fee: fee, Active: true},
			}},
		}
	})
	return st, st.Merchant("m"), st.Merchant("other")
}

var banks = []ledger.Bank{
	{Code: "sber", Name: "Sberbank", IsActive: true, Country: "RU"},
	{Code: "gazprom", Name: "Gazprombank", IsActive: false, Country: "RU"},
	{Code: "vtb", Name: "VTB", IsActive: true, Country: "RU"},
	{Code: "kaspi", Name: "Kaspi Bank", IsActive: true, Country: "KZ"},
	{Code: "eskhata", Name: "Bank Eskhata", IsActive: true, Country: "TJ"},
}

// env draws 3 for every random number: the requisites are known.
func env() ledger.Env {
	return ledger.Env{Now: t0, TTL: 20 * time.Minute, USDTRate: dec("92.50"),
		LocalRates: map[string]decimal.Decimal{"KZ": dec("5.60"), "TJ": dec("0.12")},
		Banks:      banks, MaxSamePending: 2, IntN: func(int) int { return 3 }}
}

func wantRefusal(t *testing.T, what string, err *ledger.Error, kind ledger.Kind, code, field, says string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no refusal, want %s", what, code)
	}
	if err.Kind != kind || err.Code != code || err.Field != field || !strings.Contains(err.Message, says) || err.Error() != err.Message {
		t.Fatalf("%s: refusal %+v, want kind %d code %q field %q saying %q", what, err, kind, code, field, says)
	}
}

// luhn reports whether a card number's check digit is right.
func luhn(n string) bool {
	sum := 0
	for i := len(n) - 1; i >= 0; i-- {
		d := int(n[i] - '0')
		if (len(n)-1-i)%2 == 1 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}

// A payment of each method is created PENDING with every field the rule
// sets, and a later transaction finds it as created.
func TestCreatePayment(t *testing.T) {
	cases := []struct {
		in                           ledger.NewPayment
		bank, reqType, reqValue      string
		country, currency, amountLoc string
	}{
		{in: ledger.NewPayment{ExtID: "card", Amount: dec("1500.50"), Method: spec.MethodCard},
			bank: "sber", reqType: "card", reqValue: "2200333333333333"},
		{in: ledger.NewPayment{ExtID: "sbp", Amount: dec("1500.50"), Method: spec.MethodSBP, Bank: "vtb"},
			bank: "vtb", reqType: "sbp", reqValue: "+79333333333"},
		{in: ledger.NewPayment{ExtID: "sim", Amount: dec("99"), Method: spec.MethodSIM},
			bank: "sber", reqType: "sim", reqValue: "+79333333333"},
		{in: ledger.NewPayment{ExtID: "xb", Amount: dec("1000"), Method: spec.MethodCrossBorder, Country: "KZ"},
			bank: "kaspi", reqType: "phone", reqValue: "+77333333333", country: "KZ", currency: "KZT", amountLoc: "5600"},
		{in: ledger.NewPayment{ExtID: "xb-default", Amount: dec("1000.01"), Method: spec.MethodCrossBorder},
			bank: "eskhata", reqType: "phone", reqValue: "+992333333333", country: "TJ", currency: "TJS", amountLoc: "120"},
	}
	st, m, _ := newStore(t)
	for _, c := range cases {
		in := c.in
		in.ClientID, in.NotifyURL, in.Token, in.BaseURL = "client-"+in.ExtID, "https://shop.example/hook", "tok", "http://sb"
		p, err := ledger.CreatePayment(st, m, in, env())
		if err != nil {
			t.Fatalf("%s: %v", in.ExtID, err)
		}
		if err := st.Commit(); err != nil {
			t.Fatal(err)
		}
		m = st.Merchant("m") // the new transaction's copy
		got := st.Payment(p.ID)
		if got == nil {
			t.Fatalf("%s: not found after the commit", in.ExtID)
		}
		if c.reqType == "card" {
			// 2200, eleven 3s, and the Luhn check digit: 3 (2200333333333333 passes).
			if !luhn(got.ReqValue) || len(got.ReqValue) != 16 {
				t.Fatalf("card %q fails the Luhn check", got.ReqValue)
			}
		}
		if got.Merchant != m || got.Terminal != m.Terminals[1] || got.ID == "" || got.ExtID != in.ExtID ||
			!got.Amount.Equal(in.Amount) || got.Method != in.Method || got.Bank.Code != c.bank ||
			got.Holder != "Dmitry V." || got.ClientID != in.ClientID || got.NotifyURL != in.NotifyURL ||
			got.Token != "tok" || got.Status != ledger.PaymentPending ||
			!got.CreatedAt.Equal(t0.Truncate(time.Second)) || !got.ValidUntil.Equal(t0.Truncate(time.Second).Add(20*time.Minute)) ||
			!got.USDTRate.Equal(dec("92.50")) || got.PaymentURL != "http://sb/pay/"+got.ID ||
			got.ReqType != c.reqType || got.ReqValue != c.reqValue || got.Country != c.country ||
			got.Currency != c.currency || got.Dispute != nil || got.Receipt != 0 {
			t.Fatalf("%s: created %+v", in.ExtID, got)
		}
		if c.amountLoc == "" && !got.AmountLocal.IsZero() || c.amountLoc != "" && !got.AmountLocal.Equal(dec(c.amountLoc)) {
			t.Fatalf("%s: amount_local %s, want %q", in.ExtID, got.AmountLocal, c.amountLoc)
		}
		if st.PaymentByExt(m, in.ExtID) == nil {
			t.Fatalf("%s: not found by ext_id", in.ExtID)
		}
	}
	if n := st.PendingWithAmount(m, ledger.AmountKey(dec("1500.5"))); n != 2 {
		t.Fatalf("pending of 1500.50: %d, want 2", n)
	}
}

// payments counts m's payments of every status.
func payments(st ledger.Txn, m *ledger.Merchant) int {
	pm, _, _ := st.Counts(m)
	n := 0
	for _, c := range pm {
		n += c
	}
	return n
}

// Every refusal of a new payment, with its kind and code, in the order
// the checks run, each adding nothing.
func TestCreatePaymentRefusals(t *testing.T) {
	st, m, _ := newStore(t)
	card := func(ext, amount string) ledger.NewPayment {
		return ledger.NewPayment{ExtID: ext, Amount: dec(amount), Method: spec.MethodCard}
	}
	for _, a := range []string{"500", "500.00"} { // one amount twice: the cap of 2
		if _, err := ledger.CreatePayment(st, m, card("cap-"+a, a), env()); err != nil {
			t.Fatal(err)
		}
	}
	noTerminal := &ledger.Merchant{APIKey: "m2", Terminals: []*ledger.Terminal{{ID: "x"}}}
	refuse := env()
	refused := &ledger.Error{Kind: ledger.Unavailable, Code: spec.CodePAY004, Message: "no requisites available (test value)"}
	var asked []string
	refuse.Refuse = func(a decimal.Decimal) *ledger.Error {
		asked = append(asked, a.String())
		if a.Equal(dec("404.04")) {
			return refused
		}
		return nil
	}
	cases := []struct {
		what  string
		m     *ledger.Merchant
		in    ledger.NewPayment
		env   ledger.Env
		kind  ledger.Kind
		code  string
		field string
		says  string
	}{
		{"unknown merchant", nil, card("u", "10"), env(), ledger.Invalid, spec.CodeAUTH001, "", "unknown API key"},
		{"ext_id used", m, card("cap-500", "10"), env(), ledger.Conflict, spec.CodePAY003, "ext_id", "ext_id already exists"},
		{"unknown bank", m, ledger.NewPayment{ExtID: "b1", Amount: dec("10"), Method: spec.MethodCard, Bank: "nope"}, env(),
			ledger.Unavailable, spec.CodePAY004, "", `unknown bank "nope"`},
		{"inactive bank", m, ledger.NewPayment{ExtID: "b2", Amount: dec("10"), Method: spec.MethodSBP, Bank: "gazprom"}, env(),
			ledger.Unavailable, spec.CodePAY004, "", "bank gazprom is not active"},
		{"RU bank, cross-border", m, ledger.NewPayment{ExtID: "b3", Amount: dec("10"), Method: spec.MethodCrossBorder, Bank: "sber"}, env(),
			ledger.Unavailable, spec.CodePAY004, "", "does not serve this method or country"},
		{"bank of another country", m, ledger.NewPayment{ExtID: "b4", Amount: dec("10"), Method: spec.MethodCrossBorder, Country: "TJ", Bank: "kaspi"}, env(),
			ledger.Unavailable, spec.CodePAY004, "", "does not serve this method or country"},
		{"foreign bank, card", m, ledger.NewPayment{ExtID: "b5", Amount: dec("10"), Method: spec.MethodCard, Bank: "kaspi"}, env(),
			ledger.Unavailable, spec.CodePAY004, "", "does not serve this method or country"},
		{"no bank of the country", m, ledger.NewPayment{ExtID: "b6", Amount: dec("10"), Method: spec.MethodCrossBorder, Country: "UZ"}, env(),
			ledger.Unavailable, spec.CodePAY004, "", "no active bank"},
		{"no active terminal", noTerminal, card("t", "10"), env(), ledger.Unavailable, spec.CodePAY004, "", "no active terminal"},
		{"test value", m, card("tv", "404.04"), refuse, ledger.Unavailable, spec.CodePAY004, "", "test value"},
		{"same amount at the cap", m, card("cap3", "500.0"), env(), ledger.TooMany, spec.CodePAY005, "", "same amount"},
	}
	for _, c := range cases {
		before := payments(st, m)
		p, err := ledger.CreatePayment(st, c.m, c.in, c.env)
		wantRefusal(t, c.what, err, c.kind, c.code, c.field, c.says)
		if p != nil || payments(st, m) != before || st.PaymentByExt(m, c.in.ExtID) != nil && c.code != spec.CodePAY003 {
			t.Fatalf("%s: a refusal added %+v", c.what, p)
		}
	}
	if len(asked) != 1 || asked[0] != "404.04" {
		t.Fatalf("the test value was asked of %v, want only of the one payment past the other checks", asked)
	}
	// The cap counts one amount however written; another amount passes.
	if _, err := ledger.CreatePayment(st, m, card("cap-other", "500.01"), env()); err != nil {
		t.Fatalf("another amount: %v", err)
	}
}

// A payout is created pending with the request's fields; a repeated
// ext_id is PAY_003 and adds nothing.
func TestCreatePayout(t *testing.T) {
	st, m, other := newStore(t)
	in := ledger.NewPayout{ExtID: "po-1", Amount: dec("250.75"), Method: "card", Requisites: "2200123412341234",
		HolderName: "Ivan P.", Bank: "sber", NotifyURL: "https://shop.example/po"}
	p, err := ledger.CreatePayout(st, m, in, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(); err != nil {
		t.Fatal(err)
	}
	m = st.Merchant("m")
	got := st.Payout(p.ID)
	if got == nil || got.Merchant != m || got.ID == "" || got.ExtID != "po-1" || !got.Amount.Equal(dec("250.75")) ||
		got.Method != "card" || got.Requisites != in.Requisites || got.HolderName != "Ivan P." || got.Bank != "sber" ||
		got.NotifyURL != in.NotifyURL || got.Status != ledger.PayoutPending || got.ProviderOrderID != "" ||
		!got.CreatedAt.Equal(t0.Truncate(time.Second)) || !got.CompletedAt.IsZero() {
		t.Fatalf("created %+v", got)
	}
	_, err = ledger.CreatePayout(st, m, in, t0)
	wantRefusal(t, "repeated ext_id", err, ledger.Conflict, spec.CodePAY003, "ext_id", "ext_id already exists")
	_, err = ledger.CreatePayout(st, nil, in, t0)
	wantRefusal(t, "unknown merchant", err, ledger.Invalid, spec.CodeAUTH001, "", "unknown API key")
	if _, n, _ := st.Counts(m); n[ledger.PayoutPending] != 1 {
		t.Fatalf("payouts %v, want the one", n)
	}
	// ext_ids are per merchant.
	if _, err := ledger.CreatePayout(st, other, in, t0); err != nil {
		t.Fatalf("another merchant's ext_id: %v", err)
	}
}

// A withdrawal holds amount+fee (or amount alone with the fee subtracted)
// on its terminal; each refusal is WDR_001 or WDR_002 and holds nothing.
func TestCreateWithdrawal(t *testing.T) {
	st, m, _ := newStore(t)
	t1 := m.Terminal("t1")
	cases := []struct {
		what  string
		in    ledger.NewWithdrawal
		kind  ledger.Kind
		code  string
		field string
		says  string
	}{
		{"unknown terminal", ledger.NewWithdrawal{TerminalID: "nope", Amount: dec("10")}, ledger.Invalid, spec.CodeWDR001, "terminal_id", "not found or not active"},
		{"inactive terminal", ledger.NewWithdrawal{TerminalID: "off", Amount: dec("1")}, ledger.Invalid, spec.CodeWDR001, "terminal_id", "not found or not active"},
		{"fee not covered", ledger.NewWithdrawal{TerminalID: "t1", Amount: dec("1.50"), SubtractFee: true}, ledger.Invalid, spec.CodeWDR001, "amount", "exceed the fee"},
		{"insufficient funds", ledger.NewWithdrawal{TerminalID: "t1", Amount: dec("98.51")}, ledger.Refused, spec.CodeWDR002, "", "insufficient funds"},
		{"insufficient, fee subtracted", ledger.NewWithdrawal{TerminalID: "t1", Amount: dec("100.01"), SubtractFee: true}, ledger.Refused, spec.CodeWDR002, "", "insufficient funds"},
	}
	for _, c := range cases {
		w, err := ledger.CreateWithdrawal(st, m, c.in, t0)
		wantRefusal(t, c.what, err, c.kind, c.code, c.field, c.says)
		if _, _, wd := st.Counts(m); w != nil || len(wd) != 0 || !t1.Available.Equal(dec("100")) || !t1.Frozen.IsZero() {
			t.Fatalf("%s: a refusal held %s frozen %s, added %v", c.what, t1.Available, t1.Frozen, wd)
		}
	}
	_, err := ledger.CreateWithdrawal(st, nil, ledger.NewWithdrawal{TerminalID: "t1", Amount: dec("1")}, t0)
	wantRefusal(t, "unknown merchant", err, ledger.Invalid, spec.CodeAUTH001, "", "unknown API key")

	w, err := ledger.CreateWithdrawal(st, m, ledger.NewWithdrawal{TerminalID: "t1", Amount: dec("98.50"), Address: "TXYZ"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(); err != nil {
		t.Fatal(err)
	}
	m = st.Merchant("m")
	t1 = m.Terminal("t1")
	got := st.Withdrawal(w.ID)
	at := t0.Truncate(time.Second)
	if got == nil || got.Merchant != m || got.Terminal != t1 || !got.Amount.Equal(dec("98.50")) || !got.Fee.Equal(dec("1.50")) ||
		!got.Held.Equal(dec("100")) || got.Address != "TXYZ" || got.TxHash != "" || got.Status != ledger.WithdrawalPending ||
		!got.CreatedAt.Equal(at) || !got.UpdatedAt.Equal(at) {
		t.Fatalf("created %+v", got)
	}
	if !t1.Available.IsZero() || !t1.Frozen.Equal(dec("100")) {
		t.Fatalf("terminal %s frozen %s, want 0 frozen 100", t1.Available, t1.Frozen)
	}
	t2 := m.Terminal("t2")
	t2.Available = dec("10")
	w, err = ledger.CreateWithdrawal(st, m, ledger.NewWithdrawal{TerminalID: "t2", Amount: dec("10"), SubtractFee: true}, t0)
	if err != nil || !w.Held.Equal(dec("10")) || !t2.Available.IsZero() || !t2.Frozen.Equal(dec("10")) {
		t.Fatalf("fee subtracted: %+v %v; terminal %s frozen %s", w, err, t2.Available, t2.Frozen)
	}
}

// A transfer moves the money between two of the merchant's terminals and
// counts; TRF_002 and TRF_003 move nothing.
func TestTransferFunds(t *testing.T) {
	st, m, other := newStore(t)
	t1, t2 := m.Terminal("t1"), m.Terminal("t2")
	cases := []struct {
		what     string
		m        *ledger.Merchant
		from, to string
		amount   string
		kind     ledger.Kind
		code     string
		says     string
	}{
		{"unknown source", m, "nope", "t2", "1", ledger.NotFound, spec.CodeTRF002, "terminal not found"},
		{"unknown target", m, "t1", "nope", "1", ledger.NotFound, spec.CodeTRF002, "terminal not found"},
		{"another merchant's terminal", other, "t1", "t2", "1", ledger.NotFound, spec.CodeTRF002, "terminal not found"},
		{"insufficient funds", m, "t1", "t2", "100.000001", ledger.Refused, spec.CodeTRF003, "insufficient funds"},
		{"unknown merchant", nil, "t1", "t2", "1", ledger.Invalid, spec.CodeAUTH001, "unknown API key"},
	}
	for _, c := range cases {
		err := ledger.TransferFunds(st, c.m, c.from, c.to, dec(c.amount))
		wantRefusal(t, c.what, err, c.kind, c.code, "", c.says)
		if !t1.Available.Equal(dec("100")) || !t2.Available.IsZero() || m.Transfers != 0 || other.Transfers != 0 {
			t.Fatalf("%s: a refusal moved money: %s %s, %d transfers", c.what, t1.Available, t2.Available, m.Transfers)
		}
	}
	// An inactive terminal still takes and gives transfers.
	if err := ledger.TransferFunds(st, m, "t1", "off", dec("40.25")); err != nil {
		t.Fatal(err)
	}
	if off := m.Terminal("off"); !t1.Available.Equal(dec("59.75")) || !off.Available.Equal(dec("47.25")) || m.Transfers != 1 {
		t.Fatalf("after 40.25: %s and %s, %d transfers", t1.Available, off.Available, m.Transfers)
	}
}

// ExpireDue cancels the due PENDING payments, earliest first, at most
// limit per call, saved as CANCELLED; one not yet due stays PENDING.
func TestExpireDue(t *testing.T) {
	st, m, _ := newStore(t)
	ids := map[string]string{}
	for i, ext := range []string{"a", "b", "c", "later"} {
		e := env()
		e.MaxSamePending = 10
		e.Now = t0.Add(time.Duration(i) * time.Minute)
		if ext == "later" {
			e.Now = t0.Add(time.Hour)
		}
		p, err := ledger.CreatePayment(st, m, ledger.NewPayment{ExtID: ext, Amount: dec("10"), Method: spec.MethodCard}, e)
		if err != nil {
			t.Fatal(err)
		}
		ids[ext] = p.ID
	}
	if err := st.Commit(); err != nil {
		t.Fatal(err)
	}
	now := t0.Add(30 * time.Minute) // a, b and c (valid until 20, 21, 22 minutes in) are due
	expired, more := ledger.ExpireDue(st, now, 2)
	if len(expired) != 2 || !more || expired[0].ID != ids["a"] || expired[1].ID != ids["b"] {
		t.Fatalf("first batch: %d expired (more %v), want a and b", len(expired), more)
	}
	if err := st.Commit(); err != nil {
		t.Fatal(err)
	}
	expired, more = ledger.ExpireDue(st, now, 2)
	if len(expired) != 1 || more || expired[0].ID != ids["c"] {
		t.Fatalf("second batch: %d expired (more %v), want c alone", len(expired), more)
	}
	if err := st.Commit(); err != nil {
		t.Fatal(err)
	}
	for ext, want := range map[string]string{"a": ledger.PaymentCancelled, "b": ledger.PaymentCancelled,
		"c": ledger.PaymentCancelled, "later": ledger.PaymentPending} {
		if got := st.Payment(ids[ext]).Status; got != want {
			t.Fatalf("%s: %s, want %s", ext, got, want)
		}
	}
	if n := st.PendingWithAmount(m, ledger.AmountKey(dec("10"))); n != 1 {
		t.Fatalf("pending of 10: %d, want 1", n)
	}
	if next, ok := st.NextExpiry(); !ok || next.After(t0.Add(time.Hour).Truncate(time.Second).Add(20*time.Minute)) {
		t.Fatalf("next expiry %v %v", next, ok)
	}
	if expired, more := ledger.ExpireDue(st, now, 2); len(expired) != 0 || more {
		t.Fatalf("nothing more due: %d expired", len(expired))
	}
}

// ChangePayment saves the move and the terminal it credited; a refusal
// saves nothing.
func TestChangePaymentSaves(t *testing.T) {
	st, m, _ := newStore(t)
	p, err := ledger.CreatePayment(st, m, ledger.NewPayment{ExtID: "x", Amount: dec("925"), Method: spec.MethodCard}, env())
	if err != nil {
		t.Fatal(err)
	}
	st.Commit()
	p = st.Payment(p.ID)
	err = ledger.ChangePayment(st, p, ledger.VerifyCompleted, nil)
	wantRefusal(t, "verify a pending payment", err, ledger.WrongState, "", "", "not PROCESSING")
	receipt := 0
	if err := ledger.ChangePayment(st, p, ledger.Confirm, func() { receipt = 1; p.Receipt = 42 }); err != nil || receipt != 1 {
		t.Fatalf("confirm: %v (apply run: %d)", err, receipt)
	}
	if err := ledger.ChangePayment(st, p, ledger.VerifyCompleted, nil); err != nil {
		t.Fatal(err)
	}
	st.Commit()
	m = st.Merchant("m")
	got := st.Payment(p.ID)
	if got.Status != ledger.PaymentCompleted || got.Receipt != 42 || !m.Terminal("t1").Available.Equal(dec("110")) {
		t.Fatalf("after completion: %s receipt %d, terminal %s", got.Status, got.Receipt, m.Terminal("t1").Available)
	}
}

// ChangePayout saves the move with what it records; a refusal saves
// nothing.
func TestChangePayoutSaves(t *testing.T) {
	st, m, _ := newStore(t)
	p, err := ledger.CreatePayout(st, m, ledger.NewPayout{ExtID: "po", Amount: dec("10"), Method: "card"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	st.Commit()
	p = st.Payout(p.ID)
	wantRefusal(t, "back to pending", ledger.ChangePayout(st, p, ledger.PayoutPending, t0), ledger.Invalid, "", "status", "payout status must be")
	if err := ledger.ChangePayout(st, p, ledger.PayoutCompleted, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	st.Commit()
	got := st.Payout(p.ID)
	if got.Status != ledger.PayoutCompleted || !strings.HasPrefix(got.ProviderOrderID, "prv_") ||
		!got.CompletedAt.Equal(t0.Add(time.Minute).Truncate(time.Second)) {
		t.Fatalf("after completion: %+v", got)
	}
	wantRefusal(t, "completed again", ledger.ChangePayout(st, got, ledger.PayoutFailed, t0), ledger.WrongState, "", "", "cannot become failed")
	st.Commit()
	if st.Payout(p.ID).Status != ledger.PayoutCompleted {
		t.Fatal("a refusal changed the payout")
	}
}

// ChangeWithdrawal saves the move, the hash and the settled terminal; a
// completion without a hash records a random 64-hex one.
func TestChangeWithdrawalSaves(t *testing.T) {
	st, m, _ := newStore(t)
	w, err := ledger.CreateWithdrawal(st, m, ledger.NewWithdrawal{TerminalID: "t1", Amount: dec("10"), Address: "T"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	st.Commit()
	w = st.Withdrawal(w.ID)
	wantRefusal(t, "cancelled", ledger.ChangeWithdrawal(st, w, "cancelled", "", t0), ledger.Invalid, "", "status", "")
	if err := ledger.ChangeWithdrawal(st, w, ledger.WithdrawalCompleted, "", t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	st.Commit()
	m = st.Merchant("m")
	t1 := m.Terminal("t1")
	got := st.Withdrawal(w.ID)
	if got.Status != ledger.WithdrawalCompleted || len(got.TxHash) != 64 || strings.Trim(got.TxHash, "0123456789abcdef") != "" ||
		!got.UpdatedAt.Equal(t0.Add(time.Hour).Truncate(time.Second)) || !got.CreatedAt.Equal(t0.Truncate(time.Second)) {
		t.Fatalf("after completion: %+v", got)
	}
	if !t1.Available.Equal(dec("88.50")) || !t1.Frozen.IsZero() {
		t.Fatalf("terminal %s frozen %s, want 88.50 frozen 0", t1.Available, t1.Frozen)
	}
	w2, err := ledger.CreateWithdrawal(st, m, ledger.NewWithdrawal{TerminalID: "t1", Amount: dec("5"), Address: "T"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := ledger.ChangeWithdrawal(st, w2, ledger.WithdrawalFailed, "abc", t0); err != nil {
		t.Fatal(err)
	}
	st.Commit()
	if got := st.Withdrawal(w2.ID); got.Status != ledger.WithdrawalFailed || got.TxHash != "abc" || !t1.Available.Equal(dec("88.50")) {
		t.Fatalf("after failing: %+v, terminal %s", got, t1.Available)
	}
}
