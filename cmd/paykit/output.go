package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go/internal/mask"
)

// maxCapture caps the answer kept for -o json: a payout page of the
// service's largest limit fits many times over.
const maxCapture = 64 << 20

// capture is the transport under the SDK's client. It keeps the body of the
// last successful answer, so that -o json prints exactly what the API
// answered (bytes, number spellings and all) while the command still goes
// through the SDK's typed call: its validation, signing, retries,
// classification and reconciliation. (DESIGN.md's Client.Do into a
// json.RawMessage would do the same for calls the CLI makes itself; the
// typed methods are kept because they settle unknown outcomes.) It also
// keeps the Date header and the time of the last answer for paykit doctor.
type capture struct {
	base http.RoundTripper

	mu      sync.Mutex
	body    []byte
	seq     int // answers kept so far: tells a new page from the last one
	date    string
	elapsed time.Duration
	// rate holds the rate-limit headers seen on any answer, for doctor.
	rate map[string]string
	// observe, when set, sees the body of each successful answer (wait's
	// status line).
	observe func(body []byte)
	// head is the status line and headers of the last answer, whatever
	// its status, for paykit api -i.
	head responseHead
}

// responseHead is an answer's status line and headers.
type responseHead struct {
	proto, status string
	header        http.Header
}

// setObserver sets (or, with nil, removes) the function that sees each
// successful answer's body.
func (c *capture) setObserver(f func([]byte)) {
	c.mu.Lock()
	c.observe = f
	c.mu.Unlock()
}

// rateHeaders are the rate-limit headers in use (the IETF draft's and the
// common X- ones); the spec shows none.
var rateHeaders = []string{"RateLimit", "RateLimit-Policy", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset",
	"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After"}

func (c *capture) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := c.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	elapsed := time.Since(start)
	c.mu.Lock()
	c.date, c.elapsed = resp.Header.Get("Date"), elapsed
	c.head = responseHead{resp.Proto, resp.Status, resp.Header.Clone()}
	for _, h := range rateHeaders {
		if v := resp.Header.Get(h); v != "" {
			if c.rate == nil {
				c.rate = map[string]string{}
			}
			c.rate[h] = v
		}
	}
	c.mu.Unlock()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp, nil
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxCapture+1))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	c.mu.Lock()
	c.body = b
	c.seq++
	observe := c.observe
	c.mu.Unlock()
	if observe != nil {
		observe(b)
	}
	return resp, nil
}

// lastHead returns the status line and headers of the last answer.
func (c *capture) lastHead() responseHead {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.head
}

// last returns the body of the last successful answer.
func (c *capture) last() []byte {
	b, _ := c.lastSeq()
	return b
}

// lastSeq is last with its sequence number.
func (c *capture) lastSeq() ([]byte, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.body, c.seq
}

// record is one resource: labelled values in order, for a person (the
// table) and for a spreadsheet (csv). They differ in two ways: csv has
// every column, empty or not, so that rows of one command line up, and an
// amount there is plain decimal text with its currency in a column of its
// own, where the table says "1500.50 RUB".
type record struct {
	keys, values       []string
	csvKeys, csvValues []string
}

// add shows k in the table and in csv.
func (r *record) add(k, v string) {
	r.keys = append(r.keys, k)
	r.values = append(r.values, v)
	r.csvOnly(k, v)
}

// opt shows k in the table only when it has a value; csv always has it.
func (r *record) opt(k, v string) {
	if v != "" {
		r.keys = append(r.keys, k)
		r.values = append(r.values, v)
	}
	r.csvOnly(k, v)
}

// csvOnly is a column the table does not show (a currency the table
// writes beside its amount).
func (r *record) csvOnly(k, v string) {
	r.csvKeys = append(r.csvKeys, k)
	r.csvValues = append(r.csvValues, v)
}

// amount shows d: "1500.50 RUB" in the table, "1500.50" in csv (the
// caller adds the currency column). present false leaves the table line
// out and the csv cell empty.
func (r *record) amount(k string, d decimal.Decimal, cur string, present bool) {
	if !present {
		r.csvOnly(k, "")
		return
	}
	v := money(d)
	if cur != "" {
		v += " " + cur
	}
	r.keys = append(r.keys, k)
	r.values = append(r.values, v)
	r.csvOnly(k, money(d))
}

// list is rows of one kind of resource.
type list struct {
	header []string
	rows   [][]string
}

// printRecord writes one resource: the API's answer for -o json, aligned
// "key  value" lines for the table, a header and one row for csv.
func (a *app) printRecord(raw []byte, r record) error {
	if a.quiet {
		for i, k := range r.keys {
			if k == "id" {
				_, err := fmt.Fprintln(a.out, safeCell(r.values[i]))
				return err
			}
		}
		return nil
	}
	switch a.output {
	case "json":
		return a.emitJSON(a.maskJSON(raw))
	case "csv":
		return writeCSV(a.out, list{header: r.csvKeys, rows: [][]string{r.csvValues}})
	}
	rows := make([][]string, len(r.keys))
	for i, k := range r.keys {
		rows[i] = []string{k + ":", r.values[i]}
	}
	return writeTable(a.out, rows)
}

// printList writes rows: the API's answer for -o json, columns for the
// table, RFC 4180 for csv.
func (a *app) printList(raw []byte, l list) error {
	if a.quiet {
		if len(l.header) == 0 || l.header[0] != "id" && l.header[0] != "code" {
			return nil
		}
		var b strings.Builder
		for _, row := range l.rows {
			b.WriteString(safeCell(row[0]) + "\n")
		}
		_, err := io.WriteString(a.out, b.String())
		return err
	}
	switch a.output {
	case "json":
		return a.emitJSON(a.maskJSON(raw))
	case "csv":
		return writeCSV(a.out, l)
	}
	return writeTable(a.out, append([][]string{upper(l.header)}, l.rows...))
}

// writeTable aligns rows in columns two spaces apart, by display width
// (a Cyrillic letter is one column, a CJK one two, a combining accent
// none), with every cell made safe for a terminal first (see safeCell).
// text/tabwriter counts runes, which misaligns wide text, and passes
// control characters through.
func writeTable(w io.Writer, rows [][]string) error {
	var widths []int
	cells := make([][]string, len(rows))
	for i, row := range rows {
		cells[i] = make([]string, len(row))
		for j, v := range row {
			v = safeCell(v)
			cells[i][j] = v
			if j >= len(widths) {
				widths = append(widths, 0)
			}
			widths[j] = max(widths[j], runewidth.StringWidth(v))
		}
	}
	var b strings.Builder
	for _, row := range cells {
		for j, v := range row {
			b.WriteString(v)
			if j < len(row)-1 {
				b.WriteString(strings.Repeat(" ", widths[j]-runewidth.StringWidth(v)+2))
			}
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// safeCell neutralises what a terminal would act on rather than show: C0
// controls (ESC starts a sequence that can rewrite the screen or the
// title, CR overwrites the line), DEL and the C1 controls (U+0080 to
// U+009F; U+009B is a one-character CSI), and bytes that are not UTF-8.
// Each becomes visible text, \x1b for ESC, so the value stays
// recognisable. Data the API echoes (an ext_id, a holder's name, a
// message) reaches a person's terminal only through here.
func safeCell(s string) string {
	clean := true
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == utf8.RuneError {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, "\\x%02x", s[i])
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\x%02x", r)
		case r >= 0x80 && r <= 0x9f:
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func upper(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = strings.ToUpper(v)
	}
	return out
}

// maskJSON masks, in the API's answer, each card or phone number the typed
// result held, leaving every other byte as the service wrote it. Card and
// phone numbers are secrets by this project's rules: they reach no output
// unless --unmask asks for them. It works on the JSON's string tokens, not
// on bytes, so a number the service wrote with escapes ("\u0034111...")
// is found all the same; a string holding one is re-encoded with the
// number masked.
func (a *app) maskJSON(raw []byte) []byte {
	if len(a.sensitive) == 0 {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	var out []byte
	copied, prev := 0, 0
	for {
		tok, err := dec.Token()
		if err != nil {
			break // the end, or not JSON: writeJSON says so
		}
		end := int(dec.InputOffset())
		if s, ok := tok.(string); ok {
			if m := a.maskText(s); m != s {
				start := prev + bytes.IndexByte(raw[prev:end], '"')
				out = append(out, raw[copied:start]...)
				out = appendJSONString(out, m)
				copied = end
			}
		}
		prev = end
	}
	if out == nil {
		return raw
	}
	return append(out, raw[copied:]...)
}

// maskText masks every sensitive number inside s.
func (a *app) maskText(s string) string {
	for _, n := range a.sensitive {
		if strings.Contains(s, n) {
			s = strings.ReplaceAll(s, n, masked(n))
		}
	}
	return s
}

// appendJSONString appends s as a JSON string, without the HTML escaping
// of json.Marshal (a masked "+" or "&" stays as the service would write it).
func appendJSONString(dst []byte, s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return append(dst, bytes.TrimRight(b.Bytes(), "\n")...)
}

// emitJSON prints JSON for -o json: shaped by --json and --jq when
// asked, otherwise as it is. raw is masked already.
func (a *app) emitJSON(raw []byte) error {
	if a.shape.active() {
		return a.shape.emit(a, raw)
	}
	return writeJSON(a.out, raw)
}

// writeJSON prints the answer as the service wrote it, with one newline:
// re-indenting would be a change, and jq does it for whoever wants it.
func writeJSON(w io.Writer, raw []byte) error {
	raw = bytes.TrimSpace(raw)
	if !json.Valid(raw) {
		return fmt.Errorf("the answer is not JSON (%d bytes)", len(raw))
	}
	_, err := fmt.Fprintf(w, "%s\n", raw)
	return err
}

// writeCSV writes RFC 4180 (CRLF line ends, as the RFC and spreadsheets
// expect) with a header row, none when l.header is nil (a live feed's
// rows after its first).
func writeCSV(w io.Writer, l list) error {
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	if l.header != nil {
		if err := cw.Write(l.header); err != nil {
			return err
		}
	}
	for _, row := range l.rows {
		if err := cw.Write(neutralise(row)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// neutralise guards spreadsheet users against formula injection: a text
// field the API echoes (a holder's name, an ext_id) starting with = + - @
// would run as a formula in Excel. Amounts are plain positive decimals and
// never start with those.
func neutralise(row []string) []string {
	out := row
	for i, v := range row {
		if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
			if &out[0] == &row[0] {
				out = append([]string(nil), row...)
			}
			out[i] = "'" + v
		}
	}
	return out
}

// money shows an amount with at least two decimals, more when it has them
// (USDT carries up to six): 1500 -> 1500.00, 12.345678 stays.
func money(d decimal.Decimal) string {
	return d.StringFixed(max(2, -d.Exponent()))
}

// when shows a time in UTC (or local time with --local-time), "" for zero.
func (a *app) when(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	if a.localTime {
		return t.Local().Format(time.RFC3339)
	}
	return t.UTC().Format(time.RFC3339)
}

// mask is masked, remembering number so that -o json masks it too.
func (a *app) mask(number string) string {
	if number == "" || a.unmask {
		return number
	}
	a.sensitive = append(a.sensitive, number)
	return masked(number)
}

// masked is a card or phone number masked by internal/mask, the rules the
// SDK's logs and the sandbox use too: a number reads alike everywhere.
func masked(number string) string {
	return mask.Value(number)
}
