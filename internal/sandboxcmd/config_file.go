package sandboxcmd

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
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go/sandbox"
)

// FileConfig is the -config file (JSON) and the shape -print-config
// prints. Every key is optional; an unknown key is refused with its
// line:column so that a typo never silently falls back to a default.
// Explicit flags and PAYKIT_SANDBOX_* variables override the file.
type FileConfig struct {
	// Addr is the listen address (-addr).
	Addr string `json:"addr,omitempty"`
	// AllowRemote is -allow-remote.
	AllowRemote bool `json:"allow_remote,omitempty"`
	// LogFormat is -log-format: text or json.
	LogFormat string `json:"log_format,omitempty"`
	// Merchants are the accounts; empty means one default merchant built
	// from -api-key, -secret, -start-balance and -withdrawal-fee.
	Merchants []FileMerchant `json:"merchants,omitempty"`
	// USDTRate is RUB per 1 USDT (sandbox.Config.USDTRate).
	USDTRate decimal.Decimal `json:"usdt_rate"`
	// LocalRates are local units per 1 RUB by country
	// (sandbox.Config.LocalRates).
	LocalRates map[string]decimal.Decimal `json:"local_rates,omitempty"`
	// PaymentValidity is -payment-validity, e.g. "20m".
	PaymentValidity Duration `json:"payment_validity"`
	// MaxSameAmount is -max-same-amount.
	MaxSameAmount int `json:"max_same_amount"`
	// WebhookAttempts is -webhook-attempts.
	WebhookAttempts int `json:"webhook_attempts"`
	// WebhookRetryWait is -webhook-retry-wait, e.g. "1s".
	WebhookRetryWait Duration `json:"webhook_retry_wait"`
	// Autopilot is -autopilot and its delays.
	Autopilot FileAutopilot `json:"autopilot"`
}

// FileMerchant is one merchant of the -config file. APIKey and Secret may
// be environment references, "${NAME}", read from variable NAME at start,
// so the file can be committed without the secret; a reference to an
// unset or empty variable is refused.
type FileMerchant struct {
	// APIKey is what X-Identity carries; unique, non-empty.
	APIKey string `json:"api_key"`
	// Secret is the HMAC signing secret.
	Secret string `json:"secret"`
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

// maxConfigBytes bounds the file: a configuration is a few KiB.
const maxConfigBytes = 1 << 20

// loadConfigFile reads and checks path. Errors name the file and the
// line:column of the offending key or value.
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
		return fmt.Errorf("%s: %v", pos(data, dec.InputOffset()), err)
	}
	return nil
}

var unmarshaler = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()

// checkKeys walks one JSON value against t and refuses a key that no field
// of t's structs names. Values of types with their own UnmarshalJSON are
// skipped: they check themselves at decode.
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
	_, err = dec.Token() // the closing delimiter
	if err != nil {
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
	if off < 0 {
		off = 0
	}
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("%d:%d", line, col)
}

var envRef = regexp.MustCompile(`^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$`)

// resolve reads an environment reference "${NAME}", or returns v as
// written.
func resolve(v string, getenv func(string) string) (string, error) {
	m := envRef.FindStringSubmatch(v)
	if m == nil {
		return v, nil
	}
	if got := getenv(m[1]); got != "" {
		return got, nil
	}
	return "", fmt.Errorf("environment variable %s (referenced as ${%s}) is not set", m[1], m[1])
}

// masked is what -print-config shows for a secret: its reference when it
// is one, which is safe to show, else asterisks.
func masked(v string) string {
	if envRef.MatchString(v) {
		return v
	}
	if v == "" {
		return ""
	}
	return "****"
}

// merchants turns the file's merchants into sandbox merchants, resolving
// environment references.
func (fc FileConfig) merchants(getenv func(string) string) ([]sandbox.Merchant, error) {
	var out []sandbox.Merchant
	seen := map[string]bool{}
	for i, fm := range fc.Merchants {
		key, err := resolve(fm.APIKey, getenv)
		if err != nil {
			return nil, fmt.Errorf("merchants[%d].api_key: %w", i, err)
		}
		secret, err := resolve(fm.Secret, getenv)
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
		if len(fm.Terminals) > 0 {
			m.Terminals = nil
			ids := map[string]bool{}
			for j, ft := range fm.Terminals {
				at := fmt.Sprintf("merchants[%d].terminals[%d]", i, j)
				if strings.TrimSpace(ft.ID) == "" || ids[ft.ID] {
					return nil, fmt.Errorf("%s.id is empty or repeated", at)
				}
				ids[ft.ID] = true
				for name, d := range map[string]decimal.Decimal{"balance": ft.Balance, "balance_frozen": ft.BalanceFrozen, "withdrawal_fee": ft.WithdrawalFee} {
					if d.IsNegative() || !d.Equal(d.Truncate(6)) {
						return nil, fmt.Errorf("%s.%s: want a non-negative USDT amount with at most 6 decimal places", at, name)
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

// printable is fc with every secret masked, as -print-config shows it.
func (fc FileConfig) printable() FileConfig {
	out := fc
	out.Merchants = make([]FileMerchant, len(fc.Merchants))
	for i, m := range fc.Merchants {
		m.Secret = masked(m.Secret)
		out.Merchants[i] = m
	}
	return out
}

// envName is the variable that also sets flag name.
func envName(name string) string {
	return "PAYKIT_SANDBOX_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// applyEnv sets every flag not given on the command line from its
// PAYKIT_SANDBOX_ variable, when that is set and not empty. The error
// names the variable, never its value (it may be a secret).
func applyEnv(fs *flag.FlagSet, getenv func(string) string) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if err != nil || given[f.Name] {
			return
		}
		if v := getenv(envName(f.Name)); v != "" {
			if fs.Set(f.Name, v) != nil {
				err = fmt.Errorf("%s: not a valid value for -%s", envName(f.Name), f.Name)
			}
		}
	})
	return err
}
