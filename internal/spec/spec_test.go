package spec

import (
	"os"
	"regexp"
	"slices"
	"testing"
)

// Every code openapi.yaml names is the table's or one the sandbox adds
// (documented there as sandbox behaviour), and every code of the table is
// in openapi.yaml: the two cannot drift apart.
func TestErrorCodesMatchOpenAPI(t *testing.T) {
	doc, err := os.ReadFile("../../openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sandboxOnly := []string{"AUTH_001"}
	inDoc := map[string]bool{}
	for _, c := range regexp.MustCompile(`\b[A-Z]{3}_[0-9]{3}\b`).FindAllString(string(doc), -1) {
		inDoc[c] = true
		if !IsCode(c) && !slices.Contains(sandboxOnly, c) {
			t.Errorf("openapi.yaml names %s, which is not in ErrorCodes", c)
		}
	}
	for _, c := range ErrorCodes {
		if !inDoc[c.Code] {
			t.Errorf("%s is in ErrorCodes but not in openapi.yaml", c.Code)
		}
		if c.HTTPStatus < 400 || c.HTTPStatus > 599 || c.Meaning == "" || len(c.RaisedBy) == 0 {
			t.Errorf("incomplete row %+v", c)
		}
	}
}

func TestIsCode(t *testing.T) {
	for _, c := range ErrorCodes {
		if !IsCode(c.Code) {
			t.Errorf("IsCode(%q) = false", c.Code)
		}
	}
	for _, c := range []string{"", "pay_001", "PAY_009", "AUTH_001", "INVALID_CODE", "PAY_0010"} {
		if IsCode(c) {
			t.Errorf("IsCode(%q) = true", c)
		}
	}
}
