package sandbox

import "github.com/paykit-dev/paykit-go/sandbox/internal/ledger"

// Bank is one entry of GET /v1/banks (Config.Banks). Country is an extra
// field of the sandbox ("RU" for Russian banks) so that a client can tell
// which country a cross-border bank code belongs to; the spec's clients
// ignore it.
type Bank struct {
	// Code is what a create request's bank field names; unique.
	Code string `json:"code"`
	// Name is the bank's display name.
	Name string `json:"name"`
	// IsActive: an inactive bank is listed, but a payment that asks for it
	// answers PAY_004 (no requisites).
	IsActive bool `json:"is_active"`
	// Country is "RU", or TJ, KZ, UZ or KG for a cross-border bank; a bank
	// of any other country is listed but never serves a payment.
	Country string `json:"country"`
}

// DefaultBanks returns the bank list a Config without Banks serves.
// gazprom is inactive on purpose: creating a payment with bank "gazprom"
// answers PAY_004, the way a real bank with no free requisites does.
func DefaultBanks() []Bank {
	out := make([]Bank, len(ledger.DefaultBanks))
	for i, b := range ledger.DefaultBanks {
		out[i] = Bank(b)
	}
	return out
}
