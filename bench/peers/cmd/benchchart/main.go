// Command benchchart draws the peers chart of BENCHMARKS.md from committed
// benchmark output, so the picture always matches numbers anyone can read
// and re-check. It reads the BenchmarkPeers lines of every input file
// (go test -bench output, any number of -count runs), and writes an SVG of
// each SDK's time and allocations per call relative to its raw call. The
// output depends on the input bytes alone, so CI can regenerate it and
// compare.
//
//	go run ./cmd/benchchart                 # testdata/*.txt -> chart.svg
//	go run ./cmd/benchchart -check          # fail if chart.svg is stale
//	go run ./cmd/benchchart -table          # the Markdown table, to stdout
//
// -prefix picks other blocked-alternation results, such as the root
// module's BenchmarkVsRaw, for a table:
//
//	go run ./cmd/benchchart -table -prefix BenchmarkVsRaw/ -in ../results/vsraw-after.txt
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

func main() {
	in := flag.String("in", "testdata/*.txt", "glob of benchmark output files")
	out := flag.String("out", "chart.svg", "SVG file to write (or compare with -check)")
	check := flag.Bool("check", false, "compare with -out instead of writing it; exit 1 if they differ")
	table := flag.Bool("table", false, "print the Markdown table of the figures instead")
	prefix := flag.String("prefix", "BenchmarkPeers/", "benchmark name prefix of the rows to read")
	flag.Parse()
	benchPrefix = *prefix
	if err := run(*in, *out, *check, *table, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchchart:", err)
		os.Exit(1)
	}
}

func run(glob, out string, check, table bool, stdout io.Writer) error {
	files, err := filepath.Glob(glob)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no input matches %s", glob)
	}
	slices.Sort(files)
	var peers []*peer
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if peers, err = parse(bytes.NewReader(data), peers); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
	}
	if len(peers) == 0 {
		return fmt.Errorf("no %s results in the input", benchPrefix)
	}
	if table {
		_, err := io.WriteString(stdout, markdown(peers))
		return err
	}
	svg := []byte(render(peers))
	if !check {
		return os.WriteFile(out, svg, 0o644)
	}
	old, err := os.ReadFile(out)
	if err != nil {
		return err
	}
	if !bytes.Equal(old, svg) {
		return fmt.Errorf("%s is stale: regenerate it with go run ./cmd/benchchart", out)
	}
	return nil
}

// benchPrefix is the name prefix of the benchmark rows parse reads; what
// follows it names the row.
var benchPrefix = "BenchmarkPeers/"

// peer is one SDK's runs: one value per run of each metric.
type peer struct {
	name    string
	metrics map[string][]float64
}

// parse adds the BenchmarkPeers results of one file to peers, keeping the
// order in which SDKs first appear.
func parse(r io.Reader, peers []*peer) ([]*peer, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], benchPrefix) {
			continue
		}
		name := strings.TrimPrefix(f[0], benchPrefix)
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i] // the GOMAXPROCS suffix
			}
		}
		i := slices.IndexFunc(peers, func(p *peer) bool { return p.name == name })
		if i < 0 {
			peers = append(peers, &peer{name: name, metrics: map[string][]float64{}})
			i = len(peers) - 1
		}
		// f[1] is the iteration count; value-unit pairs follow.
		for j := 2; j+1 < len(f); j += 2 {
			v, err := strconv.ParseFloat(f[j], 64)
			if err != nil {
				return nil, fmt.Errorf("%s: value %q: %w", f[0], f[j], err)
			}
			peers[i].metrics[f[j+1]] = append(peers[i].metrics[f[j+1]], v)
		}
	}
	return peers, sc.Err()
}

// summary is what the chart and the table show of one SDK.
type summary struct {
	name                    string
	runs                    int
	ratio, ratioLo, ratioHi float64 // median of the runs' median ratios, and their range
	sdkAllocs, rawAllocs    float64 // medians over runs, per call
	sdkNs, rawNs            float64
}

func (p *peer) summary() summary {
	r := p.metrics["ratio"]
	return summary{
		name: p.name, runs: len(r),
		ratio: median(r), ratioLo: minOf(r), ratioHi: maxOf(r),
		sdkAllocs: median(p.metrics["sdk-allocs/call"]), rawAllocs: median(p.metrics["raw-allocs/call"]),
		sdkNs: median(p.metrics["sdk-ns/call"]), rawNs: median(p.metrics["raw-ns/call"]),
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

func minOf(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return slices.Min(xs)
}

func maxOf(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return slices.Max(xs)
}

// markdown is the table BENCHMARKS.md shows beside the chart.
func markdown(peers []*peer) string {
	var b strings.Builder
	b.WriteString("| call | time SDK / raw: median (range over runs) | runs | µs per call SDK vs raw | allocs per call SDK vs raw | extra allocs |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, p := range peers {
		s := p.summary()
		fmt.Fprintf(&b, "| %s | %.2f× (%.2f–%.2f) | %d | %.1f vs %.1f | %.1f vs %.1f | %+.1f |\n",
			s.name, s.ratio, s.ratioLo, s.ratioHi, s.runs, s.sdkNs/1000, s.rawNs/1000,
			s.sdkAllocs, s.rawAllocs, s.sdkAllocs-s.rawAllocs)
	}
	return b.String()
}

// Chart geometry, in SVG user units.
const (
	width    = 760
	rowH     = 34
	top      = 58
	labelW   = 90
	panelW   = 300
	panelGap = 50
)

// render draws two panels of horizontal bars, one row per SDK: time per
// call relative to raw (bar: median of the runs; whisker: their range), and
// allocations per call relative to raw. A dashed line marks 1×, the raw
// call.
func render(peers []*peer) string {
	sums := make([]summary, len(peers))
	for i, p := range peers {
		sums[i] = p.summary()
	}
	height := top + rowH*len(sums) + 40
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	b.WriteString(`<text x="10" y="20" font-size="14" font-weight="bold">Cost per call relative to the same call written by hand (1× = raw)</text>` + "\n")

	timeMax, allocMax := 1.0, 1.0
	for _, s := range sums {
		timeMax = max(timeMax, s.ratioHi, s.ratio)
		allocMax = max(allocMax, s.sdkAllocs/s.rawAllocs)
	}
	panel(&b, labelW, "time per call (median of runs; whisker: range)", niceCeil(timeMax), sums,
		func(s summary) (float64, float64, float64, string) {
			return s.ratio, s.ratioLo, s.ratioHi, fmt.Sprintf("%.2f×", s.ratio)
		})
	panel(&b, labelW+panelW+panelGap, "allocations per call", niceCeil(allocMax), sums,
		func(s summary) (float64, float64, float64, string) {
			r := s.sdkAllocs / s.rawAllocs
			return r, r, r, fmt.Sprintf("%.2f× (%+.0f)", r, s.sdkAllocs-s.rawAllocs)
		})
	for i, s := range sums {
		y := top + rowH*i + rowH/2 + 4
		fmt.Fprintf(&b, `<text x="10" y="%d">%s</text>`+"\n", y, esc(s.name))
	}
	fmt.Fprintf(&b, `<text x="10" y="%d" fill="#555555">from bench/peers/testdata: BenchmarkPeers, blocked alternation of 50-call blocks, %d runs</text>`+"\n",
		height-10, sums[0].runs)
	b.WriteString("</svg>\n")
	return b.String()
}

// panel draws one panel at x0 whose scale runs from 0 to xmax.
func panel(b *strings.Builder, x0 int, title string, xmax float64, sums []summary,
	value func(summary) (v, lo, hi float64, label string)) {
	scale := func(v float64) float64 { return float64(x0) + v/xmax*float64(panelW-70) }
	fmt.Fprintf(b, `<text x="%d" y="%d" font-weight="bold">%s</text>`+"\n", x0, top-18, esc(title))
	bottom := top + rowH*len(sums)
	for t := 0.0; t <= xmax+1e-9; t += tick(xmax) {
		x := scale(t)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e0e0e0"/>`+"\n", x, top-6, x, bottom)
		fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#555555">%.1f×</text>`+"\n", x, bottom+14, t)
	}
	for i, s := range sums {
		v, lo, hi, label := value(s)
		y := top + rowH*i + 7
		fill := "#9aa5b1"
		if i == 0 {
			fill = "#2f6fdf"
		}
		fmt.Fprintf(b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`+"\n", x0, y, scale(v)-float64(x0), rowH-14, fill)
		if hi > lo {
			cy := y + (rowH-14)/2
			fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#000000"/>`+"\n", scale(lo), cy, scale(hi), cy)
			fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#000000"/>`+"\n", scale(lo), cy-5, scale(lo), cy+5)
			fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#000000"/>`+"\n", scale(hi), cy-5, scale(hi), cy+5)
		}
		fmt.Fprintf(b, `<text x="%.1f" y="%d">%s</text>`+"\n", scale(max(v, hi))+6, y+rowH/2-3, esc(label))
	}
	one := scale(1)
	fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#d03030" stroke-dasharray="4 3"/>`+"\n", one, top-6, one, bottom)
}

// niceCeil rounds a scale's top up to the next half step above x.
func niceCeil(x float64) float64 { return math.Ceil(x*2+0.25) / 2 }

// tick is the grid step for a scale that ends at xmax.
func tick(xmax float64) float64 {
	if xmax > 3 {
		return 1
	}
	return 0.5
}

// esc escapes text for SVG.
func esc(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")
	return r.Replace(s)
}
