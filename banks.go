package paykit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
)

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

// bankCache maps bank codes to names: a GET of a domestic payment carries
// the bank's name, a create's params its code. Only a non-empty list is
// kept: an empty one proves nothing about any bank.
type bankCache struct {
	mu    sync.Mutex
	names map[string]string // lower-case code -> name; nil until a list was read
	gen   uint64            // counts the lists read into names
	busy  chan struct{}     // closed when the ListBanks in flight ends
}

// bankNames returns the cached names once they are newer than generation
// after (0 takes any), reading ListBanks when they are not. One ListBanks
// is in flight at a time, with no lock held across it; other calls wait
// for it only as long as their own context allows. fresh says the names
// were read while this call waited.
func (c *Client) bankNames(ctx context.Context, after uint64) (names map[string]string, gen uint64, fresh bool, err error) {
	b := &c.banks
	for {
		b.mu.Lock()
		if b.names != nil && b.gen > after {
			names, gen = b.names, b.gen
			b.mu.Unlock()
			return names, gen, fresh, nil
		}
		if busy := b.busy; busy != nil {
			b.mu.Unlock()
			select {
			case <-busy:
				fresh = true
				continue
			case <-ctx.Done():
				return nil, 0, false, fmt.Errorf("waiting for ListBanks: %w", ctx.Err())
			}
		}
		busy := make(chan struct{})
		b.busy = busy
		b.mu.Unlock()

		banks, err := c.ListBanks(ctx)
		if err == nil && len(banks) == 0 {
			err = errNoBanks
		}
		b.mu.Lock()
		if err == nil {
			b.names = make(map[string]string, len(banks))
			for _, bk := range banks {
				b.names[strings.ToLower(bk.Code)] = bk.Name
			}
			b.gen++
		}
		b.busy = nil
		close(busy)
		b.mu.Unlock()
		if err != nil {
			return nil, 0, false, err
		}
		fresh = true
	}
}

// bankVerdict compares the bank name a domestic payment read back carries
// with the bank code the call asked for, through ListBanks: the name the
// code has there, compared without regard to case or spacing. A cached
// list may be stale (a bank renamed, one added), so a name that differs,
// or a code the list lacks, is believed only after one more ListBanks
// (within the caller's context); a list that cannot be read, or is
// empty, cannot tell.
func (c *Client) bankVerdict(ctx context.Context, code, name string) (sameness, error) {
	if strings.TrimSpace(name) == "" {
		return cannotTell, errors.New("the payment names no bank")
	}
	var gen uint64
	for {
		names, g, fresh, err := c.bankNames(ctx, gen)
		if err != nil {
			return cannotTell, fmt.Errorf("the payment's bank cannot be compared: %w", err)
		}
		want, known := names[strings.ToLower(strings.TrimSpace(code))]
		var v sameness
		switch {
		case !known:
			v, err = cannotTell, fmt.Errorf("bank %q is not in ListBanks, so the payment's bank cannot be compared", truncate(code, 40))
		default:
			v, err = sameName("payment's bank", name, want, true)
		}
		if v == same || fresh || gen != 0 {
			return v, err
		}
		gen = g // read the list again, once
	}
}
