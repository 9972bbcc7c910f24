package paykit

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests of the three verdicts (same, different, cannot tell) where an
// answer or a read-back is compared with the request, over loopback HTTP:
// only a field that provably differs may turn the merchant's own resource
// into "someone else's".

// lostCreate is a service whose create was applied but answered 500, and
// whose retry answers PAY_003: the SDK must read the resource back and
// compare it. banks answers GET /v1/banks; get answers the read-back.
type lostCreate struct {
	route string // "/v1/payments" or "/v1/payouts"
	get   func(extID string) (int, string)
	banks func(r *http.Request) (int, string)

	mu   sync.Mutex
	seen []string       // "METHOD path" of every request
	post map[string]int // creates per ext_id
}

func (s *lostCreate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.seen = append(s.seen, r.Method+" "+r.URL.EscapedPath())
	if s.post == nil {
		s.post = map[string]int{}
	}
	s.mu.Unlock()
	status, body := http.StatusNotFound, `{"error":"PAY_006","message":"no route"}`
	switch {
	case r.Method == http.MethodPost && r.URL.Path == s.route:
		var in struct {
			ExtID string `json:"ext_id"`
		}
		json.NewDecoder(r.Body).Decode(&in)
		s.mu.Lock()
		s.post[in.ExtID]++
		n := s.post[in.ExtID]
		s.mu.Unlock()
		status, body = http.StatusInternalServerError, `{"error":"SYS_001","message":"internal"}`
		if n > 1 {
			status, body = http.StatusConflict, `{"error":"PAY_003","message":"ext_id exists","data":{}}`
		}
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, s.route+"/by-ext-id/"):
		status, body = s.get(strings.TrimPrefix(r.URL.Path, s.route+"/by-ext-id/"))
	case r.Method == http.MethodGet && r.URL.Path == "/v1/banks":
		status, body = s.banks(r)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write([]byte(body))
}

func (s *lostCreate) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

// storedPayment is a domestic payment as GET by ext_id shows it: the
// bank by its name only.
func storedPayment(extID, bankName string) (int, string) {
	return http.StatusOK, fmt.Sprintf(`{"id":%q,"ext_id":%q,"amount":1500.50,"currency":"RUB","status":"PENDING","method":"CARD",`+
		`"requisites":{"type":"card","value":"2200123456789012","bank":%q,"holder":"I. I."},`+
		`"valid_until":"2026-11-22T10:20:00Z","created_at":"2026-11-22T10:00:00Z","usdt_rate":92.5}`, paymentID, extID, bankName)
}

func sberList(name string) string {
	return fmt.Sprintf(`{"banks":[{"code":"sber","name":%q,"is_active":true},{"code":"vtb","name":"VTB","is_active":true}]}`, name)
}

// The review's point 1: after a lost create and a PAY_003, a read-back
// that matches but whose bank name cannot be resolved (ListBanks down,
// hanging past the caller's deadline, or empty) is an unknown outcome,
// never "someone else's"; an empty list is not kept.
func TestCreatePaymentBankListUnavailableIsUnknownOutcome(t *testing.T) {
	t.Parallel()
	params := CreatePaymentParams{ExtID: "order-77", Amount: dec("1500.50"), Bank: "sber"}
	wantRequests := []string{"POST /v1/payments", "POST /v1/payments", "GET /v1/payments/by-ext-id/order-77"}
	requireUnknown := func(t *testing.T, err error) {
		t.Helper()
		require.ErrorIs(t, err, ErrUnknownOutcome)
		assert.NotErrorIs(t, err, ErrDuplicateExtID, "a comparison that could not be made is not a difference")
		assert.ErrorContains(t, err, `GetPaymentByExtID("order-77")`, "names the read that settles it")
	}

	t.Run("503", func(t *testing.T) {
		t.Parallel()
		srv := &lostCreate{route: "/v1/payments", get: func(x string) (int, string) { return storedPayment(x, "Sberbank") },
			banks: func(*http.Request) (int, string) { return 503, `<h1>Service Unavailable</h1>` }}
		c, _ := serverClient(t, srv, WithMaxRetries(2))
		_, err := c.CreatePayment(ctx, params)
		requireUnknown(t, err)
		assert.ErrorContains(t, err, "(HTTP 503)")
		assert.Equal(t, append(wantRequests, "GET /v1/banks", "GET /v1/banks", "GET /v1/banks"), srv.requests())
	})

	t.Run("hangs past the caller's deadline", func(t *testing.T) {
		t.Parallel()
		release := make(chan struct{})
		srv := &lostCreate{route: "/v1/payments", get: func(x string) (int, string) { return storedPayment(x, "Sberbank") },
			banks: func(r *http.Request) (int, string) {
				select {
				case <-release:
				case <-r.Context().Done():
				}
				return 200, sberList("Sberbank")
			}}
		c, _ := serverClient(t, srv)
		t.Cleanup(func() { close(release) })
		const budget = 300 * time.Millisecond
		cctx, cancel := context.WithTimeout(ctx, budget)
		defer cancel()
		start := time.Now()
		_, err := c.CreatePayment(cctx, params)
		requireUnknown(t, err)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Less(t, time.Since(start), budget+2*time.Second, "the call ends with its context")
		assert.Equal(t, append(wantRequests, "GET /v1/banks"), srv.requests())
	})

	t.Run("empty, and not kept", func(t *testing.T) {
		t.Parallel()
		var lists atomic.Int32
		srv := &lostCreate{route: "/v1/payments", get: func(x string) (int, string) { return storedPayment(x, "Sberbank") },
			banks: func(*http.Request) (int, string) {
				if lists.Add(1) == 1 {
					return 200, `{"banks":[]}`
				}
				return 200, sberList("Sberbank")
			}}
		c, _ := serverClient(t, srv)
		_, err := c.CreatePayment(ctx, params)
		requireUnknown(t, err)
		assert.ErrorContains(t, err, "ListBanks answered no banks")
		assert.Equal(t, append(wantRequests, "GET /v1/banks"), srv.requests())

		// The next reconciliation reads the list again and settles.
		params2 := params
		params2.ExtID = "order-78"
		p, err := c.CreatePayment(ctx, params2)
		require.NoError(t, err)
		assert.True(t, p.Reconciled)
		assert.Equal(t, "order-78", p.ExtID)
		assertDec(t, "1500.50", p.Amount, "amount")
		assert.Equal(t, "Sberbank", p.Requisites.BankName)
		assert.Equal(t, int32(2), lists.Load(), "the empty list was not cached")
	})
}

// The review's point 2: a bank renamed after the cache was filled leaves
// the merchant's own payment the merchant's: the differing name reads
// the list again before anything is concluded.
func TestCreatePaymentBankRenamedAfterCacheFilled(t *testing.T) {
	t.Parallel()
	var name atomic.Value
	name.Store("Sberbank")
	var lists atomic.Int32
	srv := &lostCreate{route: "/v1/payments",
		get: func(x string) (int, string) { return storedPayment(x, name.Load().(string)) },
		banks: func(*http.Request) (int, string) {
			lists.Add(1)
			return 200, sberList(name.Load().(string))
		}}
	c, _ := serverClient(t, srv)
	p, err := c.CreatePayment(ctx, CreatePaymentParams{ExtID: "order-1", Amount: dec("1500.50"), Bank: "sber"})
	require.NoError(t, err)
	assert.True(t, p.Reconciled)
	assert.Equal(t, int32(1), lists.Load(), "the cache is filled")

	name.Store("Sber Bank") // renamed at the service
	p, err = c.CreatePayment(ctx, CreatePaymentParams{ExtID: "order-2", Amount: dec("1500.50"), Bank: "SBER"})
	require.NoError(t, err, "the merchant's own payment, not someone else's")
	assert.True(t, p.Reconciled)
	assert.Equal(t, "order-2", p.ExtID)
	assert.Equal(t, "Sber Bank", p.Requisites.BankName)
	assert.Equal(t, int32(2), lists.Load(), "one refresh")

	// A payment provably at another bank is still someone else's.
	_, err = c.CreatePayment(ctx, CreatePaymentParams{ExtID: "order-3", Amount: dec("1500.50"), Bank: "vtb"})
	opRequireAPIError(t, err, "PAY_003", http.StatusConflict)
	opAssertOnlySentinels(t, err, "ErrDuplicateExtID")
}

// storedPayout is a payout as GET by ext_id shows it.
func storedPayout(extID, requisites, bank string) (int, string) {
	return http.StatusOK, fmt.Sprintf(`{"id":%q,"ext_id":%q,"amount":"2500.00","currency":"RUB","method":"sbp","requisites":%q,`+
		`"holder_name":"IVAN IVANOV","bank":%q,"status":"pending","created_at":"2026-11-22T10:00:00Z"}`, payoutID, extID, requisites, bank)
}

// requireSettled checks how a create settled by reading back ended, as
// want says: "same" succeeded (the caller checks the result; true is
// returned), "duplicate" is the PAY_003 alone (someone else's), "unknown"
// is ErrUnknownOutcome, never the PAY_003's sentinel, naming read.
func requireSettled(t *testing.T, err error, want, read string) bool {
	t.Helper()
	switch want {
	case "same":
		require.NoError(t, err)
		return true
	case "duplicate":
		opRequireAPIError(t, err, "PAY_003", http.StatusConflict)
		opAssertOnlySentinels(t, err, "ErrDuplicateExtID")
	case "unknown":
		require.ErrorIs(t, err, ErrUnknownOutcome)
		assert.NotErrorIs(t, err, ErrDuplicateExtID, "a comparison that cannot be made is not a difference")
		assert.ErrorContains(t, err, read, "names the read that settles it")
	default:
		t.Fatalf("want %q", want)
	}
	return false
}

// The review's point 3: a payout read back with the bank code in another
// case or the phone number formatted otherwise is the call's own; one
// with other digits is someone else's; a masked number cannot tell.
func TestCreatePayoutComparesCanonicalForms(t *testing.T) {
	t.Parallel()
	params := CreatePayoutParams{ExtID: "po-1", Amount: dec("2500"), Method: PayoutMethodSBP,
		Requisites: "79123456789", HolderName: "Ivan Ivanov", Bank: "sber"}
	for _, tc := range []struct {
		name, requisites, bank string
		want                   string // "same", "duplicate", "unknown"
	}{
		{"bank code in upper case", "79123456789", "SBER", "same"},
		{"phone formatted with separators", "+7 912 345-67-89", "sber", "same"},
		{"both", "+7 (912) 345.67.89", "Sber", "same"},
		{"other digits", "+7 912 345-67-80", "sber", "duplicate"},
		{"other bank", "79123456789", "vtb", "duplicate"},
		{"masked number", "+7 912 ***-**-89", "sber", "unknown"},
		{"no bank read back", "79123456789", "", "unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := &lostCreate{route: "/v1/payouts", get: func(x string) (int, string) { return storedPayout(x, tc.requisites, tc.bank) }}
			c, _ := serverClient(t, srv)
			p, err := c.CreatePayout(ctx, params)
			assert.Equal(t, []string{"POST /v1/payouts", "POST /v1/payouts", "GET /v1/payouts/by-ext-id/po-1"}, srv.requests())
			if requireSettled(t, err, tc.want, `GetPayoutByExtID("po-1")`) {
				assert.True(t, p.Reconciled)
				assert.Equal(t, tc.requisites, p.Requisites, "the payout as read back")
				assert.Equal(t, tc.bank, p.Bank)
			}
			if err != nil {
				assert.NotContains(t, err.Error(), "912", "no phone number in the error")
			}
		})
	}
}

// The canonical forms, rule by rule.
func TestSamenessRules(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		got, asked string
		want       sameness
	}{
		{"4111 1111 1111 1111", "4111111111111111", same},
		{"4111-1111-1111-1112", "4111111111111111", different},
		{"", "4111111111111111", cannotTell},
		{"card#1", "card#1", same},
		{"card#1", "card#2", cannotTell},
	} {
		v, _ := sameCard("requisites", tc.got, tc.asked, inReadBack)
		assert.Equal(t, tc.want, v, "sameCard(%q, %q)", tc.got, tc.asked)
	}
	for _, tc := range []struct {
		got, asked string
		want       sameness
	}{{"SBER", "sber", same}, {"sber", "vtb", different}, {"", "sber", cannotTell}, {" ", "sber", cannotTell}} {
		v, _ := sameCode("bank", tc.got, tc.asked)
		assert.Equal(t, tc.want, v, "sameCode(%q, %q)", tc.got, tc.asked)
	}
	for _, tc := range []struct {
		got, asked string
		want       sameness
	}{{"IVAN  IVANOV", "Ivan Ivanov", same}, {"Petr Ivanov", "Ivan Ivanov", different}, {"", "Ivan Ivanov", cannotTell}} {
		v, err := sameName("holder name", tc.got, tc.asked)
		assert.Equal(t, tc.want, v, "sameName(%q, %q)", tc.got, tc.asked)
		if err != nil {
			assert.NotContains(t, err.Error(), "Ivan", "a holder's name is not echoed")
		}
	}
	v, _ := sameAmount("payment", dec("1500.5"), dec("1500.50"))
	assert.Equal(t, same, v)
	v, _ = sameAmount("payment", dec("0"), dec("1500.50"))
	assert.Equal(t, cannotTell, v, "a missing amount")
	v, _ = sameAmount("payment", dec("1500.51"), dec("1500.50"))
	assert.Equal(t, different, v)

	var c comparison
	c.add(same, nil)
	c.add(cannotTell, fmt.Errorf("x"))
	c.add(different, fmt.Errorf("y"))
	c.add(cannotTell, fmt.Errorf("z"))
	v, err := c.result()
	assert.Equal(t, different, v, "one field that provably differs decides")
	assert.EqualError(t, err, "y")
}

// Issue 35 §2: a Russian phone number in its usual forms is one number. A
// form that does not map cannot be compared; only two numbers that both
// map, to other digits, are different.
func TestSamePhoneRussianForms(t *testing.T) {
	t.Parallel()
	forms := []string{"+79123456789", "+7 912 345-67-89", "+7 (912) 345-67-89", "89123456789", "8 (912) 345-67-89",
		"8-912-345-67-89", "79123456789", "7 912 345 67 89", "9123456789", "(912) 345-67-89", "912.345.67.89",
		" +7\u00a0912\u00a0345\u201167\u201189 "}
	others := []string{"+79123456780", "89123456780", "9123456780", "+7 495 123-45-67", "8 (812) 123-45-67"}
	unmappable := []string{"+89123456789", "8-10-7-912-345-67-89", "0079123456789", "+7 912 ***-**-89", "912345678",
		"+375 29 123-45-67", "+7 912 345-67-8", "79123456789 ext. 5", "1234567890", "+9123456789", "phone"}
	check := func(got, asked string, want sameness) {
		t.Helper()
		v, err := samePhone("payout's requisites", got, asked)
		assert.Equal(t, want, v, "samePhone(%q, %q)", got, asked)
		if err != nil {
			assert.NotContains(t, err.Error(), "912", "no phone number in the error")
		}
	}
	for _, a := range forms {
		for _, b := range forms {
			check(a, b, same)
		}
		for _, o := range others {
			check(a, o, different)
			check(o, a, different)
		}
		for _, u := range unmappable {
			check(a, u, cannotTell)
			check(u, a, cannotTell)
		}
	}
	check("+375 29 123-45-67", "+375 29 123-45-68", cannotTell) // another country's: not mapped
	check("+375 29 123-45-67", "+375291234567", same)           // the same digits
	check("+375 29 123-45-67", "375291234567", cannotTell)      // not if only one is international
	check("", "79123456789", cannotTell)
}

// Over loopback: a payout whose phone the service reads back in another
// of its forms (79123456789 for 89123456789, the national ten digits, or
// +7) is the merchant's own, not someone else's.
func TestCreatePayoutPhoneReadBackInAnotherForm(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		asked, stored string
		want          string // "same", "duplicate", "unknown"
	}{
		{"89123456789", "79123456789", "same"},
		{"8 (912) 345-67-89", "+79123456789", "same"},
		{"9123456789", "79123456789", "same"},
		{"+7 912 345 67 89", "9123456789", "same"},
		{"89123456789", "79123456780", "duplicate"},
		{"89123456789", "+19123456789", "unknown"}, // not a Russian form: cannot tell
	} {
		t.Run(tc.asked+" read back as "+tc.stored, func(t *testing.T) {
			t.Parallel()
			srv := &lostCreate{route: "/v1/payouts", get: func(x string) (int, string) { return storedPayout(x, tc.stored, "sber") }}
			c, _ := serverClient(t, srv)
			p, err := c.CreatePayout(ctx, CreatePayoutParams{ExtID: "po-1", Amount: dec("2500"), Method: PayoutMethodSBP,
				Requisites: tc.asked, HolderName: "Ivan Ivanov", Bank: "sber"})
			assert.Equal(t, []string{"POST /v1/payouts", "POST /v1/payouts", "GET /v1/payouts/by-ext-id/po-1"}, srv.requests())
			if requireSettled(t, err, tc.want, `GetPayoutByExtID("po-1")`) {
				assert.True(t, p.Reconciled)
				assert.Equal(t, payoutID, p.ID)
				assert.Equal(t, tc.stored, p.Requisites, "the payout as read back")
				assertDec(t, "2500.00", p.Amount, "amount")
			}
			if err != nil {
				assert.NotContains(t, err.Error(), "912", "no phone number in the error")
			}
		})
	}
}

// Issue 35 §2: holder names compare after NFC for the Cyrillic letters
// that decompose and the ё/е fold; any other form this cannot decide
// without the Unicode tables cannot be compared.
func TestSameNameUnicodeForms(t *testing.T) {
	t.Parallel()
	const asked = "Пётр Йорданов"
	for _, tc := range []struct {
		got  string
		want sameness
	}{
		{"Пётр Йорданов", same},
		{"ПЕТР ЙОРДАНОВ", same},               // ё written е, upper case
		{"Пе\u0308тр И\u0306орданов", same},   // decomposed Ё and Й
		{"ПЕ\u0308ТР  И\u0306ОРДАНОВ ", same}, // and in upper case, spaced
		{"  пётр \t йорданов ", same},         // spacing
		{"Павел Йорданов", different},         // another name
		{"Петр Иорданов", different},          // И is not Й
		{"Пётр Йорданов\u0301", cannotTell},   // a combining mark left over
		{"Пётр Йорданов\u0483", cannotTell},   // a Cyrillic combining mark
		{"Пётр\u00adЙорданов", cannotTell},    // an invisible soft hyphen
		{"Pyotr Yordanov", cannotTell},        // transliterated
		{"Πέτρος Γιορντάνοφ", cannotTell},     // Greek: not decidable here
		{"", cannotTell},
	} {
		v, err := sameName("payout's holder name", tc.got, asked)
		assert.Equal(t, tc.want, v, "sameName(%q, %q)", tc.got, asked)
		v2, _ := sameName("payout's holder name", asked, tc.got)
		assert.Equal(t, v, v2, "symmetric: sameName(%q, %q)", asked, tc.got)
		if err != nil {
			assert.NotContains(t, err.Error(), "Йорданов", "a holder's name is not echoed")
			assert.NotContains(t, err.Error(), "ЙОРДАНОВ", "a holder's name is not echoed")
		}
	}
	v, _ := sameName("holder name", "José Martí", "Jose\u0301 Marti\u0301")
	assert.Equal(t, cannotTell, v, "a Latin letter decomposed: NFC would be needed")
	v, _ = sameName("holder name", "Jose\u0301 Marti\u0301", "Jose\u0301 Marti\u0301")
	assert.Equal(t, same, v, "equal as they stand")
	v, _ = sameName("holder name", "José Martí", "José Martín")
	assert.Equal(t, different, v)
	v, _ = sameName("holder name", "O’Brien Анна‑Мария", "o'brien анна-мария")
	assert.Equal(t, same, v, "typographic apostrophe and non-breaking hyphen")
}

// storedPayoutFor is a payout as GET by ext_id shows it, with its holder.
func storedPayoutFor(extID, requisites, holder string) (int, string) {
	return http.StatusOK, fmt.Sprintf(`{"id":%q,"ext_id":%q,"amount":"2500.00","currency":"RUB","method":"card","requisites":%q,`+
		`"holder_name":%q,"bank":"sber","status":"pending","created_at":"2026-11-22T10:00:00Z"}`, payoutID, extID, requisites, holder)
}

// Over loopback: a holder's name read back composed, in upper case or
// with е for ё is the merchant's own payout.
func TestCreatePayoutHolderNameForms(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		stored, want string
	}{
		{"ПЕТР ЙОРДАНОВ", "same"},
		{"Пётр Йорданов", "same"},
		{"Петр Иорданов", "duplicate"},
		{"Пётр Йорданов\u0301", "unknown"},
	} {
		t.Run(tc.stored, func(t *testing.T) {
			t.Parallel()
			srv := &lostCreate{route: "/v1/payouts", get: func(x string) (int, string) { return storedPayoutFor(x, "2200000000000004", tc.stored) }}
			c, _ := serverClient(t, srv)
			p, err := c.CreatePayout(ctx, CreatePayoutParams{ExtID: "po-1", Amount: dec("2500"), Method: PayoutMethodCard,
				Requisites: "2200 0000 0000 0004", HolderName: "Пе\u0308тр И\u0306орданов", Bank: "sber"})
			assert.Equal(t, []string{"POST /v1/payouts", "POST /v1/payouts", "GET /v1/payouts/by-ext-id/po-1"}, srv.requests())
			if requireSettled(t, err, tc.want, `GetPayoutByExtID("po-1")`) {
				assert.True(t, p.Reconciled)
				assert.Equal(t, tc.stored, p.HolderName, "as read back")
			}
		})
	}
}

// ownAnswer is a payout service that creates on the first POST and
// answers it with the payout as stored (a masked card number, say), and
// answers GET by ext_id with the same.
type ownAnswer struct {
	stored string // the payout's JSON
	mu     sync.Mutex
	seen   []string
}

func (s *ownAnswer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.seen = append(s.seen, r.Method+" "+r.URL.EscapedPath())
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if r.Method == http.MethodPost {
		w.WriteHeader(http.StatusCreated)
	}
	w.Write([]byte(s.stored))
}

// Issue 35 §2: a masked card number whose visible digits agree is the
// call's own in the create's own answer, cannot tell in a read-back after
// a lost answer; visible digits that disagree are another card in both.
func TestCreatePayoutMaskedCard(t *testing.T) {
	t.Parallel()
	params := CreatePayoutParams{ExtID: "po-1", Amount: dec("2500"), Method: PayoutMethodCard,
		Requisites: "2200 0000 0000 0004", HolderName: "Ivan Ivanov", Bank: "sber"}
	payout := func(requisites string) string {
		_, body := storedPayoutFor("po-1", requisites, "IVAN IVANOV")
		return body
	}
	noCard := func(t *testing.T, err error) {
		t.Helper()
		if err != nil {
			assert.NotContains(t, err.Error(), "220000", "no card number in the error")
		}
	}

	t.Run("own answer, visible digits agree", func(t *testing.T) {
		t.Parallel()
		for _, masked := range []string{"220000******0004", "2200 00** **** 0004", "**** **** **** 0004", "220000…0004"} {
			srv := &ownAnswer{stored: payout(masked)}
			c, _ := serverClient(t, srv)
			p, err := c.CreatePayout(ctx, params)
			require.NoError(t, err, masked)
			assert.False(t, p.Reconciled, "the create's own answer")
			assert.Equal(t, masked, p.Requisites)
			assert.Equal(t, payoutID, p.ID)
			assert.Equal(t, []string{"POST /v1/payouts"}, srv.seen, "nothing read back")
		}
	})
	t.Run("own answer, visible digits disagree", func(t *testing.T) {
		t.Parallel()
		srv := &ownAnswer{stored: payout("220000******0005")}
		c, _ := serverClient(t, srv)
		_, err := c.CreatePayout(ctx, params)
		require.ErrorIs(t, err, ErrUnknownOutcome, "created by this call, but not as asked")
		assert.Equal(t, []string{"POST /v1/payouts", "GET /v1/payouts/by-ext-id/po-1"}, srv.seen)
		noCard(t, err)
	})
	t.Run("read back, visible digits agree", func(t *testing.T) {
		t.Parallel()
		srv := &lostCreate{route: "/v1/payouts", get: func(x string) (int, string) { return storedPayoutFor(x, "220000******0004", "IVAN IVANOV") }}
		c, _ := serverClient(t, srv)
		_, err := c.CreatePayout(ctx, params)
		requireSettled(t, err, "unknown", `GetPayoutByExtID("po-1")`) // an earlier payout to a card sharing those digits is possible
		noCard(t, err)
	})
	t.Run("read back, visible digits disagree", func(t *testing.T) {
		t.Parallel()
		srv := &lostCreate{route: "/v1/payouts", get: func(x string) (int, string) { return storedPayoutFor(x, "220000******0005", "IVAN IVANOV") }}
		c, _ := serverClient(t, srv)
		_, err := c.CreatePayout(ctx, params)
		requireSettled(t, err, "duplicate", "")
		noCard(t, err)
	})
}

// The masked-card rule, form by form.
func TestSameCardMasked(t *testing.T) {
	t.Parallel()
	const card = "2200000000000004"
	for _, tc := range []struct {
		got              string
		answer, readBack sameness
	}{
		{"220000******0004", same, cannotTell},
		{"2200-00XX-XXXX-0004", same, cannotTell},
		{"•••• 0004", same, cannotTell},
		{"220000******0005", different, different},
		{"220001******0004", different, different},
		{"****************", cannotTell, cannotTell},        // shows nothing
		{"22**00**0004", cannotTell, cannotTell},            // two runs
		{"220000000000******00004", cannotTell, cannotTell}, // shows more digits than the card has
		{"2200000000000004", same, same},
		{"2200000000000005", different, different},
	} {
		v, err := sameCard("payout's requisites", tc.got, card, inAnswer)
		assert.Equal(t, tc.answer, v, "in the answer: %q", tc.got)
		v2, _ := sameCard("payout's requisites", tc.got, card, inReadBack)
		assert.Equal(t, tc.readBack, v2, "read back: %q", tc.got)
		if err != nil {
			assert.NotContains(t, err.Error(), "2200")
		}
	}
}
