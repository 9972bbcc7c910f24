package paykit

import (
	"context"
	"errors"
	"fmt"
)

// CheckCredentials makes one cheap signed read (GET /v1/balance, its body
// discarded) and reports whether the service accepts the API key and
// signatures. Run it at startup: HMACSigner is the SDK's guess at an
// unpublished algorithm, and this is how to learn the service agrees
// before a payment depends on it.
//
// It returns nil on any 2xx. A 401 or 403 matches ErrUnauthorized (and
// *Error) and its text names what to check: the API key, the signing
// secret and scheme. Any other failure is returned as the read would
// return it, and does not match ErrUnauthorized: nothing was judged.
func (c *Client) CheckCredentials(ctx context.Context) error {
	_, err := send[discard](ctx, c, &call{op: opCheckCredentials, path: "/v1/balance"}, nil)
	if err != nil && errors.Is(err, ErrUnauthorized) {
		return &credentialsError{cause: err}
	}
	return err
}

// credentialsError is a refusal of the credentials, with what to check.
type credentialsError struct {
	cause error
}

func (e *credentialsError) Error() string {
	return fmt.Sprintf("paykit: CheckCredentials: the service refused the credentials (%v); check the API key, "+
		"the signing secret, and the signing scheme (the spec does not publish the signature algorithm: "+
		"if HMACSigner is not what the service expects, a custom Signer such as a SignerFunc is needed)", e.cause)
}

// Unwrap exposes the *Error, and through it ErrUnauthorized.
func (e *credentialsError) Unwrap() error { return e.cause }
