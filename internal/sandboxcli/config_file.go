package sandboxcli

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go/internal/mask"
	"github.com/paykit-dev/paykit-go/internal/tokenstrength"
	"github.com/paykit-dev/paykit-go/sandbox"
)

// FileConfig is the -config file (JSON) and the shape -print-config
// prints. Every key is optional; an unknown key is refused with its
// line:column, so that a typo never silently falls back to a default.
// Flags given on the command line or through PAYKIT_SANDBOX_* variables
// override the file.
type FileConfig struct {
	// Addr is the listen address (-addr).
	Addr string `json:"addr,omitempty"`
	// AllowRemote is -allow-remote.
	AllowRemote bool `json:"allow_remote,omitempty"`
	// ControlToken is -control-token; best given as a "${NAME}" reference.
	ControlToken string `json:"control_token,omitempty"`
	// LogFormat is -log-format: text or json.
	LogFormat string `json:"log_format,omitempty"`
	// DB is -db: the SQLite file that keeps the state across restarts. A
	// relative path is taken from the working directory, as the flag's is.
	DB string `json:"db,omitempty"`
	// Merchants are the accounts; empty means one merchant built from
	// -api-key, -secret, -start-balance, -withdrawal-fee and
	// -accept-unsigned.
	Merchants []FileMerchant `json:"merchants,omitempty"`
	// USDTRate is RUB per 1 USDT (sandbox.Config.USDTRate).
	USDTRate decimal.Decimal `json:"usdt_rate"`
	// LocalRates are local units per 1 RUB by country, TJ, KZ, UZ or KG
	// (sandbox.Config.LocalRates); the others keep their defaults.
	LocalRates map[string]decimal.Decimal `json:"local_rates,omitempty"`
	// Banks replace the bank list (sandbox.Config.Banks); empty keeps the
	// default list.
	Banks []FileBank `json:"banks,omitempty"`
	// PaymentValidity is -payment-validity, e.g. "20m".
	PaymentValidity Duration `json:"payment_validity"`
	// MaxSameAmount is -max-same-amount.
	MaxSameAmount int `json:"max_same_amount"`
	// WebhookAttempts is -webhook-attempts.
	WebhookAttempts int `json:"webhook_attempts"`
	// WebhookRetryWait is -webhook-retry-wait, e.g. "1s".
	WebhookRetryWait Duration `json:"webhook_retry_wait"`
	// WebhookConcurrency is -webhook-concurrency.
	WebhookConcurrency int `json:"webhook_concurrency"`
	// WebhookPerReceiver is -webhook-per-receiver.
	WebhookPerReceiver int `json:"webhook_per_receiver"`
	// WebhookFaults is -webhook-faults, in its syntax:
	// "duplicate=0.1,reorder=0.1,delay=2s,seed=42".
	WebhookFaults string `json:"webhook_faults,omitempty"`
	// Autopilot is -autopilot and its delays.
	Autopilot FileAutopilot `json:"autopilot"`
}

// FileMerchant is one merchant of the -config file. APIKey and Secret may
// be environment references, "${NAME}", read from variable NAME at start,
// so the file can be committed without them; a reference to an unset or
// empty variable stops the start.
type FileMerchant struct {
	// APIKey is what X-Identity carries; unique, non-empty.
	APIKey string `json:"api_key"`
	// Secret is the HMAC signing secret.
	Secret string `json:"secret"`
	// AcceptUnsigned is sandbox.Merchant.AcceptUnsigned: requests without
	// a valid X-Signature pass (for a validation proxy); loud in the log.
	AcceptUnsigned bool `json:"accept_unsigned,omitempty"`
	// Terminals are the merchant's terminals; empty means the two of
	// sandbox.DefaultMerchant.
	Terminals []FileTerminal `json:"terminals,omitempty"`
}

// FileTerminal is one terminal of a FileMerchant.
type FileTerminal struct {
	// ID is the terminal id, unique within its merchant.
	ID string `json:"id"`
	// Name is the display name; default the id.
	Name string `json:"name,omitempty"`
	// Balance is the starting available USDT.
	Balance decimal.Decimal `json:"balance"`
	// BalanceFrozen is the starting frozen USDT.
	BalanceFrozen decimal.Decimal `json:"balance_frozen"`
	// WithdrawalFee is the USDT fee per withdrawal.
	WithdrawalFee decimal.Decimal `json:"withdrawal_fee"`
	// Inactive marks a terminal that serves no payments or withdrawals;
	// terminals are active unless it is set.
	Inactive bool `json:"inactive,omitempty"`
}

// FileBank is one bank of GET /v1/banks (sandbox.Bank).
type FileBank struct {
	// Code is what a payment's bank field names; unique.
	Code string `json:"code"`
	// Name is the display name.
	Name string `json:"name"`
	// Country is RU, or TJ, KZ, UZ or KG for a cross-border bank.
	Country string `json:"country"`
	// Inactive lists the bank but makes a payment that asks for it answer
	// PAY_004; banks are active unless it is set.
	Inactive bool `json:"inactive,omitempty"`
}

// FileAutopilot is sandbox.Autopilot with durations written as "10s".
type FileAutopilot struct {
	// Enabled is -autopilot.
	Enabled bool `json:"enabled"`
	// PayerDelay is -autopilot-payer-delay.
	PayerDelay Duration `json:"payer_delay"`
	// VerifyDelay is -autopilot-verify-delay.
	VerifyDelay Duration `json:"verify_delay"`
	// ReviewDelay is -autopilot-review-delay.
	ReviewDelay Duration `json:"review_delay"`
	// PayoutDelay is -autopilot-payout-delay.
	PayoutDelay Duration `json:"payout_delay"`
	// WithdrawalDelay is -autopilot-withdrawal-delay.
	WithdrawalDelay Duration `json:"withdrawal_delay"`
	// IgnoreTestValues is -autopilot-ignore-test-values.
	IgnoreTestValues bool `json:"ignore_test_values,omitempty"`
}

// Duration is a time.Duration written as a Go duration string ("1m30s").
type Duration struct{ time.Duration }

// UnmarshalJSON reads "1m30s".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New(`want a duration string such as "10s"`)
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return fmt.Errorf("want a non-negative duration such as \"10s\", not %q", s)
	}
	d.Duration = v
	return nil
}

// MarshalJSON writes "1m30s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// config is the effective configuration: what -print-config shows (file,
// references unresolved) and what the sandbox is built from.
type config struct {
	file      FileConfig
	sandbox   sandbox.Config
	fromFlags bool // the one merchant came from -api-key and -secret
	// showSecret: the banner may print the flags' merchant's secret, since
	// it was typed on the command line or is the documented default.
	showSecret bool
}

// effective merges the command line (and the variables applyEnv set), the
// file and the defaults, in that order of precedence, and checks the
// result. Every refusal is a UsageError.
func effective(f *flags, env environment) (*config, error) {
	set := map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	var fc FileConfig
	if *f.configPath != "" {
		var err error
		if fc, err = loadConfigFile(*f.configPath); err != nil {
			return nil, &UsageError{msg: err.Error()}
		}
	}
	// A flag given explicitly (or through its variable) overrides the
	// file; the file overrides a flag's default.
	str := func(name string, dst *string, v string) {
		if set[name] || *dst == "" {
			*dst = v
		}
	}
	num := func(name string, dst *int, v int) {
		if set[name] || *dst == 0 {
			*dst = v
		}
	}
	dur := func(name string, dst *Duration, v time.Duration) {
		if set[name] || dst.Duration == 0 {
			dst.Duration = v
		}
	}
	boolean := func(name string, dst *bool, v bool) {
		if set[name] {
			*dst = v
		}
	}
	str("addr", &fc.Addr, *f.addr)
	boolean("allow-remote", &fc.AllowRemote, *f.allowRemote)
	if set["control-token"] {
		fc.ControlToken = *f.controlToken
	}
	str("log-format", &fc.LogFormat, *f.logFormat)
	str("db", &fc.DB, *f.db)
	dur("payment-validity", &fc.PaymentValidity, *f.ttl)
	num("max-same-amount", &fc.MaxSameAmount, *f.samePending)
	num("webhook-attempts", &fc.WebhookAttempts, *f.attempts)
	dur("webhook-retry-wait", &fc.WebhookRetryWait, *f.retryWait)
	num("webhook-concurrency", &fc.WebhookConcurrency, *f.hookTotal)
	num("webhook-per-receiver", &fc.WebhookPerReceiver, *f.hookPer)
	str("webhook-faults", &fc.WebhookFaults, *f.hookFaults)
	ap := &fc.Autopilot
	boolean("autopilot", &ap.Enabled, *f.autopilot)
	boolean("autopilot-ignore-test-values", &ap.IgnoreTestValues, *f.ignoreTV)
	dur("autopilot-payer-delay", &ap.PayerDelay, *f.payerDelay)
	dur("autopilot-verify-delay", &ap.VerifyDelay, *f.verifyDelay)
	dur("autopilot-review-delay", &ap.ReviewDelay, *f.reviewDelay)
	dur("autopilot-payout-delay", &ap.PayoutDelay, *f.payoutDelay)
	dur("autopilot-withdrawal-delay", &ap.WithdrawalDelay, *f.wdrDelay)
	if fc.USDTRate.IsZero() {
		fc.USDTRate = sandbox.DefaultUSDTRate
	}
	rates := sandbox.DefaultLocalRates()
	for c, r := range fc.LocalRates {
		if _, ok := rates[c]; !ok || !r.IsPositive() {
			return nil, usage("local_rates.%s: want one of TJ, KZ, UZ, KG with a positive rate", c)
		}
		rates[c] = r
	}
	fc.LocalRates = rates

	fromFlags := len(fc.Merchants) == 0
	if fromFlags {
		if *f.apiKey == "" || *f.secret == "" {
			return nil, usage("-api-key and -secret must not be empty")
		}
		m := sandbox.DefaultMerchant(*f.apiKey, *f.secret)
		fm := FileMerchant{APIKey: *f.apiKey, Secret: *f.secret, AcceptUnsigned: *f.unsigned}
		for i, t := range m.Terminals {
			if i == 0 {
				t.Balance = f.balance.d
			}
			fm.Terminals = append(fm.Terminals, FileTerminal{ID: t.ID, Name: t.Name, Balance: t.Balance,
				BalanceFrozen: t.BalanceFrozen, WithdrawalFee: f.fee.d, Inactive: !t.IsActive})
		}
		fc.Merchants = []FileMerchant{fm}
	} else {
		for _, name := range []string{"api-key", "secret", "start-balance", "withdrawal-fee", "accept-unsigned"} {
			if set[name] {
				return nil, usage("-%s (or %s) cannot be combined with merchants in -config: describe them in the file", name, envName(name))
			}
		}
	}
	if fc.PaymentValidity.Duration <= 0 || fc.MaxSameAmount <= 0 || fc.WebhookAttempts <= 0 || fc.WebhookRetryWait.Duration <= 0 ||
		fc.WebhookConcurrency <= 0 || fc.WebhookPerReceiver <= 0 {
		return nil, usage("-payment-validity, -max-same-amount, -webhook-attempts, -webhook-retry-wait, " +
			"-webhook-concurrency and -webhook-per-receiver must be positive")
	}
	if !fc.USDTRate.IsPositive() {
		return nil, usage("usdt_rate must be positive")
	}
	if fc.LogFormat != "text" && fc.LogFormat != "json" {
		return nil, usage("-log-format must be text or json, not %q", fc.LogFormat)
	}
	faults, err := sandbox.ParseWebhookFaults(fc.WebhookFaults)
	if err != nil {
		return nil, usage("-webhook-faults (%s, webhook_faults): %v", envName("webhook-faults"), err)
	}
	merchants, err := fc.merchants(env)
	if err != nil {
		return nil, &UsageError{msg: err.Error()}
	}
	banks, err := fc.banks()
	if err != nil {
		return nil, &UsageError{msg: err.Error()}
	}
	token, err := resolve(fc.ControlToken, env)
	if err != nil {
		return nil, usage("control_token: %v", err)
	}
	if token != "" {
		if err := tokenstrength.Check(token); err != nil {
			return nil, usage("-control-token (PAYKIT_SANDBOX_CONTROL_TOKEN, control_token): %v", err)
		}
	}
	if fc.AllowRemote && token == "" {
		return nil, usage("-allow-remote needs a control token: set -control-token or PAYKIT_SANDBOX_CONTROL_TOKEN " +
			"(anyone who reaches a remote sandbox could otherwise reset it and settle its money)")
	}
	return &config{file: fc, fromFlags: fromFlags, sandbox: sandbox.Config{
		Merchants:            merchants,
		PaymentTTL:           fc.PaymentValidity.Duration,
		USDTRate:             fc.USDTRate,
		LocalRates:           fc.LocalRates,
		Banks:                banks,
		MaxSamePendingAmount: fc.MaxSameAmount,
		WebhookMaxAttempts:   fc.WebhookAttempts,
		WebhookRetryWait:     fc.WebhookRetryWait.Duration,
		WebhookConcurrency:   fc.WebhookConcurrency,
		WebhookPerReceiver:   fc.WebhookPerReceiver,
		WebhookFaults:        faults,
		AllowRemote:          fc.AllowRemote,
		ControlToken:         token,
		DBPath:               fc.DB,
		Autopilot: sandbox.Autopilot{Enabled: ap.Enabled, PayerDelay: ap.PayerDelay.Duration, VerifyDelay: ap.VerifyDelay.Duration,
			ReviewDelay: ap.ReviewDelay.Duration, PayoutDelay: ap.PayoutDelay.Duration, WithdrawalDelay: ap.WithdrawalDelay.Duration,
			IgnoreTestValues: ap.IgnoreTestValues},
	}}, nil
}

// maxConfigBytes bounds the file: a configuration is a few KiB.
const maxConfigBytes = 1 << 20

// loadConfigFile reads and checks path. Errors name the file and the
// line:column of the offending key or value, never a value itself (it may
// be a secret).
func loadConfigFile(path string) (FileConfig, error) {
	var fc FileConfig
	f, err := os.Open(path)
	if err != nil {
		return fc, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return fc, err
	}
	if len(data) > maxConfigBytes {
		return fc, fmt.Errorf("%s: larger than %d bytes", path, maxConfigBytes)
	}
	if err := parseConfig(data, &fc); err != nil {
		return fc, fmt.Errorf("%s:%w", path, err)
	}
	return fc, nil
}

// parseConfig refuses unknown keys with their position, then decodes.
// Errors start with "line:column: ".
func parseConfig(data []byte, fc *FileConfig) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := checkKeys(dec, data, reflect.TypeOf(*fc)); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%s: data after the configuration object", pos(data, dec.InputOffset()))
	}
	dec = json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(fc); err != nil {
		var te *json.UnmarshalTypeError
		var se *json.SyntaxError
		switch {
		case errors.As(err, &te):
			return fmt.Errorf("%s: %s: want %s", pos(data, te.Offset), te.Field, te.Type)
		case errors.As(err, &se):
			return fmt.Errorf("%s: %v", pos(data, se.Offset), se)
		}
		// A value's own UnmarshalJSON failed (a duration, a decimal): the
		// decoder stopped just after it.
		return fmt.Errorf("%s: %v", pos(data, dec.InputOffset()), err)
	}
	return nil
}

var unmarshaler = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()

// checkKeys walks one JSON value against t and refuses a key that no field
// of t's structs names. Values of types with their own UnmarshalJSON are
// not walked: they check themselves at decode.
func checkKeys(dec *json.Decoder, data []byte, t reflect.Type) error {
	tok, err := dec.Token()
	if err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("%s: %v", pos(data, se.Offset), se)
		}
		return fmt.Errorf("%s: %v", pos(data, dec.InputOffset()), err)
	}
	if t != nil && reflect.PointerTo(t).Implements(unmarshaler) {
		t = nil
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	switch d {
	case '{':
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return fmt.Errorf("%s: %v", pos(data, dec.InputOffset()), err)
			}
			key, _ := kt.(string)
			var elem reflect.Type
			if t != nil {
				switch t.Kind() {
				case reflect.Struct:
					f, found := fieldByTag(t, key)
					if !found {
						at := dec.InputOffset() - int64(len(key)) - 2
						return fmt.Errorf("%s: unknown key %q", pos(data, at), key)
					}
					elem = f
				case reflect.Map:
					elem = t.Elem()
				}
			}
			if err := checkKeys(dec, data, elem); err != nil {
				return err
			}
		}
	case '[':
		var elem reflect.Type
		if t != nil && t.Kind() == reflect.Slice {
			elem = t.Elem()
		}
		for dec.More() {
			if err := checkKeys(dec, data, elem); err != nil {
				return err
			}
		}
	}
	if _, err := dec.Token(); err != nil { // the closing delimiter
		return fmt.Errorf("%s: %v", pos(data, dec.InputOffset()), err)
	}
	return nil
}

func fieldByTag(t reflect.Type, key string) (reflect.Type, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name == key {
			return f.Type, true
		}
	}
	return nil, false
}

// pos turns a byte offset into "line:column", both from 1.
func pos(data []byte, off int64) string {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("%d:%d", line, col)
}

var envRef = regexp.MustCompile(`^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$`)

// resolve reads an environment reference "${NAME}", or returns v as
// written.
func resolve(v string, env environment) (string, error) {
	m := envRef.FindStringSubmatch(v)
	if m == nil {
		return v, nil
	}
	if got := env.Getenv(m[1]); got != "" {
		return got, nil
	}
	return "", fmt.Errorf("environment variable %s (referenced as ${%s}) is not set", m[1], m[1])
}

// masked is what -print-config shows for a secret: its reference when it
// is one, which is safe to show, else asterisks.
func masked(v string) string {
	switch {
	case envRef.MatchString(v):
		return v
	case v == "":
		return ""
	}
	return "****"
}

// maskKey shows the start of an API key, enough to tell merchants apart,
// as the dashboard does; a reference is shown whole.
func maskKey(k string) string {
	if envRef.MatchString(k) {
		return k
	}
	return mask.Key(k)
}

// merchants turns the file's merchants into sandbox merchants, resolving
// environment references.
func (fc FileConfig) merchants(env environment) ([]sandbox.Merchant, error) {
	var out []sandbox.Merchant
	seen := map[string]bool{}
	for i, fm := range fc.Merchants {
		key, err := resolve(fm.APIKey, env)
		if err != nil {
			return nil, fmt.Errorf("merchants[%d].api_key: %w", i, err)
		}
		secret, err := resolve(fm.Secret, env)
		if err != nil {
			return nil, fmt.Errorf("merchants[%d].secret: %w", i, err)
		}
		switch {
		case strings.TrimSpace(key) == "":
			return nil, fmt.Errorf("merchants[%d].api_key is empty", i)
		case secret == "":
			return nil, fmt.Errorf("merchants[%d].secret is empty", i)
		case seen[key]:
			return nil, fmt.Errorf("merchants[%d].api_key repeats an earlier merchant's", i)
		}
		seen[key] = true
		m := sandbox.DefaultMerchant(key, secret)
		m.AcceptUnsigned = fm.AcceptUnsigned
		if len(fm.Terminals) > 0 {
			m.Terminals = nil
			ids := map[string]bool{}
			for j, ft := range fm.Terminals {
				at := fmt.Sprintf("merchants[%d].terminals[%d]", i, j)
				if strings.TrimSpace(ft.ID) == "" || ids[ft.ID] {
					return nil, fmt.Errorf("%s.id is empty or repeated", at)
				}
				ids[ft.ID] = true
				for _, d := range []struct {
					name string
					v    decimal.Decimal
				}{{"balance", ft.Balance}, {"balance_frozen", ft.BalanceFrozen}, {"withdrawal_fee", ft.WithdrawalFee}} {
					if d.v.IsNegative() || !d.v.Equal(d.v.Truncate(6)) {
						return nil, fmt.Errorf("%s.%s: want a non-negative USDT amount with at most 6 decimal places", at, d.name)
					}
				}
				name := ft.Name
				if name == "" {
					name = ft.ID
				}
				m.Terminals = append(m.Terminals, sandbox.Terminal{ID: ft.ID, Name: name, Balance: ft.Balance,
					BalanceFrozen: ft.BalanceFrozen, WithdrawalFee: ft.WithdrawalFee, IsActive: !ft.Inactive})
			}
		}
		out = append(out, m)
	}
	return out, nil
}

// bankCountries are the countries a bank may name: the sandbox serves
// Russian banks and the four cross-border countries.
var bankCountries = []string{"RU", "TJ", "KZ", "UZ", "KG"}

// banks turns the file's banks into sandbox banks; nil keeps the default
// list.
func (fc FileConfig) banks() ([]sandbox.Bank, error) {
	if len(fc.Banks) == 0 {
		return nil, nil
	}
	var out []sandbox.Bank
	seen := map[string]bool{}
	for i, b := range fc.Banks {
		switch {
		case strings.TrimSpace(b.Code) == "" || seen[b.Code]:
			return nil, fmt.Errorf("banks[%d].code is empty or repeated", i)
		case strings.TrimSpace(b.Name) == "":
			return nil, fmt.Errorf("banks[%d].name is empty", i)
		case !slices.Contains(bankCountries, b.Country):
			return nil, fmt.Errorf("banks[%d].country: want one of %s", i, strings.Join(bankCountries, ", "))
		}
		seen[b.Code] = true
		out = append(out, sandbox.Bank{Code: b.Code, Name: b.Name, Country: b.Country, IsActive: !b.Inactive})
	}
	return out, nil
}

// printable is fc as -print-config shows it: the default banks filled in,
// every secret masked, API keys cut short.
func (fc FileConfig) printable() FileConfig {
	out := fc
	out.ControlToken = masked(fc.ControlToken)
	out.Merchants = make([]FileMerchant, len(fc.Merchants))
	for i, m := range fc.Merchants {
		m.APIKey, m.Secret = maskKey(m.APIKey), masked(m.Secret)
		out.Merchants[i] = m
	}
	if len(out.Banks) == 0 {
		for _, b := range sandbox.DefaultBanks() {
			out.Banks = append(out.Banks, FileBank{Code: b.Code, Name: b.Name, Country: b.Country, Inactive: !b.IsActive})
		}
	}
	return out
}

// envPrefix starts every variable the sandbox reads for a flag.
const envPrefix = "PAYKIT_SANDBOX_"

// envName is the variable that also sets flag name.
func envName(name string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// applyEnv sets every flag of fs not given on the command line from its
// PAYKIT_SANDBOX_ variable, when that is set and not empty. The error
// names the variable, never its value (it may be a secret).
func applyEnv(fs *flag.FlagSet, env environment) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if err != nil || given[f.Name] {
			return
		}
		if v := env.Getenv(envName(f.Name)); v != "" {
			if fs.Set(f.Name, v) != nil {
				err = usage("%s: not a valid value for -%s", envName(f.Name), f.Name)
			}
		}
	})
	return err
}

// unknownEnv warns of PAYKIT_SANDBOX_ variables that name no flag: a typo
// (PAYKIT_SANDBOX_AUTOPILIT) would otherwise be ignored in silence. A
// warning rather than a refusal, so that an image may set a variable for a
// flag a later binary adds.
func unknownEnv(fs *flag.FlagSet, env environment) []string {
	known := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { known[envName(f.Name)] = true })
	var out []string
	for _, kv := range env.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		// PAYKIT_SANDBOX_TEST_DB is the sandbox test suite's switch (it
		// runs the suite on SQLite), not a setting of the binary.
		if strings.HasPrefix(name, envPrefix) && !known[name] && name != "PAYKIT_SANDBOX_TEST_DB" {
			out = append(out, "NOTE: "+name+" names no flag of this sandbox (see -help); ignored")
		}
	}
	slices.Sort(out)
	return out
}
