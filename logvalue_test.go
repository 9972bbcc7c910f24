package paykit

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestResourcesMaskNumbersInStructuredLogs(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	p := Payment{ID: paymentID, ExtID: "o-1", Amount: dec("1500.50"), Status: PaymentStatusPending, Method: MethodCrossBorder,
		Requisites: Requisites{Type: RequisitesPhone, Value: "+992900112233", BankCode: "eskhata", Country: CountryTJ,
			Currency: "TJS", AmountLocal: dec("180.06")}}
	po := Payout{ID: payoutID, ExtID: "po-1", Amount: dec("2500"), Requisites: "4111111111111111", HolderName: "IVAN IVANOV"}
	log.Info("paid", "payment", p, "payout", po, "pointer", &p)
	out := buf.String()
	assert.NotContains(t, out, "992900112233")
	assert.NotContains(t, out, "4111111111111111")
	assert.NotContains(t, out, "IVAN")
	assert.Contains(t, out, `"value":"+********2233"`)
	assert.Contains(t, out, `"requisites":"************1111"`)
	assert.Contains(t, out, `"amount":"1500.5"`)
	assert.Contains(t, out, `"amount_local":"180.06"`)
	assert.Contains(t, out, `"ext_id":"o-1"`)
	assert.Equal(t, "****", maskTail("123"))
}
