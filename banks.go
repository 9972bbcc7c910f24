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
	names bankIndex     // nil until a list was read
	gen   uint64        // counts the lists read into names
	busy  chan struct{} // closed when the ListBanks in flight ends
}

// bankIndex is one list read into the cache: a lower-case code to every
// non-blank name the list gives it (a code listed more than once has the
// names of all its entries). A code listed only without a name (null,
// missing or blank) is kept with none: such an entry is evidence of
// nothing, but the code is listed.
type bankIndex map[string][]string

// index reads a list into a bankIndex.
func index(banks []Bank) bankIndex {
	x := make(bankIndex, len(banks))
	for _, bk := range banks {
		code := strings.ToLower(strings.TrimSpace(bk.Code))
		if code == "" {
			continue
		}
		ns := x[code] // a name listed twice is compared twice: no quadratic dedup
		if name := strings.TrimSpace(bk.Name); name != "" {
			ns = append(ns, name)
		}
		x[code] = ns // listed, even without a name
	}
	return x
}

// bankNames returns the cached list once it is newer than generation
// after (0 takes any), reading ListBanks when it is not. One ListBanks
// is in flight at a time, with no lock held across it; other calls wait
// for it only as long as their own context allows. fresh says the list
// was read while this call waited.
func (c *Client) bankNames(ctx context.Context, after uint64) (x bankIndex, gen uint64, fresh bool, err error) {
	b := &c.banks
	for {
		b.mu.Lock()
		if b.names != nil && b.gen > after {
			x, gen = b.names, b.gen
			b.mu.Unlock()
			return x, gen, fresh, nil
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
			b.names = index(banks)
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
// with the bank code the call asked for, through ListBanks, names compared
// as sameName compares them (case, spacing, Unicode form, ё and е; a
// Latin name against a Cyrillic one is not excused here, since the rule
// is the list's). The name is the asked bank's when it is one of the
// names the list gives that code (or the code itself). It is
// evidence of another bank only when it is the name the list gives
// another code and none the asked code has: a name the list does not give
// at all (a stale list, a legal name such as "ПАО Сбербанк" beside
// "Sberbank"), a code the list lacks or lists without a name, cannot tell.
// A cached list may be stale (a bank renamed, one added), so anything but
// same is believed only after one more ListBanks (within the caller's
// context); a list that cannot be read, or is empty, cannot tell.
func (c *Client) bankVerdict(ctx context.Context, code, name string) (sameness, error) {
	if strings.TrimSpace(name) == "" {
		return cannotTell, errors.New("the payment names no bank")
	}
	var gen uint64
	for {
		x, g, fresh, err := c.bankNames(ctx, gen)
		if err != nil {
			return cannotTell, fmt.Errorf("the payment's bank cannot be compared: %w", err)
		}
		v, err := x.verdict(code, name)
		if v == same || fresh || gen != 0 {
			return v, err
		}
		gen = g // read the list again, once
	}
}

// verdict is bankVerdict on one list. The name's canonical form is made
// once: a list or a name of megabytes costs their length, not its product.
func (x bankIndex) verdict(code, name string) (sameness, error) {
	code = strings.ToLower(strings.TrimSpace(code))
	own, listed := x[code]
	got := formOf(name)
	if got.compare(formOf(code)) == same {
		return same, nil
	}
	undecided := false
	for _, n := range own {
		switch got.compare(formOf(n)) {
		case same:
			return same, nil
		case cannotTell:
			undecided = true
		}
	}
	switch {
	case !listed:
		return cannotTell, fmt.Errorf("bank %q is not in ListBanks, so the payment's bank cannot be compared", truncate(code, 40))
	case len(own) == 0:
		return cannotTell, fmt.Errorf("ListBanks gives bank %q no name, so the payment's bank cannot be compared", truncate(code, 40))
	case undecided:
		return cannotTell, fmt.Errorf("the payment's bank %q cannot be compared with the names of bank %q", truncate(name, 40), truncate(code, 40))
	}
	if other := x.codeNamed(got, code); other != "" {
		return different, fmt.Errorf("the payment's bank is %q, not %q: ListBanks gives that name to bank %q",
			truncate(name, 40), truncate(own[0], 40), truncate(other, 40))
	}
	return cannotTell, fmt.Errorf("the payment's bank %q is no name ListBanks gives, so it cannot be compared with bank %q",
		truncate(name, 40), truncate(code, 40))
}

// codeNamed returns the least code other than except that the list gives
// the name got, "" if none.
func (x bankIndex) codeNamed(got nameForm, except string) string {
	found := ""
	for code, ns := range x {
		if code == except || found != "" && code > found {
			continue
		}
		for _, n := range ns {
			if got.compare(formOf(n)) == same {
				found = code
				break
			}
		}
	}
	return found
}
