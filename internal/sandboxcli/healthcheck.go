package sandboxcli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/paykit-dev/paykit-go/sandbox"
)

// healthcheck is "paykit-sandbox healthcheck": it asks a running sandbox's
// /readyz and fails unless it answers 200. A scratch image has no curl, so
// the image's HEALTHCHECK runs the binary itself. -addr defaults to the
// server's own address as the same environment gives it
// (PAYKIT_SANDBOX_ADDR, else the addr of the PAYKIT_SANDBOX_CONFIG file),
// so in a container one environment serves both; an unspecified host
// (0.0.0.0, ::) is asked on loopback.
func healthcheck(ctx context.Context, name string, args []string, env environment, stdout io.Writer) error {
	fs := flag.NewFlagSet(name+" healthcheck", flag.ContinueOnError)
	fs.SetOutput(stdout)
	addr := fs.String("addr", "127.0.0.1:8080", "address of the sandbox to check (default: the sandbox's own -addr from the same environment)")
	timeout := fs.Duration("timeout", 3*time.Second, "give up after this long")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return &UsageError{msg: err.Error()}
	}
	if fs.NArg() > 0 {
		return usage("healthcheck: unexpected arguments: %v", fs.Args())
	}
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "addr" })
	switch {
	case given:
	case env.Getenv(envName("addr")) != "":
		*addr = env.Getenv(envName("addr"))
	case env.Getenv(envName("config")) != "":
		fc, err := loadConfigFile(env.Getenv(envName("config")))
		if err != nil {
			return &UsageError{msg: err.Error()}
		}
		if fc.Addr != "" {
			*addr = fc.Addr
		}
	}
	host, port, err := net.SplitHostPort(*addr)
	if err != nil {
		return usage("healthcheck: -addr: %v", err)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	url := "http://" + net.JoinHostPort(host, port) + sandbox.ReadyzPath
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	// No proxy: the sandbox is local to the check, whatever HTTP_PROXY says.
	hc := &http.Client{Transport: &http.Transport{Proxy: nil}}
	res, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer res.Body.Close()
	io.Copy(io.Discard, io.LimitReader(res.Body, 1<<10))
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %s", url, res.Status)
	}
	fmt.Fprintln(stdout, "ready")
	return nil
}
