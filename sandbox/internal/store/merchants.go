package store

import "github.com/paykit-dev/paykit-go/sandbox/internal/ledger"

// merchants keeps the merchants, their terminals' balances and their
// transfer counters as stored resources, for both stores: kept is the
// state as of the last commit; a transaction reads copies (one per
// merchant, its terminals copied with it), and only what it saves
// (SaveTerminal, SaveMerchant) reaches kept when it commits. A rollback, or
// a commit that failed, drops the copies: nothing of it is visible after.
//
// The resources a transaction loads point at its copies (their Merchant
// and Terminal), so a credit through a payment's terminal and a read of
// the merchant's terminals within one transaction see one value; what a
// store keeps points at kept.
type merchants struct {
	kept  map[string]*merchant
	fresh map[string]*merchant // a Reset in the transaction: kept from its commit on
	tx    map[string]*merchant // the transaction's copies, by API key
	// spare holds the copies of ended transactions, reused by get: no
	// copy is held past its transaction (the service hands out values,
	// and a payment leaving a transaction loses its Merchant and
	// Terminal), so a steady stream of sections copies without
	// allocating.
	spare  map[string]*merchant
	saved  map[*terminal]ledger.Balance // what the transaction saved of a terminal's copy: its balances then
	savedM map[*merchant]int            // and of a merchant's: its transfer counter then
}

// set replaces the kept merchants (a start, a Reset) and drops the copies.
func (ms *merchants) set(list []*merchant) {
	ms.kept = byKey(list)
	ms.rollback()
}

// reset puts the merchants back to list with the transaction: its reads
// see list, which is kept once it commits.
func (ms *merchants) reset(list []*merchant) {
	ms.rollback()
	ms.fresh = byKey(list)
}

// base is what the transaction reads: kept, or the start a Reset in it
// put back.
func (ms *merchants) base() map[string]*merchant {
	if ms.fresh != nil {
		return ms.fresh
	}
	return ms.kept
}

// get is the transaction's copy of the merchant key (nil: not configured).
func (ms *merchants) get(key string) *merchant {
	if c := ms.tx[key]; c != nil {
		return c
	}
	k := ms.base()[key]
	if k == nil {
		return nil
	}
	c := ms.spare[key]
	if c == nil || len(c.Terminals) != len(k.Terminals) {
		c = &merchant{Terminals: make([]*terminal, len(k.Terminals))}
		for i := range c.Terminals {
			c.Terminals[i] = new(terminal)
		}
	}
	delete(ms.spare, key)
	c.APIKey, c.Name, c.Transfers = k.APIKey, k.Name, k.Transfers
	for i, t := range k.Terminals {
		*c.Terminals[i] = *t
	}
	if ms.tx == nil {
		ms.tx = map[string]*merchant{}
	}
	ms.tx[key] = c
	return c
}

// of is the transaction's copies of the merchant and terminal a kept
// resource points at.
func (ms *merchants) of(m *merchant, t *terminal) (*merchant, *terminal) {
	if m == nil {
		return nil, nil
	}
	c := ms.get(m.APIKey)
	if c == nil || t == nil {
		return c, nil
	}
	return c, c.Terminal(t.ID)
}

// keptOf is the kept merchant and terminal a copy stands for: what a store
// keeps in a resource it saves.
func (ms *merchants) keptOf(m *merchant, t *terminal) (*merchant, *terminal) {
	if m == nil {
		return nil, nil
	}
	k := ms.base()[m.APIKey]
	if k == nil || t == nil {
		return k, nil
	}
	return k, k.Terminal(t.ID)
}

// saveTerminal keeps t's balances as they are now with the transaction
// (the SQL store writes its row now too).
func (ms *merchants) saveTerminal(m *merchant, t *terminal) {
	if ms.saved == nil {
		ms.saved, ms.savedM = map[*terminal]ledger.Balance{}, map[*merchant]int{}
	}
	ms.saved[t] = t.Balance
}

// saveMerchant keeps m's transfer counter as it is now with the
// transaction.
func (ms *merchants) saveMerchant(m *merchant) {
	if ms.saved == nil {
		ms.saved, ms.savedM = map[*terminal]ledger.Balance{}, map[*merchant]int{}
	}
	ms.savedM[m] = m.Transfers
}

// commit keeps what the transaction saved and drops its copies.
func (ms *merchants) commit() {
	if ms.fresh != nil {
		ms.kept = ms.fresh
	}
	for _, c := range ms.tx {
		k := ms.kept[c.APIKey]
		if k == nil {
			continue
		}
		if n, ok := ms.savedM[c]; ok {
			k.Transfers = n
		}
		for _, t := range c.Terminals {
			if b, ok := ms.saved[t]; ok {
				if kt := k.Terminal(t.ID); kt != nil {
					kt.Balance = b
				}
			}
		}
	}
	ms.rollback()
}

// rollback drops the transaction's copies and what it saved.
func (ms *merchants) rollback() {
	ms.fresh = nil
	if len(ms.tx) > 0 && ms.spare == nil {
		ms.spare = map[string]*merchant{}
	}
	for k, c := range ms.tx {
		ms.spare[k] = c
	}
	clear(ms.tx)
	clear(ms.saved)
	clear(ms.savedM)
}

// values keeps the sandbox's own state beside the resources (the clock
// offset, the armed faults) with the same transaction: kept is as of the
// last commit, tx what the open transaction set.
type values struct {
	kept map[string]any
	tx   map[string]any
}

func (v *values) get(key string) any {
	if x, ok := v.tx[key]; ok {
		return x
	}
	return v.kept[key]
}

func (v *values) set(key string, x any) {
	if v.tx == nil {
		v.tx = map[string]any{}
	}
	v.tx[key] = x
}

func (v *values) commit() {
	if len(v.tx) == 0 {
		return
	}
	if v.kept == nil {
		v.kept = map[string]any{}
	}
	for k, x := range v.tx {
		v.kept[k] = x
	}
	clear(v.tx)
}

func (v *values) rollback() { clear(v.tx) }
