package paykit

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// 14. GET /v1/banks

const banksJSON = `{
  "banks": [
    {"code":"sber","name":"Sberbank","is_active":true},
    {"code":"tinkoff","name":"T-Bank","is_active":true},
    {"code":"vtb","name":"VTB","is_active":false},
    {"code":"alif","name":"Alif Bank","is_active":true,"country":"TJ","logo":"https://cdn.example/alif.png"}
  ]
}`

func TestListBanksRequestAndDecode(t *testing.T) {
	t.Parallel()
	c, rec := mockClient(t, http.StatusOK, banksJSON)
	banks, err := c.ListBanks(context.Background())
	require.NoError(t, err)
	assertWire(t, rec.only(t), http.MethodGet, "/v1/banks", "", "")
	assert.Equal(t, []Bank{
		{Code: "sber", Name: "Sberbank", IsActive: true},
		{Code: "tinkoff", Name: "T-Bank", IsActive: true},
		{Code: "vtb", Name: "VTB", IsActive: false},
		{Code: "alif", Name: "Alif Bank", IsActive: true},
	}, banks)
}

func TestListBanksEmpty(t *testing.T) {
	t.Parallel()
	for _, body := range []string{`{"banks":[]}`, `{}`, `{"banks":null}`} {
		c, _ := mockClient(t, http.StatusOK, body)
		banks, err := c.ListBanks(context.Background())
		require.NoError(t, err, body)
		assert.Empty(t, banks, body)
	}
}

func TestListBanksErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		status   int
		body     string
		code     string
		sentinel string
	}{
		{"500 with code", 500, opErrBody("SYS_001", "internal"), "SYS_001", "ErrInternal"},
		{"503 HTML", 503, "<h1>Service Unavailable</h1>", "", "ErrInternal"},
		{"401", 401, opErrBody("AUTH", "invalid key"), "AUTH", "ErrUnauthorized"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, _ := mockClient(t, tt.status, tt.body)
			banks, err := c.ListBanks(context.Background())
			assert.Nil(t, banks)
			opRequireAPIError(t, err, tt.code, tt.status)
			opAssertOnlySentinels(t, err, tt.sentinel)
		})
	}
}

func TestListBanksRefusesMalformedBody(t *testing.T) {
	t.Parallel()
	c, _ := mockClient(t, http.StatusOK, `{"banks":"sber"}`)
	banks, err := c.ListBanks(context.Background())
	assert.Error(t, err)
	assert.Nil(t, banks)
}
