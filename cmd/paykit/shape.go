package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/itchyny/gojq"
)

// Output shaping, as gh does it: --json FIELDS keeps the named fields of
// the API's answer (of each item, for a list), --jq EXPR filters the JSON
// with a jq expression (gojq, the maintained Go jq that gh uses), and
// -q/--quiet prints ids alone, one a line, for a shell loop. All of them
// work on the answer after masking: --jq cannot unmask a card number.
type shape struct {
	// fields are --json's, in the order given; nil when not asked.
	fields []string
	// jq is --jq's compiled expression; nil when not asked.
	jq *gojq.Code
	// ctx bounds a jq run (Ctrl-C, --timeout): an expression may loop.
	ctx context.Context
	// typed: fields were checked against the resource's type before
	// sending (checkFields), so one an answer lacks prints as null
	// instead of failing the output of a move that was done.
	typed bool
}

// parseShape checks the shaping flags before anything is sent: a jq
// expression that does not parse is a usage error, exit 2.
func parseShape(ctx context.Context, jsonFields, jq string, quiet bool, output string, outputSet bool) (*shape, error) {
	s := &shape{ctx: ctx}
	if jsonFields != "" {
		for _, f := range strings.Split(jsonFields, ",") {
			if f = strings.TrimSpace(f); f != "" && !slices.Contains(s.fields, f) {
				s.fields = append(s.fields, f)
			}
		}
		if len(s.fields) == 0 {
			return nil, usagef("--json: name fields, such as --json id,status,amount")
		}
	}
	if jq != "" {
		q, err := gojq.Parse(jq)
		if err != nil {
			return nil, usagef("--jq: %v", err)
		}
		if s.jq, err = gojq.Compile(q); err != nil {
			return nil, usagef("--jq: %v", err)
		}
	}
	shaped := s.fields != nil || s.jq != nil
	switch {
	case shaped && quiet:
		return nil, usagef("-q prints ids alone: it does not go with --json or --jq")
	case shaped && outputSet && output != "json":
		return nil, usagef("--json and --jq print JSON: they do not go with -o %s", output)
	}
	return s, nil
}

// active tells whether the output is shaped as JSON.
func (s *shape) active() bool { return s != nil && (s.fields != nil || s.jq != nil) }

// listKeys are the members that hold a list answer's items.
var listKeys = []string{"payouts", "terminals", "banks"}

// items returns the items of a list answer: the array itself, or the array
// of its envelope ({"payouts":[...],"total":N}).
func items(v any) ([]any, bool) {
	switch t := v.(type) {
	case []any:
		return t, true
	case map[string]any:
		for _, k := range listKeys {
			if a, ok := t[k].([]any); ok {
				return a, true
			}
		}
	}
	return nil, false
}

// emit writes raw (already masked) shaped by s: --json's fields, then
// --jq's filter.
func (s *shape) emit(a *app, raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimSpace(raw)))
	dec.UseNumber() // amounts keep the service's spelling
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("the answer is not JSON (%d bytes)", len(raw))
	}
	if s.fields != nil {
		var err error
		if v, err = s.pick(v); err != nil {
			return err
		}
	}
	if s.jq == nil {
		b, err := gojq.Marshal(v)
		if err != nil {
			return err
		}
		return writeJSON(a.out, b)
	}
	// Each result is written as it is produced, as jq does: a program
	// that yields without end (repeat) feeds a reader that stops early
	// (head), and the first write that fails ends it.
	tty := a.env.isTerminal(a.out)
	iter := s.jq.RunWithContext(s.ctx, v)
	var b []byte
	for {
		r, ok := iter.Next()
		if !ok {
			return nil
		}
		if err, ok := r.(error); ok {
			if err, ok := err.(*gojq.HaltError); ok && err.Value() == nil {
				return nil
			}
			if s.ctx.Err() != nil {
				return s.ctx.Err()
			}
			return fmt.Errorf("--jq: %v", err)
		}
		// Strings print raw, as gh's --jq and jq -r do; on a terminal
		// made safe like a table cell.
		b = b[:0]
		if str, ok := r.(string); ok {
			if tty {
				str = safeCell(str)
			}
			b = append(b, str...)
		} else {
			out, err := gojq.Marshal(r)
			if err != nil {
				return err
			}
			b = append(b, out...)
		}
		if _, err := a.out.Write(append(b, '\n')); err != nil {
			return err
		}
	}
}

// pick keeps s.fields of an object, or of each item of a list (which then
// prints as an array of objects, as gh's --json does). A field that no
// item has is a usage error naming those there are.
func (s *shape) pick(v any) (any, error) {
	list, isList := items(v)
	if !isList {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, usagef("--json: the answer is not an object")
		}
		list = []any{obj}
	}
	seen := map[string]bool{}
	for _, it := range list {
		if m, ok := it.(map[string]any); ok {
			for k := range m {
				seen[k] = true
			}
		}
	}
	for _, f := range s.fields {
		if !seen[f] && len(list) > 0 && !s.typed {
			var have []string
			for k := range seen {
				have = append(have, k)
			}
			slices.Sort(have)
			return nil, usagef("--json: no field %q in the answer; its fields: %s", f, strings.Join(have, ", "))
		}
	}
	out := make([]any, 0, len(list))
	for _, it := range list {
		m, _ := it.(map[string]any)
		o := make(map[string]any, len(s.fields))
		for _, f := range s.fields {
			o[f] = m[f] // null where an item lacks it
		}
		out = append(out, o)
	}
	if !isList {
		return out[0], nil
	}
	return out, nil
}

// thousands writes n with commas between groups of three digits, as the
// truncation notice shows a count.
func thousands(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
