// Command paykit is a command-line tool on the paykit SDK for the people who
// run a merchant's payments: support looking up an order, finance exporting
// payouts as CSV, an on-call engineer settling an unknown outcome, and an
// integrator checking credentials before writing code.
//
//	paykit payments get --ext-id order-1001
//	paykit payouts list --all --from 2026-11-01 --to 2026-12-01 -o csv > november.csv
//	paykit wait payout --ext-id payout-77 --exit-status --timeout 30m
//	paykit auth status
//	paykit doctor
//	paykit sandbox
//	paykit --profile sandbox sandbox verify 3f0c... completed
//	paykit api GET '/v1/payouts?status=failed' --jq '.payouts[].id'
//	paykit --profile sandbox listen --forward-to http://127.0.0.1:8090/paykit/webhook
//	paykit --profile sandbox trigger payment.completed
//	paykit webhooks send --to http://127.0.0.1:8090/paykit/webhook --payment 3f0c...
//
// # Layout
//
// Each command is an options struct, a constructor newCmdX(a, runF) that
// fills it from the command line and a runX(ctx, opts) that does the work,
// as gh's commands are: a test passes its own runF to check the parsing,
// or calls runX in this process against a sandbox, without the binary.
//
// # Command library
//
// paykit uses cobra (with pflag), as gh and kubectl do: nested resource
// subcommands, GNU-style flags, generated --help and shell completion for
// bash, zsh and fish come with it, and operators already know its
// conventions from those tools. The standard flag package would need all of
// that written by hand. cobra and golang.org/x/term live in this nested
// module only, so merchants importing the SDK download none of them.
//
// # Credentials
//
// --profile NAME on the command line picks a profile and nothing else
// counts: exported PAYKIT_BASE_URL, PAYKIT_API_KEY and PAYKIT_SECRET are
// then ignored, as aws-cli's --profile wins over AWS_ACCESS_KEY_ID. Without
// the flag, each of those variables, when set, wins over the profile
// (PAYKIT_PROFILE, or "default"). Profiles live in $XDG_CONFIG_HOME/paykit/config (os.UserConfigDir:
// ~/.config on Linux, ~/Library/Application Support on macOS), an INI-style
// file:
//
//	[default]
//	base_url = https://api.example.com
//	api_key  = pk_live_...
//	secret   = sk_live_...
//
//	[staging]
//	base_url = https://staging.example.com
//	...
//
// A config file holding a secret must not be readable by group or others:
// paykit refuses it (exit 4) and prints the chmod that fixes it, as ssh does
// for keys. The profile "sandbox" needs no file: it targets a local sandbox
// (http://127.0.0.1:8080 with the sandbox's default credentials) unless the
// file defines it. A profile with live = true needs its money moves
// confirmed by typing the amount or the profile's name. paykit config
// init|set|get|list edits the file (0600, comments kept); paykit auth
// status says which profile, host and credentials a command would use, the
// API key as a fingerprint. No secret is ever printed: not on stdout,
// stderr, -v logs or a crash message.
//
// # Output
//
// -o table (default) is for people, aligned by display width, with control
// characters from the data shown as \x1b and the like rather than sent to
// the terminal: amounts with at least two decimals,
// card and phone numbers masked by internal/mask (mask.Value, the rules of
// the SDK and the sandbox), times in UTC or local time with --local-time. -o json is for programs: the API's answer
// as it came, amounts as the exact decimal numbers the service wrote (see
// capture in output.go), card and phone numbers masked unless --unmask.
// -o csv is for spreadsheets (RFC 4180, a header row, every column on
// every row, amounts as plain decimal text with the currency in a column
// of its own, formula-looking text cells prefixed with '). --json FIELDS
// keeps those fields of the answer (of each item of a list), --jq EXPR
// filters it with gojq, -q prints ids alone; all after masking. A single
// page of payouts that is not all of them says so on stderr.
//
// # Money moves
//
// payouts create, transfers create and withdrawals create ask on stderr
// when stdin and stderr are a terminal, naming the host and the profile
// the money goes through, and refuse without --yes otherwise (exit 2).
// Ctrl-C at the question sends nothing (exit 130). An amount finer than
// its currency (100.005 RUB, USDT beyond six decimals) is refused before
// anything is sent (exit 2). An unknown outcome exits 3 and prints the
// paykit command that settles it. What can be checked before sending is
// (a --jq program compiles, --json's fields exist on the resource's type);
// once a request may have reached the service, exit 1 and 2 are never
// used: a move that was done and whose output then failed (a --jq program
// failing at run time, stdout full or gone) exits 7 with the resource's id
// and state on stderr.
//
// # Exit codes
//
//	0  success
//	1  the API refused the call (its error code is printed), or a network failure (a money move's: before anything was sent)
//	2  usage: a bad flag, argument or value, or a money move without --yes off a terminal; nothing was sent
//	3  unknown outcome: a money move may or may not have happened; the command that settles it is printed
//	4  credentials refused: by the service (401/403), or missing, or a config file readable by others
//	5  wait --exit-status: the resource settled unsuccessfully (CANCELLED, CANCELLED_APPEAL, failed, cancelled)
//	6  wait --exit-status: --timeout ran out before it settled
//	7  done; the output failed: a money move was done as asked, then its output could not be shaped or written (its id and state are on stderr)
//	130 interrupted (Ctrl-C or SIGTERM); a money move interrupted after it was sent exits 3 instead
//	141 a read whose stdout's reader went away (paykit ... | head), as a shell reports SIGPIPE
//	70 internal error: a bug (EX_SOFTWARE); the crash message is a stack trace without values
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	// --local-time must work where the system has no zone database
	// (Windows, minimal containers): 450 KB in a binary people install.
	_ "time/tzdata"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// A write to a pipe whose reader went away then fails with EPIPE
	// instead of killing the process: after a money move paykit must
	// still say, on stderr and with exit 7, that it was done.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	code := run(ctx, os.Args[1:], &env{
		stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr,
		getenv: os.Getenv, isTerminal: isTerminal,
	})
	stop()
	os.Exit(code)
}
