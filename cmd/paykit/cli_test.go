package main

// These tests build the paykit binary once and run it as a subprocess
// against a real sandbox over loopback HTTP: what a person or a script
// gets, exit code included. Golden files hold stdout, stderr and the exit
// code of each command, with random values (UUIDs, the sandbox's random
// card digits and holder names, the port) normalised; the sandbox's clock
// is frozen, so every time is stable. go test -run TestSession -update
// rewrites them.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

var binary string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "paykit-cli-test")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "paykit")
	out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput()
	if err != nil {
		os.Stderr.Write(out)
		os.RemoveAll(dir)
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Credentials of the test merchant: distinctive, so the leak test can
// grep for them.
const (
	testKey    = "pk_test_LEAKCHECK_7d1f0a"
	testSecret = "sk_test_LEAKCHECK_9a2b3c"
)

// frozen is the sandbox's clock: every created_at and valid_until is stable.
var frozen = time.Date(2026, 11, 3, 9, 30, 0, 0, time.UTC)

// env is a sandbox with the test merchant and a record of every
// X-Signature it received.
type testEnv struct {
	t   *testing.T
	sb  *sandbox.Server
	srv *httptest.Server
	sdk *paykit.Client
	// all collects every byte the binary wrote, for the leak test.
	mu   sync.Mutex
	all  bytes.Buffer
	sigs []string
	// confirms are the bodies of confirm requests as they crossed the
	// wire, with their Content-Type.
	confirms []wireBody
	// posts are the bodies of every POST, with its path.
	posts []wireBody
}

type wireBody struct {
	contentType string
	body        []byte
	path        string
}

func newEnv(t *testing.T) *testEnv {
	t.Helper()
	e := &testEnv{t: t}
	e.sb = sandbox.New(sandbox.Config{
		Merchants: []sandbox.Merchant{sandbox.DefaultMerchant(testKey, testSecret)},
		Now:       func() time.Time { return frozen },
	})
	t.Cleanup(e.sb.Close)
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s := r.Header.Get("X-Signature"); s != "" {
			e.mu.Lock()
			e.sigs = append(e.sigs, s)
			e.mu.Unlock()
		}
		if r.Method == http.MethodPost {
			b, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
			wb := wireBody{r.Header.Get("Content-Type"), b, r.URL.Path}
			e.mu.Lock()
			e.posts = append(e.posts, wb)
			if strings.HasSuffix(r.URL.Path, "/confirm") {
				e.confirms = append(e.confirms, wb)
			}
			e.mu.Unlock()
		}
		e.sb.ServeHTTP(w, r)
	}))
	t.Cleanup(e.srv.Close)
	var err error
	e.sdk, err = paykit.NewClient(e.srv.URL, testKey, paykit.HMACSigner(testSecret))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

type result struct {
	stdout, stderr string
	code           int
}

// run runs the binary with the test merchant's credentials in the
// environment (and no config file), stdin from /dev/null unless given.
func (e *testEnv) run(stdin string, args ...string) result {
	return e.runEnv(map[string]string{"PAYKIT_BASE_URL": e.srv.URL, "PAYKIT_API_KEY": testKey, "PAYKIT_SECRET": testSecret}, stdin, args...)
}

// createPayouts creates, through the binary, a card payout of amount for
// each ext_id, in order: the list the shaping and paging tests read.
func (e *testEnv) createPayouts(amount string, extIDs ...string) {
	e.t.Helper()
	for _, ext := range extIDs {
		if r := e.run("", "payouts", "create", "--ext-id", ext, "--amount", amount, "--method", "card", "--requisites", testCard, "--holder-name", "I P", "--yes"); r.code != 0 {
			e.t.Fatal(r.stderr)
		}
	}
}

// pendingPayment creates, through the SDK, a PENDING payment of 300.00
// RUB with ext_id ext.
func (e *testEnv) pendingPayment(ext string) *paykit.Payment {
	e.t.Helper()
	p, err := e.sdk.CreatePayment(context.Background(), paykit.CreatePaymentParams{ExtID: ext, Amount: decimal.RequireFromString("300.00")})
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

// posted returns the bodies POSTed to path so far.
func (e *testEnv) posted(path string) [][]byte {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out [][]byte
	for _, p := range e.posts {
		if p.path == path {
			out = append(out, p.body)
		}
	}
	return out
}

// commandEnv is the environment of a run of the binary: a fresh home (no
// config file), PATH, TZ=UTC and vars, nothing else of the test's own.
func (e *testEnv) commandEnv(vars map[string]string) []string {
	home := e.t.TempDir()
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "PATH=" + os.Getenv("PATH"), "TZ=UTC"}
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	return env
}

func (e *testEnv) runEnv(vars map[string]string, stdin string, args ...string) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = e.commandEnv(vars)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else if err != nil {
		e.t.Fatalf("paykit %v: %v", args, err)
	}
	e.mu.Lock()
	e.all.Write(out.Bytes())
	e.all.Write(errb.Bytes())
	e.mu.Unlock()
	return result{out.String(), errb.String(), code}
}

var (
	uuidRE   = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	maskedRE = regexp.MustCompile(`(\*{6,})[0-9]{4}`)
	holderRE = regexp.MustCompile(`"holder":"[^"]*"`)
	portRE   = regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+`)
	hostRE   = regexp.MustCompile(`\b127\.0\.0\.1:[0-9]+`)
	provRE   = regexp.MustCompile(`prv_[0-9a-f]+`)
	tmpRE    = regexp.MustCompile(`\S*/(receipt\.png|notes\.txt)`)
	// doctor's measures: the latency and the clock skew.
	latencyRE = regexp.MustCompile(`median of 3: [0-9.]+[µmn]?s \(fastest [0-9.]+[µmn]?s\)`)
	skewRE    = regexp.MustCompile(`skew -?[0-9hms.]+ `)
)

// normalise replaces what varies between runs; the payout test numbers
// are chosen so that their masked tails are not what varies.
func normalise(s string) string {
	s = uuidRE.ReplaceAllString(s, "<uuid>")
	s = portRE.ReplaceAllString(s, "<base>")
	s = hostRE.ReplaceAllString(s, "<host>")
	s = provRE.ReplaceAllString(s, "prv_<id>")
	s = tmpRE.ReplaceAllString(s, "<dir>/$1")
	s = latencyRE.ReplaceAllString(s, "median of 3: <d> (fastest <d>)")
	s = skewRE.ReplaceAllString(s, "skew <s> ")
	s = holderRE.ReplaceAllString(s, `"holder":"<holder>"`)
	s = maskedRE.ReplaceAllStringFunc(s, func(m string) string {
		if strings.HasSuffix(m, "1111") || strings.HasSuffix(m, "4567") {
			return m // the test's own payout numbers: stable
		}
		return maskedRE.ReplaceAllString(m, "${1}NNNN")
	})
	return s
}

// golden compares the normalised transcript of one command with its file.
func (e *testEnv) golden(name string, r result, args []string) {
	e.t.Helper()
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = shellQuote(a)
	}
	got := normalise("$ paykit " + strings.Join(quoted, " ") + "\n" + r.stdout + "--- stderr\n" + r.stderr + "--- exit " + strconv.Itoa(r.code) + "\n")
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			e.t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			e.t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		e.t.Fatalf("%s: %v (run go test -update)", name, err)
	}
	if got != string(want) {
		e.t.Errorf("%s differs from %s:\n--- got\n%s--- want\n%s", name, path, got, want)
	}
}

// step runs one command, checks its exit code and its golden file.
func (e *testEnv) step(name string, wantCode int, args ...string) result {
	e.t.Helper()
	r := e.run("", args...)
	if r.code != wantCode {
		e.t.Fatalf("%s: paykit %v exited %d, want %d\nstdout: %s\nstderr: %s", name, args, r.code, wantCode, r.stdout, r.stderr)
	}
	e.golden(name, r, args)
	return r
}

// id reads the "id" of a -o json answer.
func id(t *testing.T, r result) string {
	t.Helper()
	var v struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || v.ID == "" {
		t.Fatalf("no id in %q: %v", r.stdout, err)
	}
	return v.ID
}
