package ledger

// DefaultBanks is the bank list a sandbox.Config without Banks serves
// (sandbox.DefaultBanks hands out copies). gazprom is inactive on purpose:
// a payment that asks for it answers PAY_004.
var DefaultBanks = []Bank{
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
