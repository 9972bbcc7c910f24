package api

import "github.com/paykit-dev/paykit-go/internal/spec"

// Caps on free text. The spec states none (and no payout ext_id length);
// these are the sandbox's own, listed in the package documentation and in
// openapi.yaml, so that no field can grow the state without bound. A value
// over its cap is refused with the operation's invalid-parameters code and
// a message that names the cap.
const (
	MaxPayoutExtIDLength = spec.MaxExtIDLength // payout ext_id: the payment's
	MaxNameLength        = 255                 // holder_name, a payout's bank, client_id
	MaxTokenLength       = 255                 // notification_token
	MaxRequisitesLength  = 64                  // a payout's card or phone number
	MaxCommentLength     = 1000                // a dispute's comment
	MaxURLLength         = 2048                // notify_url, receipt_url
	MaxAddressLength     = 128                 // a withdrawal's TRC-20 address
	MaxTxHashLength      = 128                 // a withdrawal's tx_hash, set through a control
)
