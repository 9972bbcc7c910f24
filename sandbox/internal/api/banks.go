package api

import (
	"net/http"
)

// bankBody is one entry of GET /v1/banks. Country is an extra field of
// the sandbox ("RU" for Russian banks) so that a client can tell which
// country a cross-border bank code belongs to; the spec's clients ignore
// it.
type bankBody struct {
	Code     string `json:"code"`
	Name     string `json:"name"`
	IsActive bool   `json:"is_active"`
	Country  string `json:"country"`
}

func (a *API) listBanks(*http.Request, string, []byte) (any, *Error) {
	bs := a.b.Banks()
	out := make([]bankBody, 0, len(bs))
	for _, b := range bs {
		out = append(out, bankBody(b))
	}
	return map[string]any{"banks": out}, nil
}
