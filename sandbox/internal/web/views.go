package web

import (
	"github.com/paykit-dev/paykit-go/sandbox/internal/autopilot"
)

// NavItem is one link of the navigation bar.
type NavItem struct {
	Title, Href string
	Current     bool
}

// Data is everything a dashboard page shows; each page fills its part.
type Data struct {
	Title      string
	Page       string
	Nav        []NavItem
	Now        string
	Token      string
	Refresh    int
	RefreshArg string // the refresh value the forms carry back
	// RefreshOffHref and RefreshOnHref are absolute links to this page,
	// never relative: an error page's own URL is a POST-only action.
	RefreshOffHref, RefreshOnHref string
	Error                         string
	// Unsigned names the merchants that accept unsigned requests (a banner
	// says so).
	Unsigned []string

	Payments    []Payment
	Payouts     []Payout
	Withdrawals []Withdrawal
	Merchants   []Merchant
	Deliveries  []Delivery
	Faults      []Fault
	// TestValueGroups fill the test values page.
	TestValueGroups []TestValueGroup
	// Autopilot is the autopilot's mode for every page's texts; nil when
	// it is off.
	Autopilot *Autopilot
	// Backlog is how many webhooks wait to be delivered (the sandbox's State.Webhooks).
	Backlog int
	// WebhookFaults says in words which delivery faults are on (Faults),
	// empty when none.
	WebhookFaults string
}

// Autopilot is what the pages say of a running autopilot: its delays,
// as a person reads them, and whether test values choose outcomes.
type Autopilot struct {
	Steps                              int // scheduled and not yet run
	Verify, Review, Payout, Withdrawal string
	IgnoreTestValues                   bool
}

// TestValueGroup is the test values of one resource and field, in
// TestValues order.
type TestValueGroup struct {
	Title string
	Rows  []autopilot.TestValue
}

// TestValueGroups groups the test values by resource and field for the page:
// a list a phone can read, where a five-column table could not.
func TestValueGroups(values []autopilot.TestValue) []TestValueGroup {
	plural := map[string]string{"payment": "Payments", "dispute": "Disputes", "payout": "Payouts", "withdrawal": "Withdrawals"}
	var out []TestValueGroup
	for _, v := range values {
		title := plural[v.Resource] + ": the " + v.Field
		if len(out) == 0 || out[len(out)-1].Title != title {
			out = append(out, TestValueGroup{Title: title})
		}
		out[len(out)-1].Rows = append(out[len(out)-1].Rows, v)
	}
	return out
}

// Payment is one row of the payments page, every value already in words
// (MoneyText, MethodText, Time) and the card or phone number masked.
type Payment struct {
	ID, ShortID, ExtID, Amount, Method, Status string
	AmountLocal                                string // what a CROSS_BORDER payer sends: "84,002.80 KZT"
	ReqLabel, ReqMasked, Bank                  string
	Created, CreatedTime                       string
	ValidUntil, ValidUntilTime, TimeLeft       string
	Expired                                    bool
	Dispute                                    *Dispute
	CanVerify, CanReview                       bool
}

// Dispute is a payment's opened dispute, under its row.
type Dispute struct {
	Amount, Comment, ReceiptURL, Created, CreatedTime string
}

// Payout is one row of the payouts page; Moves are the statuses its
// buttons offer (the ledger's table of moves).
type Payout struct {
	ID, ShortID, ExtID, Amount, Method, ReqMasked, Holder, Bank, Status string
	ProviderOrderID, Created, CreatedTime, Completed                    string
	Moves                                                               []string
}

// Withdrawal is one row of the withdrawals page; Moves as for Payout.
type Withdrawal struct {
	ID, ShortID, Terminal, Amount, Fee, Address, TxHash, Status string
	Created, CreatedTime, Updated                               string
	Moves                                                       []string
}

// Merchant is one merchant of the terminals page, named without its API
// key (MerchantLabel).
type Merchant struct {
	Name      string // Merchant.Name
	Label     string
	Terminals []Terminal
}

// Terminal is one terminal of a Merchant, its balances in words.
type Terminal struct {
	ID, Name, Balance, Frozen, Fee string
	Active                         bool
}

// Delivery is one webhook of the webhooks page with its attempts.
type Delivery struct {
	ID, ExtID, ResendOf             string
	Faults                          string // the faults it was given, in words; empty for none
	Resource, Status, Target, State string
	Payload                         string // indented JSON, card and phone numbers masked
	PayloadSize                     int
	Attempts                        []Attempt
}

// Attempt is one delivery attempt and what it got back, in words.
type Attempt struct {
	At, Answer string
	OK         bool
}

// Fault is one armed fault of the faults page; Detail says what it does.
type Fault struct {
	Method, Path, Mode, Detail string
	Count                      int
}

// PayData is what the payment page shows. Amounts come twice: in words
// for the eye (MoneyText: "1,500.50 RUB") and as bare digits for the copy
// buttons ("1500.50"), which a bank app's amount field accepts.
type PayData struct {
	// Merchant is the payee's Merchant.Name.
	Merchant                                   string
	ExtID, Amount, Status, StatusClass, Method string
	AmountText, AmountRUBText, AmountCopy      string
	ReqLabel, ReqLabelLower, ReqValue          string
	BankName, Holder                           string
	AmountLocal, Currency                      string
	Pending                                    bool
	TimeLeft, PayBy, Action                    string
	// Token is the payment's form token (PageToken).
	Token string
}
