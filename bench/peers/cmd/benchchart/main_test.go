package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sample = `goos: linux
BenchmarkPeers/paykit-go-2   	      60	   4525765 ns/op	         8.000 extra-allocs/call	         1.10 ratio	         1.0 ratio-q1	         1.2 ratio-q3	       120 raw-allocs/call	     40000 raw-ns/call	       128 sdk-allocs/call	     44000 sdk-ns/call
BenchmarkPeers/stripe-go-2   	      60	  16496900 ns/op	        66.00 extra-allocs/call	         1.30 ratio	         1.2 ratio-q1	         1.4 ratio-q3	       124 raw-allocs/call	    100000 raw-ns/call	       190 sdk-allocs/call	    130000 sdk-ns/call
BenchmarkPeers/paykit-go-2   	      60	   4525765 ns/op	         8.000 extra-allocs/call	         1.00 ratio	         1.0 ratio-q1	         1.2 ratio-q3	       120 raw-allocs/call	     42000 raw-ns/call	       128 sdk-allocs/call	     44000 sdk-ns/call
BenchmarkPeers/paykit-go-2   	      60	   4525765 ns/op	         8.000 extra-allocs/call	         1.20 ratio	         1.0 ratio-q1	         1.2 ratio-q3	       120 raw-allocs/call	     44000 raw-ns/call	       128 sdk-allocs/call	     44000 sdk-ns/call
BenchmarkOther-2 1 5 ns/op
PASS
`

func TestParseAndSummarise(t *testing.T) {
	peers, err := parse(strings.NewReader(sample), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(peers) != 2 || peers[0].name != "paykit-go" || peers[1].name != "stripe-go" {
		t.Fatalf("peers: %+v", peers)
	}
	s := peers[0].summary()
	if s.runs != 3 || s.ratio != 1.10 || s.ratioLo != 1.00 || s.ratioHi != 1.20 || s.rawNs != 42000 || s.sdkAllocs != 128 {
		t.Errorf("summary: %+v", s)
	}
	table := markdown(peers)
	for _, want := range []string{"| paykit-go | 1.10× (1.00–1.20) | 3 | 44.0 vs 42.0 | 128.0 vs 120.0 | +8.0 |", "| stripe-go | 1.30× (1.30–1.30) | 1 |"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

func TestRenderIsDeterministic(t *testing.T) {
	peers, err := parse(strings.NewReader(sample), nil)
	if err != nil {
		t.Fatal(err)
	}
	a, b := render(peers), render(peers)
	if a != b {
		t.Fatal("two renders of the same input differ")
	}
	for _, want := range []string{"<svg ", "paykit-go", "stripe-go", "1.10×", "1.53× (+66)", "3 runs", "</svg>"} {
		if !strings.Contains(a, want) {
			t.Errorf("chart lacks %q", want)
		}
	}
}

func TestCheckFailsOnAStaleChart(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "a.txt"), filepath.Join(dir, "chart.svg")
	if err := os.WriteFile(in, []byte(sample), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(in, out, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := run(in, out, true, false, nil); err != nil {
		t.Fatalf("check of a fresh chart: %v", err)
	}
	if err := os.WriteFile(out, []byte("<svg/>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(in, out, true, false, nil); err == nil {
		t.Fatal("check passed on a stale chart")
	}
	var buf bytes.Buffer
	if err := run(in, out, false, true, &buf); err != nil || !strings.Contains(buf.String(), "| call |") {
		t.Fatalf("table: %v %q", err, buf.String())
	}
}

// The committed chart is what the committed benchmark output gives.
func TestCommittedChartIsUpToDate(t *testing.T) {
	if err := run("../../testdata/*.txt", "../../chart.svg", true, false, nil); err != nil {
		t.Fatal(err)
	}
}

// -prefix reads the root module's blocked pairs the same way.
func TestPrefixPicksOtherRows(t *testing.T) {
	defer func(p string) { benchPrefix = p }(benchPrefix)
	benchPrefix = "BenchmarkVsRaw/"
	in := "BenchmarkVsRaw/GetPayment-2 60 1 ns/op 1.04 ratio 115.4 sdk-allocs/call 119.4 raw-allocs/call\n" + sample
	peers, err := parse(strings.NewReader(in), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(peers) != 1 || peers[0].name != "GetPayment" || peers[0].summary().ratio != 1.04 {
		t.Fatalf("peers: %+v", peers)
	}
}
