package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// configKeys are the keys a profile holds, in the order init writes them.
var configKeys = []string{"base_url", "api_key", "secret", "live"}

// secretKeys are never printed: config get and list show a fingerprint.
var secretKeys = []string{"api_key", "secret"}

// ConfigOptions are the config commands' flags and arguments.
type ConfigOptions struct {
	app *app
	// Key and Value are set's and get's arguments; Value "-" reads it from
	// stdin (a secret kept out of the shell's history).
	Key, Value string
}

// configProfile is the profile config set and get work on: --profile,
// else PAYKIT_PROFILE, else "default".
func (a *app) configProfile() string {
	p, _ := chooseProfile(a.env.getenv, a.profile)
	return p
}

func newCmdConfigInit(a *app, runF func(context.Context, *ConfigOptions) error) *cobra.Command {
	opts := &ConfigOptions{app: a}
	return &cobra.Command{
		Use:     "init",
		Short:   "Create the config file (mode 0600) with a commented profile to fill in",
		Example: "  paykit config init\n  paykit --profile live config init && paykit --profile live config set secret - < secret.txt",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runOr(cmd.Context(), opts, runF, runConfigInit)
		},
	}
}

func runConfigInit(ctx context.Context, opts *ConfigOptions) error {
	a := opts.app
	path, err := configPath(a.env.getenv)
	if err != nil {
		return err
	}
	profile := a.configProfile()
	if err := checkProfileName(profile); err != nil {
		return err
	}
	text := "# paykit profiles: paykit help config. Keep this file readable by you alone (0600).\n" +
		"[" + profile + "]\n" +
		"base_url =   # https://api.example.com\n" +
		"api_key  =   # paykit config set api_key - < key.txt\n" +
		"secret   =   # paykit config set secret - < secret.txt\n" +
		"live     = false   # true: money moves need the amount or the profile's name typed\n"
	exists := usagef("%s exists already: change it with paykit config set, or remove it first", path)
	if _, err := os.Stat(path); err == nil {
		return exists
	}
	err = updateConfig(ctx, path, func(old *configDoc) (*configDoc, error) {
		if old != nil { // made since the Stat above
			return nil, exists
		}
		return parseConfig(path, []byte(text))
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(a.out, "wrote %s with profile [%s]\n", path, profile)
	return nil
}

func newCmdConfigSet(a *app, runF func(context.Context, *ConfigOptions) error) *cobra.Command {
	opts := &ConfigOptions{app: a}
	return &cobra.Command{
		Use:   "set KEY VALUE",
		Short: "Set a key of the profile (--profile, else PAYKIT_PROFILE, else default), keeping comments",
		Long: "set writes KEY = VALUE into the profile's section of the config file, creating the file (0600)\n" +
			"and the section when missing and keeping every other line and comment. KEY is base_url,\n" +
			"api_key, secret or live. A VALUE of - keeps a secret out of the shell's history: on a\n" +
			"terminal it is asked for and typed without echo, otherwise it is stdin's first line.\n" +
			"The file is locked (config.lock beside it) from the read to the rename, so that two\n" +
			"config set at once both land; a symlinked config stays a link, its target rewritten.",
		Example:   "  paykit --profile staging config set base_url https://staging.example.com\n  paykit --profile staging config set secret - < secret.txt",
		Args:      cobra.ExactArgs(2),
		ValidArgs: configKeys,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Key, opts.Value = args[0], args[1]
			return runOr(cmd.Context(), opts, runF, runConfigSet)
		},
	}
}

func runConfigSet(ctx context.Context, opts *ConfigOptions) error {
	a := opts.app
	if !slices.Contains(configKeys, opts.Key) {
		return usagef("config set: unknown key %q (want %s)", opts.Key, strings.Join(configKeys, ", "))
	}
	profile := a.configProfile()
	if err := checkProfileName(profile); err != nil {
		return err
	}
	v := opts.Value
	if v == "-" {
		var err error
		if v, err = a.readValue(ctx, profile, opts.Key); err != nil {
			return err
		}
	}
	if err := checkConfigValue(opts.Key, v); err != nil {
		return err
	}
	path, err := configPath(a.env.getenv)
	if err != nil {
		return err
	}
	err = updateConfig(ctx, path, func(old *configDoc) (*configDoc, error) {
		if old == nil {
			old, _ = parseConfig(path, nil)
		}
		old.set(profile, opts.Key, v)
		return old, nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(a.out, "[%s] %s = %s\n", profile, opts.Key, shownValue(opts.Key, v))
	return nil
}

// readValue reads config set's VALUE of -: on a terminal, after a prompt
// on stderr and without echo (a secret typed must not stay on the screen
// or in the terminal's scrollback); otherwise stdin's first line, with no
// prompt (a file or a pipe). Ctrl-C at the prompt ends the command, the
// terminal's echo back on, the file unchanged. Nothing read is refused:
// an empty secret is a mistake (a file that is not there, an Enter typed
// too soon), not a value.
func (a *app) readValue(ctx context.Context, profile, key string) (string, error) {
	var v string
	if f, ok := a.env.stdin.(*os.File); ok && a.env.isTerminal(f) {
		fmt.Fprintf(a.env.stderr, "%s for profile [%s] (not shown as you type): ", key, profile)
		fd := int(f.Fd())
		state, err := term.GetState(fd)
		if err != nil {
			return "", usagef("config set %s -: the terminal: %v", key, err)
		}
		type read struct {
			b   []byte
			err error
		}
		got := make(chan read, 1)
		go func() {
			b, err := term.ReadPassword(fd)
			got <- read{b, err}
		}()
		select {
		case <-ctx.Done():
			_ = term.Restore(fd, state)
			return "", &interruptedError{what: "the config file was not changed"}
		case r := <-got:
			fmt.Fprintln(a.env.stderr) // the Enter typed was not echoed either
			if r.err != nil {
				return "", usagef("config set %s -: reading the terminal: %v", key, r.err)
			}
			v = strings.TrimSpace(string(r.b))
		}
	} else {
		line, err := bufio.NewReader(a.env.stdin).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return "", usagef("config set %s -: %v", key, err)
		}
		v = strings.TrimSpace(line)
	}
	if v == "" {
		return "", usagef("config set %s -: nothing was read; the config file was not changed", key)
	}
	return v, nil
}

// checkConfigValue refuses what the file could not hold or read back as
// given: line breaks, text that would read as an inline comment, a
// base_url that is not an http(s) URL, a live that is not true or false.
func checkConfigValue(key, v string) error {
	switch {
	case strings.ContainsAny(v, "\r\n"):
		return usagef("config set %s: the value has a line break", key)
	case strings.Contains(v, " #") || strings.Contains(v, " ;") || strings.Contains(v, "\t#") || strings.Contains(v, "\t;"):
		return usagef("config set %s: the value has a # or ; after white space, which would read as a comment", key)
	case strings.HasPrefix(v, "#") || strings.HasPrefix(v, ";"):
		return usagef("config set %s: the value starts with # or ;, which would read as a comment", key)
	case v != strings.Trim(strings.TrimSpace(v), `"`):
		return usagef("config set %s: the value starts or ends with white space or a quote, which the file would not keep", key)
	case key == "live" && v != "true" && v != "false":
		return usagef("config set live: true or false")
	case key == "base_url":
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return usagef("config set base_url: want an http or https URL such as https://api.example.com")
		}
	}
	return nil
}

func newCmdConfigGet(a *app, runF func(context.Context, *ConfigOptions) error) *cobra.Command {
	opts := &ConfigOptions{app: a}
	return &cobra.Command{
		Use:       "get KEY",
		Short:     "Print a key of the profile (a fingerprint for api_key and secret)",
		Example:   "  paykit --profile staging config get base_url",
		Args:      cobra.ExactArgs(1),
		ValidArgs: configKeys,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Key = args[0]
			return runOr(cmd.Context(), opts, runF, runConfigGet)
		},
	}
}

func runConfigGet(_ context.Context, opts *ConfigOptions) error {
	a := opts.app
	if !slices.Contains(configKeys, opts.Key) {
		return usagef("config get: unknown key %q (want %s)", opts.Key, strings.Join(configKeys, ", "))
	}
	path, err := configPath(a.env.getenv)
	if err != nil {
		return err
	}
	profile := a.configProfile()
	keys, err := readProfile(path, profile)
	if err != nil {
		return err
	}
	v, ok := keys[opts.Key]
	if !ok {
		return &exitError{code: exitAPI, msg: fmt.Sprintf("no %s in profile [%s] of %s", opts.Key, profile, path)}
	}
	_, err = fmt.Fprintln(a.out, shownValue(opts.Key, v))
	return err
}

// shownValue is how config get and list show key's value: a secret as
// its fingerprint.
func shownValue(key, v string) string {
	if slices.Contains(secretKeys, key) && v != "" {
		return fingerprint(v)
	}
	return v
}

func newCmdConfigList(a *app, runF func(context.Context, *ConfigOptions) error) *cobra.Command {
	opts := &ConfigOptions{app: a}
	return &cobra.Command{
		Use:     "list",
		Short:   "List the profiles and their keys (fingerprints for api_key and secret)",
		Example: "  paykit config list\n  paykit config list -o csv",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runOr(cmd.Context(), opts, runF, runConfigList)
		},
	}
}

func runConfigList(_ context.Context, opts *ConfigOptions) error {
	a := opts.app
	path, err := configPath(a.env.getenv)
	if err != nil {
		return err
	}
	names, profiles, err := readProfiles(path)
	if err != nil {
		return err
	}
	l := list{header: []string{"profile", "base_url", "api_key", "secret", "live"}}
	for _, n := range names {
		row := []string{n}
		for _, k := range configKeys {
			row = append(row, shownValue(k, profiles[n][k]))
		}
		l.rows = append(l.rows, row)
	}
	if a.output == "json" {
		// Built by hand to keep the columns' order (a map would sort them).
		b := []byte{'['}
		for i, row := range l.rows {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '{')
			for j, k := range l.header {
				if j > 0 {
					b = append(b, ',')
				}
				b = append(appendJSONString(b, k), ':')
				b = appendJSONString(b, row[j])
			}
			b = append(b, '}')
		}
		return a.emitJSON(append(b, ']'))
	}
	return a.printList(nil, l)
}
