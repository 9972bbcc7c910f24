package sandboxcli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

// fakeEnv is an environment for runWith, so tests never touch the
// process's.
type fakeEnv map[string]string

func (e fakeEnv) Getenv(name string) string { return e[name] }
func (e fakeEnv) Environ() []string {
	var out []string
	for k, v := range e {
		out = append(out, k+"="+v)
	}
	return out
}

func envOf(m map[string]string) fakeEnv { return fakeEnv(m) }

// runEnv is runWith as paykit-sandbox calls it.
func runEnv(ctx context.Context, args []string, env fakeEnv, stdout, stderr io.Writer) error {
	return runWith(ctx, args, env, stdout, stderr, Options{Name: "paykit-sandbox"})
}

// startRun serves runEnv in the background and returns its base URL; the
// server stops with the test.
func startRun(t *testing.T, args []string, env map[string]string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := runEnv(ctx, args, envOf(env), pw, io.Discard)
		pw.CloseWithError(io.EOF)
		done <- err
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	lines := bufio.NewScanner(pr)
	if !lines.Scan() {
		t.Fatal("no output")
	}
	go io.Copy(io.Discard, pr)
	return strings.TrimPrefix(lines.Text(), "paykit sandbox listening on ")
}

func writeFile(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "sandbox.json")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const teamConfig = `{
  "allow_remote": true,
  "control_token": "${TEAM_CONTROL_TOKEN}",
  "merchants": [
    {"api_key": "pk_team_a", "secret": "${TEAM_A_SECRET}",
     "terminals": [{"id": "t_a", "name": "A main", "balance": "250.50", "withdrawal_fee": "0.25"}]},
    {"api_key": "pk_team_b", "secret": "literal_b_secret", "accept_unsigned": true,
     "terminals": [{"id": "t_b", "balance": 10, "withdrawal_fee": "1"},
                   {"id": "t_b_off", "balance": "0", "withdrawal_fee": "1", "inactive": true}]}
  ],
  "usdt_rate": "100.00",
  "local_rates": {"KZ": "5.00"},
  "banks": [{"code": "teambank", "name": "Team Bank", "country": "RU"},
            {"code": "closed", "name": "Closed Bank", "country": "RU", "inactive": true}],
  "payment_validity": "30m",
  "webhook_concurrency": 8,
  "webhook_per_receiver": 2,
  "autopilot": {"enabled": true, "payout_delay": "20ms", "verify_delay": "20ms"}
}`

// teamEnv holds the secrets teamConfig references.
var teamEnv = map[string]string{"TEAM_A_SECRET": "env_a_secret", "TEAM_CONTROL_TOKEN": "team-ctl-token-42-9f3c2a7b1e8d4c6f0a5b9e2d"}

// TestConfigFileTeam serves two merchants from a file, one secret and the
// control token from environment references, and drives each through the
// SDK: terminals, rates, banks, an unsigned merchant, remote mode with its
// token; the autopilot from the file moves a payout with the real clock.
func TestConfigFileTeam(t *testing.T) {
	path := writeFile(t, teamConfig)
	base := startRun(t, []string{"-addr", "127.0.0.1:0", "-config", path}, teamEnv)
	ctx := context.Background()

	a, err := paykit.NewClient(base, "pk_team_a", paykit.HMACSigner("env_a_secret"))
	if err != nil {
		t.Fatal(err)
	}
	terms, err := a.ListTerminals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(terms) != 1 || terms[0].ID != "t_a" || terms[0].Name != "A main" || !terms[0].Balance.Equal(decimal.RequireFromString("250.50")) || !terms[0].IsActive {
		t.Fatalf("merchant A terminals: %+v", terms)
	}
	p, err := a.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "cfg-1", Amount: decimal.RequireFromString("1000"), Method: paykit.MethodCard})
	if err != nil {
		t.Fatal(err)
	}
	if !p.USDTRate.Equal(decimal.RequireFromString("100")) || p.ValidUntil.Sub(p.CreatedAt) != 30*time.Minute {
		t.Fatalf("rate %s, validity %s", p.USDTRate, p.ValidUntil.Sub(p.CreatedAt))
	}
	if p.Requisites.BankCode != "teambank" || p.Requisites.BankName != "Team Bank" {
		t.Fatalf("requisites from the file's banks: %+v", p.Requisites)
	}
	banks, err := a.ListBanks(ctx)
	if err != nil || len(banks) != 2 || banks[1].Code != "closed" || banks[1].IsActive {
		t.Fatalf("banks %+v %v", banks, err)
	}
	cb, err := a.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "cfg-kz", Amount: decimal.RequireFromString("1000"),
		Method: paykit.MethodCrossBorder, Country: paykit.CountryKZ})
	if err == nil {
		t.Fatalf("a cross-border payment with no KZ bank in the file: %+v", cb)
	}
	// Merchant A's signature is checked; merchant B accepts unsigned requests.
	wrongA, _ := paykit.NewClient(base, "pk_team_a", paykit.HMACSigner("not-the-secret"), paykit.WithMaxRetries(0))
	if _, err := wrongA.ListTerminals(ctx); err == nil {
		t.Fatal("merchant A answered a wrong signature")
	}
	wrongB, _ := paykit.NewClient(base, "pk_team_b", paykit.HMACSigner("not-the-secret"), paykit.WithMaxRetries(0))
	if _, err := wrongB.ListTerminals(ctx); err != nil {
		t.Fatalf("merchant B (accept_unsigned) refused: %v", err)
	}
	// Remote mode with the token from the environment reference.
	var ce *sandbox.ControlError
	if _, err := noToken(t, base).State(ctx); !errors.As(err, &ce) || ce.StatusCode != 401 || ce.Code != sandbox.CodeControlUnauthorized {
		t.Fatalf("state without the token: %v", err)
	}
	remote, err := sandbox.NewRemote(base, sandbox.WithControlToken(teamEnv["TEAM_CONTROL_TOKEN"]))
	if err != nil {
		t.Fatal(err)
	}
	if st, err := remote.State(ctx); err != nil || len(st.Merchants) != 2 {
		t.Fatalf("state with the token: %+v %v", st, err)
	}

	b, err := paykit.NewClient(base, "pk_team_b", paykit.HMACSigner("literal_b_secret"))
	if err != nil {
		t.Fatal(err)
	}
	tb, err := b.ListTerminals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tb) != 2 || tb[0].ID != "t_b" || tb[1].ID != "t_b_off" || tb[1].IsActive || !tb[0].Balance.Equal(decimal.NewFromInt(10)) {
		t.Fatalf("merchant B terminals: %+v", tb)
	}
	// The default merchant is not served when the file names merchants.
	d, _ := paykit.NewClient(base, "pk_sandbox", paykit.HMACSigner("sk_sandbox_secret"), paykit.WithMaxRetries(0))
	if _, err := d.ListTerminals(ctx); err == nil {
		t.Fatal("the default merchant answered")
	}

	po, err := b.CreatePayout(ctx, paykit.CreatePayoutParams{ExtID: "cfg-po", Amount: decimal.NewFromInt(100),
		Method: paykit.PayoutMethodCard, Requisites: "4000000000000002", HolderName: "I I"})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := b.GetPayout(ctx, po.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status == paykit.PayoutStatusFailed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("payout still %s", got.Status)
		}
		<-time.After(20 * time.Millisecond) // polling with a deadline
	}
}

func TestConfigFileErrors(t *testing.T) {
	for name, tc := range map[string]struct{ file, want string }{
		"unknown top key":     {"{\n  \"merchants\": [],\n  \"usdt_rates\": 1\n}", `3:3: unknown key "usdt_rates"`},
		"unknown nested key":  {"{\"merchants\": [{\"api_key\": \"k\", \"secret\": \"s\",\n \"terminals\": [{\"id\": \"t\", \"fee\": 1}]}]}", `2:28: unknown key "fee"`},
		"unknown autopilot":   {"{\"autopilot\": {\"enable\": true}}", `1:16: unknown key "enable"`},
		"wrong type":          {"{\n\"max_same_amount\": \"5\"}", `2:`},
		"bad duration":        {`{"payment_validity": "soon"}`, `"soon"`},
		"syntax":              {"{\n\"addr\": }", `2:`},
		"unset env reference": {`{"merchants": [{"api_key": "k", "secret": "${NOPE_UNSET}"}]}`, "NOPE_UNSET"},
		"duplicate merchant":  {`{"merchants": [{"api_key": "k", "secret": "s"}, {"api_key": "k", "secret": "t"}]}`, "repeats"},
		"negative balance":    {`{"merchants": [{"api_key": "k", "secret": "s", "terminals": [{"id": "t", "balance": "-1"}]}]}`, "balance"},
		"trailing data":       {`{} {}`, "data after"},
		"unknown bank key":    {"{\"banks\": [{\"code\": \"b\", \"name\": \"B\", \"country\": \"RU\", \"active\": true}]}", `1:56: unknown key "active"`},
		"bank country":        {`{"banks": [{"code": "b", "name": "B", "country": "DE"}]}`, "banks[0].country"},
		"repeated bank":       {`{"banks": [{"code": "b", "name": "B", "country": "RU"}, {"code": "b", "name": "C", "country": "RU"}]}`, "banks[1].code"},
		"unset control token": {`{"control_token": "${NOPE_TOKEN}"}`, "NOPE_TOKEN"},
		"remote, no token":    {`{"allow_remote": true}`, "control token"},
		"bad local rate":      {`{"local_rates": {"DE": "1"}}`, "local_rates.DE"},
		"pool size":           {`{"webhook_concurrency": -1}`, "-webhook-concurrency"},
	} {
		t.Run(name, func(t *testing.T) {
			path := writeFile(t, tc.file)
			var out bytes.Buffer
			err := runEnv(context.Background(), []string{"-addr", "127.0.0.1:0", "-config", path}, envOf(nil), &out, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "secret\": \"s") {
				t.Fatalf("error echoes the file: %v", err)
			}
		})
	}
	// A refused file is a usage error: the binaries exit 2.
	path := writeFile(t, `{"bogus": 1}`)
	err := runEnv(context.Background(), []string{"-config", path}, envOf(nil), io.Discard, io.Discard)
	var ue *UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), `unknown key "bogus"`) {
		t.Fatalf("error %v, want a UsageError naming the key", err)
	}
}

// TestPrintConfig: the effective configuration, with the file, the
// variables and the flags merged in that order of precedence, and no
// secret in it: references stay references, literals are masked, API keys
// cut short.
func TestPrintConfig(t *testing.T) {
	path := writeFile(t, teamConfig)
	var out, stderr bytes.Buffer
	env := map[string]string{"TEAM_A_SECRET": "env_a_secret", "TEAM_CONTROL_TOKEN": "team-ctl-token-42-9f3c2a7b1e8d4c6f0a5b9e2d",
		"PAYKIT_SANDBOX_MAX_SAME_AMOUNT": "9", "PAYKIT_SANDBOX_WEBHOOK_ATTEMPTS": "7", "PAYKIT_SANDBOX_AUTOPILOT_REVIEW_DELAY": "1m",
		"PAYKIT_SANDBOX_WEBHOOK_PER_RECEIVER": "3"}
	err := runEnv(context.Background(), []string{"-config", path, "-print-config", "-webhook-attempts", "3"}, envOf(env), &out, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, secret := range []string{"env_a_secret", "literal_b_secret", "team-ctl-token-42-9f3c2a7b1e8d4c6f0a5b9e2d", "pk_team_a", "pk_team_b"} {
		if strings.Contains(text, secret) || strings.Contains(stderr.String(), secret) {
			t.Fatalf("%q printed:\n%s", secret, text)
		}
	}
	var fc FileConfig
	if err := json.Unmarshal(out.Bytes(), &fc); err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if len(fc.Merchants) != 2 || fc.Merchants[0].Secret != "${TEAM_A_SECRET}" || fc.Merchants[1].Secret != "****" ||
		fc.Merchants[0].APIKey != "pk_t…" || fc.Merchants[0].AcceptUnsigned || !fc.Merchants[1].AcceptUnsigned {
		t.Fatalf("merchants %+v", fc.Merchants)
	}
	if fc.ControlToken != "${TEAM_CONTROL_TOKEN}" || !fc.AllowRemote {
		t.Fatalf("control token %q, allow_remote %v", fc.ControlToken, fc.AllowRemote)
	}
	if fc.MaxSameAmount != 9 || fc.WebhookAttempts != 3 || fc.PaymentValidity.Duration != 30*time.Minute ||
		fc.WebhookConcurrency != 8 || fc.WebhookPerReceiver != 3 || fc.WebhookRetryWait.Duration != time.Second ||
		!fc.Autopilot.Enabled || fc.Autopilot.ReviewDelay.Duration != time.Minute || fc.Autopilot.PayoutDelay.Duration != 20*time.Millisecond ||
		fc.Autopilot.PayerDelay.Duration != 5*time.Second || !fc.USDTRate.Equal(decimal.NewFromInt(100)) || fc.Addr != "127.0.0.1:8080" ||
		len(fc.Banks) != 2 || !fc.LocalRates["KZ"].Equal(decimal.NewFromInt(5)) || !fc.LocalRates["TJ"].Equal(decimal.RequireFromString("0.12")) {
		t.Fatalf("effective config %+v", fc)
	}
	// A literal token from the command line is masked too.
	out.Reset()
	if err := runEnv(context.Background(), []string{"-print-config", "-control-token", "flag-token-99-9f3c2a7b1e8d4c6f0a5b9e2d"}, envOf(nil), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "flag-token-99-9f3c2a7b1e8d4c6f0a5b9e2d") || !strings.Contains(out.String(), `"control_token": "****"`) ||
		!strings.Contains(out.String(), `"code": "sber"`) {
		t.Fatalf("print-config:\n%s", out.String())
	}
}

// TestEnvVariables: without a file, PAYKIT_SANDBOX_* set the flags; a flag
// on the command line wins; a bad value names the variable, not the value;
// a variable naming no flag is reported; the file's merchants refuse the
// flags' merchant knobs.
func TestEnvVariables(t *testing.T) {
	var out, stderr bytes.Buffer
	env := map[string]string{"PAYKIT_SANDBOX_API_KEY": "pk_env", "PAYKIT_SANDBOX_SECRET": "sk_env_secret",
		"PAYKIT_SANDBOX_AUTOPILOT": "true", "PAYKIT_SANDBOX_START_BALANCE": "12.5", "PAYKIT_SANDBOX_ADDR": "0.0.0.0:9999",
		"PAYKIT_SANDBOX_ACCEPT_UNSIGNED": "true", "PAYKIT_SANDBOX_AUTOPILIT": "true", "PAYKIT_SANDBOX_WEBHOOK_CONCURRENCY": "2"}
	if err := runEnv(context.Background(), []string{"-print-config", "-addr", "127.0.0.1:7777"}, envOf(env), &out, &stderr); err != nil {
		t.Fatal(err)
	}
	var fc FileConfig
	if err := json.Unmarshal(out.Bytes(), &fc); err != nil {
		t.Fatal(err)
	}
	if fc.Addr != "127.0.0.1:7777" || !fc.Autopilot.Enabled || len(fc.Merchants) != 1 || fc.Merchants[0].APIKey != "pk_e…" ||
		fc.Merchants[0].Secret != "****" || !fc.Merchants[0].AcceptUnsigned || fc.WebhookConcurrency != 2 ||
		!fc.Merchants[0].Terminals[0].Balance.Equal(decimal.RequireFromString("12.5")) {
		t.Fatalf("effective config %s", out.String())
	}
	if got := stderr.String(); got != "NOTE: PAYKIT_SANDBOX_AUTOPILIT names no flag of this sandbox (see -help); ignored\n" {
		t.Fatalf("stderr %q", got)
	}
	err := runEnv(context.Background(), []string{"-print-config"}, envOf(map[string]string{"PAYKIT_SANDBOX_MAX_SAME_AMOUNT": "many"}), io.Discard, io.Discard)
	var ue *UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "PAYKIT_SANDBOX_MAX_SAME_AMOUNT") || strings.Contains(err.Error(), "many") {
		t.Fatalf("bad variable: %v", err)
	}
	path := writeFile(t, `{"merchants": [{"api_key": "k", "secret": "s"}]}`)
	for _, args := range [][]string{{"-api-key", "x"}, {"-accept-unsigned"}, {"-start-balance", "1"}} {
		err = runEnv(context.Background(), append([]string{"-config", path}, args...), envOf(nil), io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Fatalf("%v with file merchants: %v", args, err)
		}
	}
	// PAYKIT_SANDBOX_CONFIG names the file like -config does.
	out.Reset()
	if err := runEnv(context.Background(), []string{"-print-config"}, envOf(map[string]string{"PAYKIT_SANDBOX_CONFIG": path}), &out, io.Discard); err != nil ||
		!strings.Contains(out.String(), `"api_key": "…"`) {
		t.Fatalf("config from the variable: %v\n%s", err, out.String())
	}
}

// TestHealthEndpointsAndHealthcheck: /healthz and /readyz answer without
// credentials and with any Host, and the healthcheck subcommand passes
// against a running sandbox and fails against nothing.
func TestHealthEndpointsAndHealthcheck(t *testing.T) {
	base := startRun(t, []string{"-addr", "127.0.0.1:0"}, nil)
	for path, want := range map[string]string{"/healthz": `{"status":"ok"}`, "/readyz": `{"status":"ready"}`} {
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Host = "sandbox.internal.example:8080"
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || strings.TrimSpace(string(body)) != want {
			t.Fatalf("%s: %d %s", path, res.StatusCode, body)
		}
	}
	addr := strings.TrimPrefix(base, "http://")
	var out bytes.Buffer
	if err := runEnv(context.Background(), []string{"healthcheck", "-addr", addr}, envOf(nil), &out, io.Discard); err != nil || out.String() != "ready\n" {
		t.Fatalf("healthcheck: %v %q", err, out.String())
	}
	// PAYKIT_SANDBOX_ADDR serves the subcommand too, as in a container.
	if err := runEnv(context.Background(), []string{"healthcheck"}, envOf(map[string]string{"PAYKIT_SANDBOX_ADDR": addr}), io.Discard, io.Discard); err != nil {
		t.Fatalf("healthcheck from the variable: %v", err)
	}
	// ... and so does the addr of the PAYKIT_SANDBOX_CONFIG file.
	cfg := writeFile(t, `{"addr": "`+addr+`"}`)
	if err := runEnv(context.Background(), []string{"healthcheck"}, envOf(map[string]string{"PAYKIT_SANDBOX_CONFIG": cfg}), io.Discard, io.Discard); err != nil {
		t.Fatalf("healthcheck from the configuration file: %v", err)
	}
	err := runEnv(context.Background(), []string{"healthcheck", "-addr", "127.0.0.1:1", "-timeout", "1s"}, envOf(nil), io.Discard, io.Discard)
	var ue *UsageError
	if err == nil || errors.As(err, &ue) {
		t.Fatalf("healthcheck of nothing: %v, want a failure that is not a usage error (exit 1)", err)
	}
}

// The example the README links is a valid configuration, and the compose
// file's environment is what it references.
func TestDocsExampleConfig(t *testing.T) {
	var out bytes.Buffer
	env := map[string]string{"TEAM_A_SECRET": "example_secret", "PAYKIT_SANDBOX_CONTROL_TOKEN": "example_token-9f3c2a7b1e8d4c6f0a5b9e2d",
		"PAYKIT_SANDBOX_CONFIG": "../../docs/sandbox.json", "PAYKIT_SANDBOX_AUTOPILOT": "true", "PAYKIT_SANDBOX_ALLOW_REMOTE": "true"}
	if err := runEnv(context.Background(), []string{"-print-config"}, envOf(env), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	var fc FileConfig
	if err := json.Unmarshal(out.Bytes(), &fc); err != nil {
		t.Fatal(err)
	}
	if len(fc.Merchants) != 1 || len(fc.Merchants[0].Terminals) != 2 || !fc.Autopilot.Enabled || !fc.AllowRemote ||
		strings.Contains(out.String(), "example_secret") || strings.Contains(out.String(), "example_token-9f3c2a7b1e8d4c6f0a5b9e2d") {
		t.Fatalf("docs/sandbox.json: %s", out.String())
	}
	compose, err := os.ReadFile("../../docs/compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for name := range env {
		if !strings.Contains(string(compose), name+":") && name != "PAYKIT_SANDBOX_ALLOW_REMOTE" {
			t.Errorf("docs/compose.yaml does not set %s", name)
		}
	}
}

func noToken(t *testing.T, base string) *sandbox.Remote {
	t.Helper()
	r, err := sandbox.NewRemote(base)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A secret from PAYKIT_SANDBOX_SECRET stays out of the banner (a
// container's stdout is its log); one typed on the command line or the
// default is shown, as before.
func TestBannerHidesSecretFromEnvironment(t *testing.T) {
	banner := func(args []string, env map[string]string) string {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		pr, pw := io.Pipe()
		done := make(chan error, 1)
		go func() {
			done <- runEnv(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), envOf(env), pw, io.Discard)
			pw.Close()
		}()
		var b strings.Builder
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			b.WriteString(sc.Text() + "\n")
			if strings.HasPrefix(sc.Text(), "  controls:") {
				break
			}
		}
		cancel()
		go io.Copy(io.Discard, pr)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	got := banner(nil, map[string]string{"PAYKIT_SANDBOX_SECRET": "sk_from_env_77"})
	if strings.Contains(got, "sk_from_env_77") || !strings.Contains(got, "secret:    **** (from PAYKIT_SANDBOX_SECRET)") {
		t.Fatalf("banner with the secret from the environment:\n%s", got)
	}
	if got := banner([]string{"-secret", "sk_typed"}, nil); !strings.Contains(got, "secret:    sk_typed") {
		t.Fatalf("banner with a typed secret:\n%s", got)
	}
	if got := banner(nil, nil); !strings.Contains(got, "secret:    "+sandbox.DefaultSecret) {
		t.Fatalf("banner with the default secret:\n%s", got)
	}
}

// -help renders flag defaults; values that came from PAYKIT_SANDBOX_*
// variables (a control token, a secret, an API key) must not appear there,
// since a container's help output lands in its log.
func TestHelpShowsNoValueFromEnvironment(t *testing.T) {
	env := map[string]string{
		"PAYKIT_SANDBOX_CONTROL_TOKEN": "tok_env_secret_123-9f3c2a7b1e8d4c6f0a5b9e2d",
		"PAYKIT_SANDBOX_SECRET":        "sk_env_secret_456",
		"PAYKIT_SANDBOX_API_KEY":       "pk_env_key_789",
	}
	var out, errOut strings.Builder
	_ = runEnv(context.Background(), []string{"-help"}, envOf(env), &out, &errOut)
	all := out.String() + errOut.String()
	if !strings.Contains(all, "-control-token") {
		t.Fatalf("-help printed no flags:\n%s", all)
	}
	for _, v := range env {
		if strings.Contains(all, v) {
			t.Fatalf("-help shows %q from the environment", v)
		}
	}
}
