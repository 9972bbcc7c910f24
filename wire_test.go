package paykit

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// slowEnum is decodeEnum without its allocation-free fast path.
func slowEnum(b []byte) (PaymentStatus, error) {
	var s string
	if string(b) == "null" {
		return "", nil
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return "", err
	}
	for _, k := range paymentStatuses {
		if strings.EqualFold(s, string(k)) {
			return k, nil
		}
	}
	return PaymentStatus(s), nil
}

func TestDecodeEnumFastPathAgrees(t *testing.T) {
	for _, in := range []string{`"PENDING"`, `"pending"`, `"Cancelled_Appeal"`, `"dispute"`, `"\u0050ENDING"`,
		`"ON_HOLD"`, `"PENDINGX"`, `""`, `null`, `"PEND\"ING"`, `"ſtatus"`, `5`, `"K"`} {
		got, gotErr := decodeEnum([]byte(in), paymentStatuses...)
		want, wantErr := slowEnum([]byte(in))
		assert.Equal(t, want, got, in)
		assert.Equal(t, wantErr == nil, gotErr == nil, in)
	}
}

func TestDecodeEnumKnownValuesDoNotAllocate(t *testing.T) {
	b := []byte(`"processing"`)
	allocs := testing.AllocsPerRun(100, func() {
		if s, _ := decodeEnum(b, paymentStatuses...); s != PaymentStatusProcessing {
			t.Fatal(s)
		}
	})
	assert.Zero(t, allocs)
}

func TestAPITimeLayouts(t *testing.T) {
	for in, want := range map[string]time.Time{
		`"2026-11-22T10:20:00Z"`:           time.Date(2026, 11, 22, 10, 20, 0, 0, time.UTC),
		`"2026-11-22T10:20:00.123456789Z"`: time.Date(2026, 11, 22, 10, 20, 0, 123456789, time.UTC),
		`"2026-11-22T13:20:00+03:00"`:      time.Date(2026, 11, 22, 10, 20, 0, 0, time.UTC),
		`"2026-11-22T10:20:00"`:            time.Date(2026, 11, 22, 10, 20, 0, 0, time.UTC),
		`"2026-11-22 10:20:00"`:            time.Date(2026, 11, 22, 10, 20, 0, 0, time.UTC),
		`"2026-11-22 13:20:00+03:00"`:      time.Date(2026, 11, 22, 10, 20, 0, 0, time.UTC),
		`"2026-11-22"`:                     time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC),
		`" 2026-11-22T10:20:00Z "`:         time.Date(2026, 11, 22, 10, 20, 0, 0, time.UTC),
		`"2026-11-22T10:20:00\u002B00:00"`: time.Date(2026, 11, 22, 10, 20, 0, 0, time.UTC),
		`null`:                             {},
		`""`:                               {},
	} {
		var got apiTime
		require.NoError(t, got.UnmarshalJSON([]byte(in)), in)
		assert.True(t, want.Equal(time.Time(got)), "%s: got %v", in, time.Time(got))
		if !time.Time(got).IsZero() {
			assert.Equal(t, time.UTC, time.Time(got).Location(), in)
		}
	}
	for _, in := range []string{`"yesterday"`, `5`, `"2026-13-01T00:00:00Z"`, `{}`} {
		var got apiTime
		assert.Error(t, got.UnmarshalJSON([]byte(in)), in)
	}
}

// FuzzStrictRFC3339AgreesWithParse checks the claim apiTime's fast path
// rests on: whatever time.Time.UnmarshalJSON accepts, time.Parse with
// RFC3339Nano accepts too, with the same instant.
func FuzzStrictRFC3339AgreesWithParse(f *testing.F) {
	for _, s := range []string{"2026-11-22T10:20:00Z", "2026-11-22T10:20:00.5+03:00", "2026-11-22T10:20:00,5Z",
		"2026-02-30T10:20:00Z", "0000-01-01T00:00:00-23:59", "2026-11-22t10:20:00z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, _ := json.Marshal(s)
		var strict time.Time
		if strict.UnmarshalJSON(b) != nil {
			return
		}
		parsed, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatalf("%q: strict accepts, Parse refuses: %v", s, err)
		}
		if !parsed.Equal(strict) {
			t.Fatalf("%q: strict %v, Parse %v", s, strict, parsed)
		}
	})
}
