package sandbox

import (
	"fmt"
	"sync"
	"testing"

	"github.com/paykit-dev/paykit-go/sandbox/internal/service"
	"github.com/shopspring/decimal"
)

func TestNewPanicsOnBadMerchants(t *testing.T) {
	for _, ms := range [][]Merchant{
		{{APIKey: ""}},
		{{APIKey: "a"}, {APIKey: "a"}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Fatalf("no panic for %v", ms)
				}
			}()
			New(Config{Merchants: ms})
		}()
	}
}

// Many goroutines create payments, complete some and shuffle USDT between
// the two terminals; at the end every credit is accounted for exactly.
func TestConcurrency(t *testing.T) {
	e := newEnv(t, Config{MaxSamePendingAmount: 1 << 20})
	const workers, rounds = 8, 25
	var wg sync.WaitGroup
	var mu sync.Mutex
	completed := decimal.Zero
	errs := make(chan error, workers*rounds)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				id := e.createPayment(fmt.Sprintf(`{"ext_id":"w%d-%d","amount":%d.37}`, w, i, 100+i)).str("id")
				if i%3 == 0 {
					e.confirm("/v1/payments/" + id)
					if err := e.sb.VerifyPayment(id, "completed"); err != nil {
						errs <- err
						continue
					}
					mu.Lock()
					completed = completed.Add(dec(fmt.Sprintf("%d.37", 100+i)).DivRound(DefaultUSDTRate, 2))
					mu.Unlock()
				}
				from, to := DefaultMainTerminalID, DefaultReserveTerminalID
				if (w+i)%2 == 1 {
					from, to = to, from
				}
				r := e.do("POST", "/v1/transfers", fmt.Sprintf(`{"from_terminal_id":%q,"to_terminal_id":%q,"amount":3.33}`, from, to))
				if r.status != 200 && r.str("error") != "TRF_003" {
					errs <- fmt.Errorf("transfer: %s", r.raw)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	total := decimal.Zero
	for _, term := range e.sb.Terminals(e.key) {
		if term.Balance.IsNegative() {
			t.Fatalf("negative balance: %v", term)
		}
		total = total.Add(term.Balance)
	}
	wantDec(t, total, dec("1000").Add(completed).String())
	eq(t, e.sb.Stats(e.key).Payments, workers*rounds)
}

// Two huge advances would overflow time.Duration; the clock clamps instead
// of running backwards.
func TestClockNeverRunsBackwards(t *testing.T) {
	e := newEnv(t, Config{})
	prev := e.sb.Now()
	for _, secs := range []string{"9223372036", "9223372036", "9223372036854775807", "1"} {
		r := e.control("/sandbox/clock/advance", `{"seconds":`+secs+`}`)
		wantStatus(t, r, 200, "")
		now := e.sb.Now()
		if now.Before(prev) {
			t.Fatalf("clock ran backwards: %v after %v", now, prev)
		}
		prev = now
	}
	eq(t, prev, base.Add(service.MaxClockOffset))
	e.sb.Advance(1<<63 - 1)
	e.sb.Advance(1<<63 - 1)
	eq(t, e.sb.Now(), base.Add(service.MaxClockOffset))
}
