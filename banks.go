package paykit

import "context"

// Bank is a bank available for accepting payments. Its Code goes into
// CreatePaymentParams.Bank.
type Bank struct {
	// Code is lowercase, such as "sber".
	Code string `json:"code"`
	// Name is for people (the payer sees it in the requisites); code is
	// what the API takes.
	Name string `json:"name"`
	// IsActive is false for a bank that currently takes no payments; asking
	// for it is refused (the sandbox answers PAY_004, ErrNoRequisites).
	IsActive bool `json:"is_active"`
}

// ListBanks returns the banks available for accepting payments.
func (c *Client) ListBanks(ctx context.Context) ([]Bank, error) {
	out, err := send[bankList](ctx, c, &call{op: opListBanks, path: "/v1/banks"}, nil)
	if err != nil {
		return nil, err
	}
	return out.Banks, nil
}

// bankList is GET /v1/banks's envelope.
type bankList struct {
	Banks []Bank `json:"banks"`
}
