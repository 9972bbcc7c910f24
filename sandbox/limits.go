package sandbox

import "github.com/paykit-dev/paykit-go/sandbox/internal/api"

// Caps on free text. The spec states none (and no payout ext_id length);
// these are the sandbox's own, listed in the package documentation and in
// openapi.yaml, so that no field can grow the state without bound. A value
// over its cap is refused with the operation's invalid-parameters code and
// a message that names the cap. The API (package api) enforces them.
const (
	MaxPayoutExtIDLength = api.MaxPayoutExtIDLength // payout ext_id, as for payments
	MaxNameLength        = api.MaxNameLength        // holder_name, a payout's bank, client_id
	MaxTokenLength       = api.MaxTokenLength       // notification_token
	MaxRequisitesLength  = api.MaxRequisitesLength  // a payout's card or phone number
	MaxCommentLength     = api.MaxCommentLength     // a dispute's comment
	MaxURLLength         = api.MaxURLLength         // notify_url, receipt_url
	MaxAddressLength     = api.MaxAddressLength     // a withdrawal's TRC-20 address
	MaxTxHashLength      = api.MaxTxHashLength      // a withdrawal's tx_hash, set through a control
)
