package paykit_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

// The operation table, openapi.yaml and the sandbox must list the same
// endpoints: adding one in a single place is the mistake these tests catch,
// and each failure names the place still missing (docs/layout.md, "How to
// add an endpoint").

// openAPIOperations reads "METHOD /path" for every operation of
// openapi.yaml, with the paths as the document writes them ({id}, {extId}).
func openAPIOperations(t *testing.T) map[string]bool {
	t.Helper()
	doc, err := os.ReadFile("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pathRe := regexp.MustCompile(`^  (/\S+):\s*$`)
	methodRe := regexp.MustCompile(`^    (get|post|put|patch|delete):`)
	ops := map[string]bool{}
	var path string
	inPaths := false
	for _, line := range strings.Split(string(doc), "\n") {
		switch {
		case line == "paths:":
			inPaths = true
		case inPaths && line != "" && line[0] != ' ' && line[0] != '#':
			inPaths = false
		case !inPaths:
		case pathRe.MatchString(line):
			path = pathRe.FindStringSubmatch(line)[1]
		case methodRe.MatchString(line) && path != "":
			ops[strings.ToUpper(methodRe.FindStringSubmatch(line)[1])+" "+path] = true
		}
	}
	if len(ops) == 0 {
		t.Fatal("no operations found in openapi.yaml")
	}
	return ops
}

func TestOperationTableMatchesOpenAPI(t *testing.T) {
	t.Parallel()
	doc := openAPIOperations(t)
	rows := map[string]bool{}
	for _, r := range paykit.OperationRows() {
		key := r.Method + " " + r.Route
		rows[key] = true
		if !doc[key] {
			t.Errorf("operation %s (%s) is not in openapi.yaml: add the path and method there", r.Name, key)
		}
	}
	for key := range doc {
		if strings.HasPrefix(key, "GET /v1/") || strings.HasPrefix(key, "POST /v1/") {
			if !rows[key] {
				t.Errorf("openapi.yaml has %s with no row in the operation table: add one to operations in policy.go", key)
			}
		}
	}
}

// TestOperationTableMatchesSandbox sends every row, signed, to the sandbox
// with placeholder ids: whatever the sandbox answers (a 404 for an unknown
// id, a 400 for an empty body), it must not be its catch-all "no such
// endpoint". An empty body moves no money.
func TestOperationTableMatchesSandbox(t *testing.T) {
	t.Parallel()
	sb := sandbox.New(sandbox.Config{})
	t.Cleanup(sb.Close)
	srv := httptest.NewServer(sb)
	t.Cleanup(srv.Close)
	c := sandboxClient(t, srv.URL)
	// The catch-all's code is what the loop looks for: an unrouted path must
	// answer it, or no missing route could ever be reported.
	const catchAll = "NOT_FOUND"
	var probe map[string]any
	var probeErr *paykit.Error
	if err := c.Do(context.Background(), http.MethodGet, "/v1/no-such-endpoint", nil, &probe); !errors.As(err, &probeErr) || probeErr.Code != catchAll {
		t.Fatalf("an unrouted path answered %v, not the catch-all's %s", err, catchAll)
	}
	rows := paykit.OperationRows()
	if len(rows) == 0 {
		t.Fatal("the operation table is empty")
	}
	fill := strings.NewReplacer("{id}", "00000000-0000-4000-8000-000000000000", "{extId}", "no-such-ext-id")
	for _, r := range rows {
		var body any
		if r.Method != http.MethodGet {
			body = map[string]any{}
		}
		var out map[string]any
		err := c.Do(context.Background(), r.Method, fill.Replace(r.Route), body, &out)
		var apiErr *paykit.Error
		if errors.As(err, &apiErr) && apiErr.Code == catchAll {
			t.Errorf("operation %s (%s %s): the sandbox has no such route: add it to the sandbox's routes", r.Name, r.Method, r.Route)
		}
		if err != nil && !errors.As(err, &apiErr) {
			t.Errorf("operation %s: %v", r.Name, fmt.Sprint(err))
		}
	}
}

// TestOperationListHoldsEveryRow: a row declared in policy.go but left out
// of the operations list would escape the two checks above.
func TestOperationListHoldsEveryRow(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("policy.go")
	if err != nil {
		t.Fatal(err)
	}
	declared := regexp.MustCompile(`(?m)^\s*op\w+\s*=\s*&operation\{name: "(\w+)"`).FindAllStringSubmatch(string(src), -1)
	listed := map[string]bool{}
	for _, r := range paykit.OperationRows() {
		listed[r.Name] = true
	}
	if len(declared) == 0 {
		t.Fatal("no operation rows found in policy.go")
	}
	for _, d := range declared {
		if !listed[d[1]] {
			t.Errorf("operation %s is declared in policy.go but missing from operations", d[1])
		}
	}
}
