package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"

	"github.com/spf13/cobra"
)

// AuthStatusOptions are auth status's flags (none of its own).
type AuthStatusOptions struct {
	app *app
}

func authCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "auth", Short: "Show which service and credentials paykit uses",
		Example: "  paykit auth status\n  paykit --profile live auth status -o json"}
	cmd.AddCommand(newCmdAuthStatus(a, nil))
	return cmd
}

func newCmdAuthStatus(a *app, runF func(context.Context, *AuthStatusOptions) error) *cobra.Command {
	opts := &AuthStatusOptions{app: a}
	return &cobra.Command{
		Use:   "status",
		Short: "Show the profile, the host, where each credential came from and the key's fingerprint",
		Long: "auth status says where a command would go, without sending anything: the profile and how it\n" +
			"was chosen (--profile, PAYKIT_PROFILE or the default), the host, where the base URL, the\n" +
			"API key and the secret each came from (an environment variable, the config file, or the\n" +
			"built-in sandbox profile), a fingerprint of the API key (the first 12 hex digits of its\n" +
			"SHA-256, to tell keys apart without showing one) and whether the profile is live.\n" +
			"paykit doctor checks the credentials against the service.",
		Example: "  paykit auth status\n  paykit --profile live auth status -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBounded(a, cmd, opts, runF, runAuthStatus)
		},
	}
}

// authStatus is auth status's answer; its JSON names are -o json's.
type authStatus struct {
	Profile        string `json:"profile"`
	ProfileFrom    string `json:"profile_from"`
	Host           string `json:"host"`
	BaseURL        string `json:"base_url"`
	BaseURLFrom    string `json:"base_url_from"`
	APIKeyFrom     string `json:"api_key_from"`
	SecretFrom     string `json:"secret_from"`
	KeyFingerprint string `json:"key_fingerprint"`
	Live           bool   `json:"live"`
}

func runAuthStatus(_ context.Context, opts *AuthStatusOptions) error {
	a := opts.app
	cr, err := a.credentials()
	if err != nil {
		return err
	}
	from := func(env string) string {
		switch {
		case slices.Contains(cr.fromEnv, env):
			return "environment (" + env + ")"
		case cr.builtIn:
			return "built-in sandbox profile"
		}
		return fmt.Sprintf("config file %s [%s]", cr.path, cr.profile)
	}
	st := authStatus{Profile: cr.profile, ProfileFrom: cr.profileFrom, BaseURL: cr.baseURL, Host: cr.baseURL,
		BaseURLFrom: from("PAYKIT_BASE_URL"), APIKeyFrom: from("PAYKIT_API_KEY"), SecretFrom: from("PAYKIT_SECRET"),
		KeyFingerprint: fingerprint(cr.apiKey), Live: cr.live}
	if u, err := url.Parse(cr.baseURL); err == nil {
		st.BaseURL = u.Redacted() // a password in the URL is not shown
		if u.Host != "" {
			st.Host = u.Host
		}
	} else {
		st.BaseURL, st.Host = "(not a URL)", "(not a URL)"
	}
	if len(cr.fromEnv) == 3 {
		st.Profile, st.ProfileFrom = "", "none: every value is from the environment"
	}
	if a.output == "json" {
		b, err := json.Marshal(st)
		if err != nil {
			return err
		}
		return a.emitJSON(b)
	}
	var r record
	profile := st.Profile
	if profile == "" {
		profile = "(none)"
	}
	r.add("profile", profile)
	r.add("profile_from", st.ProfileFrom)
	r.add("host", st.Host)
	r.add("base_url", st.BaseURL)
	r.add("base_url_from", st.BaseURLFrom)
	r.add("api_key_from", st.APIKeyFrom)
	r.add("secret_from", st.SecretFrom)
	r.add("key_fingerprint", st.KeyFingerprint)
	live := "no"
	if st.Live {
		live = "yes: money moves need the amount or the profile's name typed"
	}
	r.add("live", live)
	return a.printRecord(nil, r)
}

// fingerprint tells API keys apart without showing one: "sha256:" and
// the first 12 hex digits of its SHA-256.
func fingerprint(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "sha256:" + hex.EncodeToString(sum[:])[:12]
}
