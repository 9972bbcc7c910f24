package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/paykit-dev/paykit-go/sandbox"
)

// The document describes the service and marks the sandbox's own choices
// as such (issue 20, point 9): success answers are 2XX where the spec
// names no status; PAY_002 for a malformed or oversized body, and the
// large-body 503, carry an x-sandbox note; transfers and withdrawals refuse
// an oversized body with their own codes; the spec's defaults (limit 100,
// method CARD) are in the schema; the payout ext_id cap is written, as the
// sandbox applies it.
func TestDocumentMarksSandboxChoices(t *testing.T) {
	doc := loadDoc(t)
	ops := map[string]*openapi3.Operation{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			ops[op.OperationID] = op
			if !strings.HasPrefix(path, "/v1/") {
				continue
			}
			for code := range op.Responses.Map() {
				if strings.HasPrefix(code, "2") && code != "2XX" {
					t.Errorf("%s %s: success answer %s; the spec names no success status, so it is 2XX", method, path, code)
				}
			}
			if op.Responses.Value("2XX") == nil {
				t.Errorf("%s %s: no 2XX answer", method, path)
			}
		}
	}
	sandboxNote := func(where string, r *openapi3.ResponseRef) {
		t.Helper()
		if r == nil || r.Value == nil {
			t.Errorf("%s: not documented", where)
			return
		}
		if note, _ := r.Value.Extensions["x-sandbox"].(string); note == "" {
			t.Errorf("%s: no x-sandbox note on the sandbox's own answer", where)
		}
	}
	for _, id := range []string{"confirmPayment", "cancelPayment", "cancelDispute"} {
		r := ops[id].Responses.Value("400")
		if r != nil && slices.Contains(errorCodes(r.Value), "PAY_002") {
			sandboxNote(id+" 400 (PAY_002 for a malformed or oversized body)", r)
		}
	}
	sandboxNote("components.responses.PAY_002", doc.Components.Responses["PAY_002"])
	sandboxNote("confirmPayment 503 (SANDBOX_BUSY)", ops["confirmPayment"].Responses.Value("503"))

	for id, want := range map[string]string{"createTransfer": "TRF_001", "createWithdrawal": "WDR_001"} {
		r := ops[id].Responses.Value("400")
		if r == nil {
			t.Errorf("%s: no 400 answer", id)
			continue
		}
		codes := errorCodes(r.Value)
		if !slices.Contains(codes, want) || slices.Contains(codes, "PAY_002") {
			t.Errorf("%s 400 codes %v: want %s (also for an oversized body), never PAY_002", id, codes, want)
		}
	}

	var limit *openapi3.Parameter
	for _, p := range ops["listPayouts"].Parameters {
		if p.Value != nil && p.Value.Name == "limit" {
			limit = p.Value
		}
	}
	if limit == nil || limit.Schema == nil || fmt.Sprint(limit.Schema.Value.Default) != "100" {
		t.Errorf("listPayouts limit: want default: 100 in its schema")
	}
	schema := func(name, prop string) *openapi3.Schema {
		s := doc.Components.Schemas[name]
		if s == nil || s.Value.Properties[prop] == nil {
			t.Fatalf("schema %s has no property %s", name, prop)
		}
		return s.Value.Properties[prop].Value
	}
	if m := schema("CreatePaymentRequest", "method"); fmt.Sprint(m.Default) != "CARD" {
		t.Errorf("CreatePaymentRequest.method: default %v, want CARD", m.Default)
	}
	ext := schema("CreatePayoutRequest", "ext_id")
	if ext.MaxLength == nil || *ext.MaxLength != sandbox.MaxPayoutExtIDLength || ext.Extensions["x-sandbox"] == nil {
		t.Errorf("CreatePayoutRequest.ext_id: maxLength %v, want %d marked x-sandbox (the spec states no cap)",
			ext.MaxLength, sandbox.MaxPayoutExtIDLength)
	}
	if a := schema("OpenDisputeRequest", "amount"); !hasBounds(a, 100, 300000) {
		t.Errorf("OpenDisputeRequest.amount: want the payment bounds 100..300000")
	}

	// The sandbox's own choices where the spec is silent (issue 28, point
	// 3): positive payout, transfer and withdrawal amounts, the payout bank
	// cap, the dispute amount bounds, the PAY_005 threshold and the
	// payment validity span; and the bank country the sandbox sends.
	for _, c := range [][2]string{{"CreatePayoutRequest", "amount"}, {"CreatePayoutRequest", "bank"},
		{"CreateTransferRequest", "amount"}, {"CreateWithdrawalRequest", "amount"}, {"OpenDisputeRequest", "amount"}} {
		if note, _ := schema(c[0], c[1]).Extensions["x-sandbox"].(string); note == "" {
			t.Errorf("%s.%s: no x-sandbox note on the sandbox's own bound", c[0], c[1])
		}
	}
	sandboxNote("createPayment 429 (the PAY_005 threshold)", ops["createPayment"].Responses.Value("429"))
	if vu := doc.Components.Schemas["PaymentCommon"].Value.Properties["valid_until"]; vu == nil ||
		vu.Extensions["x-sandbox"] == nil && vu.Value.Extensions["x-sandbox"] == nil {
		t.Errorf("PaymentCommon.valid_until: no x-sandbox note on the validity span")
	}
	if c := schema("Bank", "country"); c.Type == nil || !c.Type.Is("string") || c.Extensions["x-sandbox"] == nil {
		t.Errorf("Bank.country: want a string marked x-sandbox (the sandbox sends it, the spec does not list it)")
	}
}

// hasBounds reports whether s (or a schema in its allOf) has exactly this
// minimum and maximum.
func hasBounds(s *openapi3.Schema, lo, hi float64) bool {
	if s.Min != nil && s.Max != nil && *s.Min == lo && *s.Max == hi {
		return true
	}
	for _, sub := range s.AllOf {
		if sub.Value != nil && hasBounds(sub.Value, lo, hi) {
			return true
		}
	}
	return false
}
