package main

// `paykit sandbox` is the sandbox binary's command line, shared through
// internal/sandboxcli.

import (
	"context"
	"errors"
	"io"

	"github.com/paykit-dev/paykit-go/internal/sandboxcli"
	_ "github.com/paykit-dev/paykit-go/sandbox/sqlite" // -db: the SQLite store
	"github.com/spf13/cobra"
)

func sandboxCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sandbox [-addr 127.0.0.1:8080] [paykit-sandbox flags]",
		Short: "Run the local sandbox (the flags of paykit-sandbox; -help lists them)",
		Long: "sandbox serves a stateful stand-in for the payment service, exactly as paykit-sandbox does, with\n" +
			"the same flags. The built-in profile \"sandbox\" talks to it at " + sandboxBaseURL + ".\n\n" +
			"Its commands drive a running sandbox (the profile's base URL; the control token of remote mode\n" +
			"from PAYKIT_SANDBOX_CONTROL_TOKEN): verify and review payments, move payouts and withdrawals,\n" +
			"advance the clock, inject a fault, reset, list webhook deliveries and resend one.",
		Example: "  paykit sandbox &\n  paykit --profile sandbox doctor\n" +
			"  paykit --profile sandbox sandbox verify 3f0c... completed\n  paykit --profile sandbox sandbox webhooks list",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return serveSandbox(cmd.Context(), args, a.env.stdout, a.env.stderr)
		},
	}
	sandboxControls(a, cmd)
	cmd.AddCommand(newCmdSandboxLogs(a, nil))
	return cmd
}

// serveSandbox runs the sandbox's own command line (internal/sandboxcli,
// which cmd/paykit-sandbox runs too), so the flags are the same by
// construction. The banner names the "sandbox" profile instead of printing
// the credentials, which keeps every output of the tool free of secrets.
func serveSandbox(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	err := sandboxcli.Run(ctx, args, stdout, stderr, sandboxcli.Options{Name: "paykit sandbox", HideCredentials: true,
		Hint: "use it with: paykit --profile sandbox <command> (with the default -addr, -api-key and -secret)"})
	var usage *sandboxcli.UsageError
	if errors.As(err, &usage) {
		return usagef("%s", usage.Error())
	}
	return err
}
