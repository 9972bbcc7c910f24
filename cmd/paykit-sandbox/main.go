// Command paykit-sandbox serves the paykit sandbox, a stateful stand-in for
// the payment service, so that merchants and the SDK's examples can run the
// whole API offline or as a shared staging provider. Its flags, environment
// variables and configuration file are those of package
// internal/sandboxcmd (run it with -help).
package main

import (
	"context"
	"os"

	"github.com/paykit-dev/paykit-go/internal/sandboxcmd"
)

func main() { os.Exit(sandboxcmd.Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr)) }
