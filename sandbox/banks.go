package sandbox

import (
	"slices"
)

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

type bank = Bank

// DefaultBanks returns the bank list a Config without Banks serves.
// gazprom is inactive on purpose: creating a payment with bank "gazprom"
// answers PAY_004, the way a real bank with no free requisites does.
func DefaultBanks() []Bank { return slices.Clone(defaultBanks) }

var defaultBanks = []bank{
	{"sber", "Sberbank", true, "RU"},
	{"tinkoff", "T-Bank", true, "RU"},
	{"vtb", "VTB", true, "RU"},
	{"alfa", "Alfa-Bank", true, "RU"},
	{"raif", "Raiffeisenbank", true, "RU"},
	{"gazprom", "Gazprombank", false, "RU"},
	{"eskhata", "Bank Eskhata", true, "TJ"},
	{"amonatbonk", "Amonatbonk", true, "TJ"},
	{"dushanbecity", "Dushanbe City Bank", true, "TJ"},
	{"kaspi", "Kaspi Bank", true, "KZ"},
	{"halyk", "Halyk Bank", true, "KZ"},
	{"jusan", "Jusan Bank", true, "KZ"},
	{"kapitalbank", "Kapitalbank", true, "UZ"},
	{"hamkorbank", "Hamkorbank", true, "UZ"},
	{"ipakyuli", "Ipak Yuli Bank", true, "UZ"},
	{"mbank", "MBank", true, "KG"},
	{"optima", "Optima Bank", true, "KG"},
	{"demir", "Demir Bank", true, "KG"},
}
