package sandbox

import (
	"fmt"

	"github.com/paykit-dev/paykit-go/internal/tokenstrength"
)

// checkControlToken refuses a Config.ControlToken that is set but could be
// guessed (see package tokenstrength): with AllowRemote it is all that
// stands between the network and the sandbox's money. The token's checks
// on each request are package guard's (sandbox/internal/guard).
func checkControlToken(tok string) error {
	if tok == "" {
		return nil
	}
	if err := tokenstrength.Check(tok); err != nil {
		return fmt.Errorf("%w: Config.ControlToken: %v", ErrInvalidArgument, err)
	}
	return nil
}
