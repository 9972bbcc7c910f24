package store

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
)

// The SQL store's resources: merchants and terminals, payments, payouts,
// withdrawals, and the queries over them.

// decText writes a decimal so that it reads back with its scale: 1500.50
// stays 1500.50 (the API answers amounts with the scale they were given).
func decText(d decimal.Decimal) string {
	if e := d.Exponent(); e > 0 {
		return d.Coefficient().String() + "e" + strconv.Itoa(int(e))
	}
	return d.StringFixed(-d.Exponent())
}

func (st *SQL) undec(s string) decimal.Decimal {
	d, err := decimal.NewFromString(s)
	if err != nil {
		st.fail(fmt.Errorf("stored amount %q: %w", s, err))
	}
	return d
}

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func unnanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// ---- merchants and terminals

// LoadMerchants reads the merchants and their terminals at start: the
// stored ones of the configured merchants, and the configured start of a
// merchant the file does not have yet (written with the transaction).
func (st *SQL) LoadMerchants() {
	start := st.deps.Start()
	ms := byKey(start)
	defer st.ms.set(start)
	for _, m := range start {
		var stored []*terminal
		st.rows(func(r *sql.Rows) error {
			var t terminal
			var bal, frz, fee string
			var active int
			if err := r.Scan(&t.ID, &t.Name, &bal, &frz, &fee, &active); err != nil {
				return err
			}
			t.Available, t.Frozen, t.Fee, t.Active = st.undec(bal), st.undec(frz), st.undec(fee), active != 0
			stored = append(stored, &t)
			return nil
		}, `SELECT id, name, balance, frozen, fee, active FROM terminals WHERE api_key = ? ORDER BY pos`, m.APIKey)
		if stored == nil {
			st.insertMerchant(m)
			continue
		}
		// Compared with the start the file was made from, not with today's
		// balances, which payments and transfers have moved since.
		var start string
		st.meta("start:"+m.APIKey, &start)
		configured := terminalsText(m.Terminals)
		if start == "" { // a file from before starts were recorded: this one is its start from now on
			st.setMeta("start:"+m.APIKey, configured)
			start = configured
		}
		if configured != start && st.deps.Logger != nil {
			st.deps.Logger.Warn("the configured terminals differ from the start this database was made from: the stored "+
				"terminals and balances are kept and the configuration is IGNORED for them (POST /sandbox/reset applies it, "+
				"dropping every resource; or give -db a new file)",
				slog.String("merchant", st.deps.MaskKey(m.APIKey)), slog.String("configured", configured),
				slog.String("file_start", start), slog.String("stored_now", terminalsText(stored)))
		}
		m.Terminals = stored
		st.one([]any{&m.Transfers}, `SELECT transfers FROM merchants WHERE api_key = ?`, m.APIKey)
	}
	var gone []string
	st.rows(func(r *sql.Rows) error {
		var k string
		if err := r.Scan(&k); err != nil {
			return err
		}
		if ms[k] == nil {
			gone = append(gone, st.deps.MaskKey(k))
		}
		return nil
	}, `SELECT api_key FROM merchants ORDER BY api_key`)
	if len(gone) > 0 && st.deps.Logger != nil {
		st.deps.Logger.Warn("merchants in the database are not in the configuration: their resources are kept "+
			"in the file but not served until they are configured again", slog.String("merchants", strings.Join(gone, ", ")))
	}
}

// Merchant: see ledger.Txn.
func (st *SQL) Merchant(apiKey string) *merchant { return st.ms.get(apiKey) }

func terminalsText(ts []*terminal) string {
	var b strings.Builder
	for i, t := range ts {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s balance %s frozen %s fee %s active %t", t.ID, decText(t.Available), decText(t.Frozen), decText(t.Fee), t.Active)
	}
	return b.String()
}

func (st *SQL) insertMerchant(m *merchant) {
	st.exec(`INSERT INTO merchants (api_key, transfers) VALUES (?, ?)
		ON CONFLICT (api_key) DO UPDATE SET transfers = excluded.transfers`, m.APIKey, m.Transfers)
	st.exec(`DELETE FROM terminals WHERE api_key = ?`, m.APIKey)
	st.setMeta("start:"+m.APIKey, terminalsText(m.Terminals))
	for i, t := range m.Terminals {
		st.exec(`INSERT INTO terminals (api_key, id, pos, name, balance, frozen, fee, active) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			m.APIKey, t.ID, i, t.Name, decText(t.Available), decText(t.Frozen), decText(t.Fee), boolInt(t.Active))
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// SaveTerminal: see ledger.Txn.
func (st *SQL) SaveTerminal(m *merchant, t *terminal) {
	st.ms.saveTerminal(m, t)
	st.exec(`UPDATE terminals SET balance = ?, frozen = ? WHERE api_key = ? AND id = ?`,
		decText(t.Available), decText(t.Frozen), m.APIKey, t.ID)
}

// SaveMerchant: see ledger.Txn.
func (st *SQL) SaveMerchant(m *merchant) {
	st.ms.saveMerchant(m)
	st.exec(`UPDATE merchants SET transfers = ? WHERE api_key = ?`, m.Transfers, m.APIKey)
}

// Reset: see ledger.Txn.
func (st *SQL) Reset() {
	st.nextKnown = false
	for _, t := range []string{"payments", "payouts", "withdrawals", "merchants", "terminals"} {
		st.exec("DELETE FROM " + t)
	}
	st.exec(`DELETE FROM meta WHERE key IN ('offset', 'faults', 'counters') OR key LIKE 'start:%'`)
	clear(st.pm)
	clear(st.po)
	clear(st.wd)
	st.countersDirty.Store(false)
	start := st.deps.Start()
	for _, m := range start {
		st.insertMerchant(m)
	}
	st.ms.reset(start)
}

// ---- payments

const paymentCols = `id, api_key, terminal_id, ext_id, amount, method, bank_code, bank_name, bank_country,
	req_type, req_value, holder, country, currency, amount_local, client_id, notify_url, token, status,
	valid_until, created_at, usdt_rate, payment_url, receipt, dispute`

type storedDispute struct {
	Amount     *string `json:"amount,omitempty"`
	ReceiptURL string  `json:"receipt_url"`
	Comment    string  `json:"comment"`
	CreatedAt  int64   `json:"created_at"`
}

func (st *SQL) scanPayment(r interface{ Scan(...any) error }) (*payment, error) {
	var p payment
	var apiKey, termID, amount, amountLoc, rate string
	var validUntil, createdAt int64
	var disp sql.NullString
	if err := r.Scan(&p.ID, &apiKey, &termID, &p.ExtID, &amount, &p.Method, &p.Bank.Code, &p.Bank.Name, &p.Bank.Country,
		&p.ReqType, &p.ReqValue, &p.Holder, &p.Country, &p.Currency, &amountLoc, &p.ClientID, &p.NotifyURL, &p.Token,
		&p.Status, &validUntil, &createdAt, &rate, &p.PaymentURL, &p.Receipt, &disp); err != nil {
		return nil, err
	}
	p.Bank.IsActive = true // it offered requisites when the payment was made
	if b, ok := findBank(st.deps.Banks, p.Bank.Code); ok {
		p.Bank = b
	}
	p.Amount, p.AmountLocal, p.USDTRate = st.undec(amount), st.undec(amountLoc), st.undec(rate)
	p.ValidUntil, p.CreatedAt = unnanos(validUntil), unnanos(createdAt)
	if disp.Valid {
		var d storedDispute
		if err := json.Unmarshal([]byte(disp.String), &d); err != nil {
			return nil, fmt.Errorf("stored dispute of payment %s: %w", p.ID, err)
		}
		p.Dispute = &dispute{ReceiptURL: d.ReceiptURL, Comment: d.Comment, CreatedAt: unnanos(d.CreatedAt)}
		if d.Amount != nil {
			a := st.undec(*d.Amount)
			p.Dispute.Amount = &a
		}
	}
	p.Merchant = st.ms.get(apiKey)
	if p.Merchant == nil {
		return nil, nil // a merchant no longer configured: its payments are out of reach
	}
	p.Terminal = p.Merchant.Terminal(termID)
	if p.Terminal == nil {
		return nil, nil
	}
	return &p, nil
}

func (st *SQL) loadPayments(where string, args ...any) []*payment {
	var out []*payment
	st.rows(func(r *sql.Rows) error {
		p, err := st.scanPayment(r)
		if err != nil {
			return err
		}
		if p != nil {
			st.saw(p.ID)
			out = append(out, sectionCopy(&st.pm, p.ID, p))
		}
		return nil
	}, "SELECT "+paymentCols+" FROM payments "+where, args...)
	return out
}

// Payment: see ledger.Txn.
func (st *SQL) Payment(id string) (p *payment) {
	if p := st.pm[id]; p != nil {
		return p
	}
	st.lookupBy(func() { p = firstOf(st.loadPayments("WHERE id = ?", id)) })
	return p
}

// PaymentByExt: see ledger.Txn.
func (st *SQL) PaymentByExt(m *merchant, extID string) (p *payment) {
	st.lookupBy(func() { p = firstOf(st.loadPayments("WHERE api_key = ? AND ext_id = ?", m.APIKey, extID)) })
	return p
}

func (st *SQL) disputeJSON(p *payment) any {
	if p.Dispute == nil {
		return nil
	}
	d := storedDispute{ReceiptURL: p.Dispute.ReceiptURL, Comment: p.Dispute.Comment, CreatedAt: nanos(p.Dispute.CreatedAt)}
	if p.Dispute.Amount != nil {
		a := decText(*p.Dispute.Amount)
		d.Amount = &a
	}
	b, _ := json.Marshal(d)
	return string(b)
}

// AddPayment: see ledger.Txn.
func (st *SQL) AddPayment(p *payment) {
	sectionCopy(&st.pm, p.ID, p)
	st.pendingUntil(p)
	st.execRow(p.ID, `INSERT INTO payments (`+paymentCols+`, amount_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.ID, p.Merchant.APIKey, p.Terminal.ID, p.ExtID, decText(p.Amount), p.Method, p.Bank.Code, p.Bank.Name, p.Bank.Country,
		p.ReqType, p.ReqValue, p.Holder, p.Country, p.Currency, decText(p.AmountLocal), p.ClientID, p.NotifyURL, p.Token,
		p.Status, nanos(p.ValidUntil), nanos(p.CreatedAt), decText(p.USDTRate), p.PaymentURL, p.Receipt, st.disputeJSON(p),
		ledger.AmountKey(p.Amount))
}

// SavePayment: see ledger.Txn.
func (st *SQL) SavePayment(p *payment) {
	st.pendingUntil(p)
	st.execRow(p.ID, `UPDATE payments SET status = ?, receipt = ?, dispute = ? WHERE id = ?`,
		p.Status, p.Receipt, st.disputeJSON(p), p.ID)
}

// PendingWithAmount: see ledger.Txn.
func (st *SQL) PendingWithAmount(m *merchant, key string) int {
	var n int
	// Counted up to the cap only: the rule asks "at the cap yet?", and a
	// count of every match would make each create slower than the last.
	// The cap is in the text, not bound: SQLite prepares a statement whose
	// LIMIT is a parameter again at every bind.
	st.one([]any{&n}, `SELECT count(*) FROM (SELECT 1 FROM payments WHERE api_key = ? AND status = ? AND amount_key = ? LIMIT `+
		strconv.Itoa(st.deps.MaxSamePending)+`)`, m.APIKey, statusPending, key)
	return n
}

// DueExpiry: see ledger.Txn. It and NextExpiry run in every API
// section. Their answers do not reach a reader's: what expires is changed
// (the section then waits for its commit), and the next expiry only arms
// a timer that looks again. So they are lookups: a reader waits only for
// the changed rows they load.
func (st *SQL) DueExpiry(now time.Time, limit int) (due []*payment) {
	if st.nextKnown && (st.next.IsZero() || now.Before(st.next)) {
		return nil
	}
	st.nextKnown = false // the caller moves what is due: nextExpiry asks the file again
	st.lookupBy(func() {
		due = st.loadPayments("WHERE status = ? AND valid_until <= ? ORDER BY valid_until, id LIMIT ?",
			statusPending, now.UnixNano(), limit)
	})
	return due
}

// NextExpiry: see ledger.Txn.
func (st *SQL) NextExpiry() (next time.Time, ok bool) {
	if st.nextKnown {
		return st.next, !st.next.IsZero()
	}
	var n sql.NullInt64
	st.lookupBy(func() {
		ok = st.one([]any{&n}, `SELECT min(valid_until) FROM payments WHERE status = ?`, statusPending)
	})
	if ok && n.Valid {
		next = unnanos(n.Int64)
	}
	st.next, st.nextKnown = next, st.err == nil
	return next, !next.IsZero()
}

// pendingUntil keeps next a lower bound when p is PENDING: a payment
// leaving PENDING only moves the earliest valid_until later, which makes
// next early, and an early answer costs one query (dueExpiry) or one timer
// that finds nothing due and asks again.
func (st *SQL) pendingUntil(p *payment) {
	if st.nextKnown && p.Status == statusPending && (st.next.IsZero() || p.ValidUntil.Before(st.next)) {
		st.next = p.ValidUntil
	}
}

// RecentPayments: see ledger.Txn.
func (st *SQL) RecentPayments(limit int) []*payment {
	return st.loadPayments("ORDER BY created_at DESC, ext_id, id LIMIT ?", limit)
}

// ---- payouts

const payoutCols = `id, api_key, ext_id, amount, method, requisites, holder_name, bank, notify_url, status,
	provider_order_id, created_at, completed_at`

func (st *SQL) loadPayouts(where string, args ...any) []*payout {
	var out []*payout
	st.rows(func(r *sql.Rows) error {
		var p payout
		var apiKey, amount string
		var created, completed int64
		if err := r.Scan(&p.ID, &apiKey, &p.ExtID, &amount, &p.Method, &p.Requisites, &p.HolderName, &p.Bank,
			&p.NotifyURL, &p.Status, &p.ProviderOrderID, &created, &completed); err != nil {
			return err
		}
		p.Amount, p.CreatedAt, p.CompletedAt = st.undec(amount), unnanos(created), unnanos(completed)
		if p.Merchant = st.ms.get(apiKey); p.Merchant == nil {
			return nil
		}
		st.saw(p.ID)
		out = append(out, sectionCopy(&st.po, p.ID, &p))
		return nil
	}, "SELECT "+payoutCols+" FROM payouts "+where, args...)
	return out
}

// Payout: see ledger.Txn.
func (st *SQL) Payout(id string) (p *payout) {
	if p := st.po[id]; p != nil {
		return p
	}
	st.lookupBy(func() { p = firstOf(st.loadPayouts("WHERE id = ?", id)) })
	return p
}

// PayoutByExt: see ledger.Txn.
func (st *SQL) PayoutByExt(m *merchant, extID string) (p *payout) {
	st.lookupBy(func() { p = firstOf(st.loadPayouts("WHERE api_key = ? AND ext_id = ?", m.APIKey, extID)) })
	return p
}

// AddPayout: see ledger.Txn.
func (st *SQL) AddPayout(p *payout) {
	sectionCopy(&st.po, p.ID, p)
	st.execRow(p.ID, `INSERT INTO payouts (`+payoutCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.ID, p.Merchant.APIKey, p.ExtID, decText(p.Amount), p.Method, p.Requisites, p.HolderName, p.Bank, p.NotifyURL,
		p.Status, p.ProviderOrderID, nanos(p.CreatedAt), nanos(p.CompletedAt))
}

// SavePayout: see ledger.Txn.
func (st *SQL) SavePayout(p *payout) {
	st.execRow(p.ID, `UPDATE payouts SET status = ?, provider_order_id = ?, completed_at = ? WHERE id = ?`,
		p.Status, p.ProviderOrderID, nanos(p.CompletedAt), p.ID)
}

// payoutWhere is the query of f.
func payoutWhere(f ledger.PayoutFilter, apiKey string) (string, []any) {
	where, args := "WHERE api_key = ?", []any{apiKey}
	if f.Status != "" {
		where += " AND status = ?"
		args = append(args, f.Status)
	}
	if !f.From.IsZero() {
		where += " AND created_at >= ?"
		args = append(args, boundNanos(f.From))
	}
	if !f.To.IsZero() {
		where += " AND created_at <= ?"
		args = append(args, boundNanos(f.To))
	}
	return where, args
}

// Beyond these an int64 of nanoseconds cannot hold a time (UnixNano's
// answer is undefined): a bound past them, as GET /v1/payouts?to=9999-12-31
// gives, is clamped to the int64 at that end, which orders the same way
// against every created_at the file can hold.
var (
	minNanosTime = time.Unix(0, math.MinInt64)
	maxNanosTime = time.Unix(0, math.MaxInt64)
)

// boundNanos is t as a created_at bound.
func boundNanos(t time.Time) int64 {
	switch {
	case t.Before(minNanosTime):
		return math.MinInt64
	case t.After(maxNanosTime):
		return math.MaxInt64
	}
	return t.UnixNano()
}

// ListPayouts: see ledger.Txn.
func (st *SQL) ListPayouts(m *merchant, f ledger.PayoutFilter, limit, offset int) ([]*payout, int) {
	where, args := payoutWhere(f, m.APIKey)
	var total int
	st.one([]any{&total}, "SELECT count(*) FROM payouts "+where, args...)
	if total <= offset || limit == 0 {
		return nil, total
	}
	return st.loadPayouts(where+" ORDER BY seq LIMIT ? OFFSET ?", append(args, limit, offset)...), total
}

// RecentPayouts: see ledger.Txn.
func (st *SQL) RecentPayouts(limit int) []*payout {
	return st.loadPayouts("ORDER BY seq DESC LIMIT ?", limit)
}

// ---- withdrawals

const withdrawalCols = `id, api_key, terminal_id, amount, fee, held, address, tx_hash, status, created_at, updated_at`

func (st *SQL) loadWithdrawals(where string, args ...any) []*withdrawal {
	var out []*withdrawal
	st.rows(func(r *sql.Rows) error {
		var w withdrawal
		var apiKey, termID, amount, fee, held string
		var created, updated int64
		if err := r.Scan(&w.ID, &apiKey, &termID, &amount, &fee, &held, &w.Address, &w.TxHash, &w.Status,
			&created, &updated); err != nil {
			return err
		}
		w.Amount, w.Fee, w.Held = st.undec(amount), st.undec(fee), st.undec(held)
		w.CreatedAt, w.UpdatedAt = unnanos(created), unnanos(updated)
		if w.Merchant = st.ms.get(apiKey); w.Merchant == nil {
			return nil
		}
		if w.Terminal = w.Merchant.Terminal(termID); w.Terminal == nil {
			return nil
		}
		st.saw(w.ID)
		out = append(out, sectionCopy(&st.wd, w.ID, &w))
		return nil
	}, "SELECT "+withdrawalCols+" FROM withdrawals "+where, args...)
	return out
}

// Withdrawal: see ledger.Txn.
func (st *SQL) Withdrawal(id string) (w *withdrawal) {
	if w := st.wd[id]; w != nil {
		return w
	}
	st.lookupBy(func() { w = firstOf(st.loadWithdrawals("WHERE id = ?", id)) })
	return w
}

// AddWithdrawal: see ledger.Txn.
func (st *SQL) AddWithdrawal(w *withdrawal) {
	sectionCopy(&st.wd, w.ID, w)
	st.execRow(w.ID, `INSERT INTO withdrawals (`+withdrawalCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		w.ID, w.Merchant.APIKey, w.Terminal.ID, decText(w.Amount), decText(w.Fee), decText(w.Held), w.Address, w.TxHash, w.Status,
		nanos(w.CreatedAt), nanos(w.UpdatedAt))
}

// SaveWithdrawal: see ledger.Txn.
func (st *SQL) SaveWithdrawal(w *withdrawal) {
	st.execRow(w.ID, `UPDATE withdrawals SET status = ?, tx_hash = ?, updated_at = ? WHERE id = ?`,
		w.Status, w.TxHash, nanos(w.UpdatedAt), w.ID)
}

// RecentWithdrawals: see ledger.Txn.
func (st *SQL) RecentWithdrawals(limit int) []*withdrawal {
	return st.loadWithdrawals("ORDER BY created_at DESC, id LIMIT ?", limit)
}

// ---- counts and the autopilot

func (st *SQL) countBy(table, apiKey string) map[string]int {
	out := map[string]int{}
	st.rows(func(r *sql.Rows) error {
		var status string
		var n int
		if err := r.Scan(&status, &n); err != nil {
			return err
		}
		out[status] = n
		return nil
	}, "SELECT status, count(*) FROM "+table+" WHERE api_key = ? GROUP BY status", apiKey)
	return out
}

// Counts: see ledger.Txn.
func (st *SQL) Counts(m *merchant) (map[string]int, map[string]int, map[string]int) {
	return st.countBy("payments", m.APIKey), st.countBy("payouts", m.APIKey), st.countBy("withdrawals", m.APIKey)
}

// InFlight: see ledger.Txn. In creation order, as the memory store
// answers: without ORDER BY the order would be whichever index SQLite
// picks.
func (st *SQL) InFlight() ([]*payment, []*payout, []*withdrawal) {
	return st.loadPayments("WHERE status IN (?, ?, ?) ORDER BY created_at, id", statusPending, statusProcessing, statusDispute),
		st.loadPayouts("WHERE status IN (?, ?) ORDER BY seq", ledger.PayoutPending, ledger.PayoutProcessing),
		st.loadWithdrawals("WHERE status IN (?, ?) ORDER BY created_at, id", ledger.WithdrawalPending, ledger.WithdrawalProcessing)
}
