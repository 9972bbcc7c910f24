package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/paykit-dev/paykit-go/sandbox"
)

// sandboxBaseURL is where `paykit sandbox` (and paykit-sandbox) listen by
// default: the built-in "sandbox" profile points there.
const sandboxBaseURL = "http://127.0.0.1:8080"

// credentials are what a client needs, and where each came from (paykit
// auth status).
type credentials struct {
	profile                 string
	baseURL, apiKey, secret string
	// fromEnv names the variables that won over the profile.
	fromEnv []string
	// profileFrom says how the profile was chosen: "--profile",
	// "PAYKIT_PROFILE" or "default".
	profileFrom string
	// path is the config file looked at; builtIn is set when the profile
	// is the built-in sandbox one, not the file's.
	path    string
	builtIn bool
	// live marks a profile whose money moves need a typed confirmation
	// (live = true in its section).
	live bool
}

// source says where the credentials came from, for an error message.
func (c *credentials) source() string {
	switch len(c.fromEnv) {
	case 3:
		return "from the environment"
	case 0:
		return fmt.Sprintf("profile %q", c.profile)
	}
	return fmt.Sprintf("profile %q and %s", c.profile, strings.Join(c.fromEnv, ", "))
}

// configPath is <user config dir>/paykit/config; PAYKIT_CONFIG overrides it
// (tests, and people who keep it elsewhere).
func configPath(getenv func(string) string) (string, error) {
	if p := getenv("PAYKIT_CONFIG"); p != "" {
		return p, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "paykit", "config"), nil
}

// chooseProfile is the profile a command uses and what chose it: flag
// (--profile) when given, else PAYKIT_PROFILE, else "default".
func chooseProfile(getenv func(string) string, flag string) (profile, from string) {
	switch {
	case flag != "":
		return flag, "--profile"
	case getenv("PAYKIT_PROFILE") != "":
		return getenv("PAYKIT_PROFILE"), "PAYKIT_PROFILE"
	}
	return "default", "default"
}

// loadCredentials takes each of the three values from its environment
// variable when set, otherwise from the profile, except when the profile
// was named on the command line (explicit): then the profile alone counts
// and PAYKIT_BASE_URL, PAYKIT_API_KEY and PAYKIT_SECRET are ignored, as
// aws-cli's --profile wins over AWS_ACCESS_KEY_ID. The flag is the more
// deliberate choice: an exported variable left from another task must not
// send a payout somewhere the command line did not say. The built-in
// "sandbox" profile needs no file.
func loadCredentials(getenv func(string) string, profile string, explicit bool) (*credentials, error) {
	if explicit {
		inner := getenv
		getenv = func(k string) string {
			switch k {
			case "PAYKIT_BASE_URL", "PAYKIT_API_KEY", "PAYKIT_SECRET":
				return ""
			}
			return inner(k)
		}
	}
	profile, profileFrom := chooseProfile(getenv, profile)
	cr := &credentials{profile: profile, profileFrom: profileFrom}
	var fromFile map[string]string
	path, err := configPath(getenv)
	if err == nil {
		fromFile, err = readProfile(path, profile)
		if err != nil {
			return nil, err
		}
	}
	cr.path = path
	if fromFile == nil && profile == "sandbox" {
		fromFile = map[string]string{"base_url": sandboxBaseURL, "api_key": sandbox.DefaultAPIKey, "secret": sandbox.DefaultSecret}
		cr.builtIn = true
	}
	cr.live = fromFile["live"] == "true"
	pick := func(envName, key string) string {
		if v := getenv(envName); v != "" {
			cr.fromEnv = append(cr.fromEnv, envName)
			return v
		}
		return fromFile[key]
	}
	cr.baseURL = pick("PAYKIT_BASE_URL", "base_url")
	cr.apiKey = pick("PAYKIT_API_KEY", "api_key")
	cr.secret = pick("PAYKIT_SECRET", "secret")
	var missing []string
	for _, m := range []struct{ v, name string }{{cr.baseURL, "PAYKIT_BASE_URL"}, {cr.apiKey, "PAYKIT_API_KEY"}, {cr.secret, "PAYKIT_SECRET"}} {
		if m.v == "" {
			missing = append(missing, m.name)
		}
	}
	if len(missing) > 0 {
		where := "no config file at " + path
		if fromFile != nil {
			where = fmt.Sprintf("profile [%s] of %s", profile, path)
		} else if _, err := os.Stat(path); err == nil {
			where = fmt.Sprintf("no profile [%s] in %s", profile, path)
		}
		return nil, &credentialsError{msg: fmt.Sprintf("missing %s (%s); set them in the environment or in a profile, "+
			"or use --profile sandbox for a local sandbox", strings.Join(missing, ", "), where)}
	}
	return cr, nil
}

// readProfile returns the keys of [profile] in the file at path; nil (no
// error) when the file or the profile does not exist.
func readProfile(path, profile string) (map[string]string, error) {
	_, profiles, err := readProfiles(path)
	if err != nil {
		return nil, err
	}
	return profiles[profile], nil
}

// readProfiles returns the sections of the file at path, in file order,
// and the keys of each; none (no error) when the file does not exist. See
// readConfig for what is refused.
func readProfiles(path string) (names []string, profiles map[string]map[string]string, err error) {
	d, err := readConfig(path)
	if d == nil || err != nil {
		return nil, nil, err
	}
	return d.names, d.profiles, nil
}

// stripComment removes an inline comment (see commentIndex), then the
// surrounding white space.
func stripComment(v string) string {
	if i := commentIndex(v); i >= 0 {
		v = v[:i]
	}
	return strings.TrimSpace(v)
}

// commentIndex is where an inline comment starts in v: a # or ; after
// white space (a URL's #fragment or a value's ; has none before it, and
// neither appears in a base64 secret); -1 when there is none.
func commentIndex(v string) int {
	for i := 1; i < len(v); i++ {
		if (v[i] == '#' || v[i] == ';') && (v[i-1] == ' ' || v[i-1] == '\t') {
			return i
		}
	}
	return -1
}

// shellQuote quotes a word for a printed command (the chmod, the command
// that settles an unknown outcome) when it holds anything beyond the
// characters a POSIX shell leaves alone, as Python's shlex.quote does.
func shellQuote(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./_-", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

const configExample = "  paykit --profile staging config set base_url https://staging.example.com\n" +
	"  paykit --profile staging config set secret - < secret.txt\n  paykit config list\n" +
	"  paykit --profile sandbox balance\n  PAYKIT_PROFILE=staging paykit doctor"

func configCmd(a *app) *cobra.Command {
	cmd := configHelpTopic()
	cmd.AddCommand(newCmdConfigInit(a, nil), newCmdConfigSet(a, nil), newCmdConfigGet(a, nil), newCmdConfigList(a, nil))
	return cmd
}

func configHelpTopic() *cobra.Command {
	return &cobra.Command{
		Use:   "config",
		Short: "Where credentials come from, and init, set, get and list of the config file",
		Long: `Credentials come from a profile of the config file, or from PAYKIT_BASE_URL,
PAYKIT_API_KEY and PAYKIT_SECRET:

  <config dir>/paykit/config   (~/.config/paykit/config on Linux; PAYKIT_CONFIG overrides)

  [default]
  base_url = https://api.example.com
  api_key  = pk_live_...
  secret   = sk_live_...

  [staging]
  base_url = https://staging.example.com   # inline comments after white space
  api_key  = ...
  secret   = ...

  [live]
  base_url = https://api.example.com
  api_key  = ...
  secret   = ...
  live     = true   ; money moves need the amount or "live" typed, not y

--profile NAME on the command line picks a profile and the PAYKIT_BASE_URL, PAYKIT_API_KEY
and PAYKIT_SECRET variables are then ignored: the flag is the deliberate choice. Without
it, each variable that is set wins over the profile of PAYKIT_PROFILE ("default" when
unset). Lines starting with # or ;, and a # or ; after white space, are comments
(paykit auth status shows what was picked). A malformed line is refused by its
number, its text never printed, and so is a section twice, a key twice in a section,
or a key before any section. The file must be readable by you alone (chmod 600):
paykit refuses it otherwise, exit 4.
The profile "sandbox" needs no file: it targets a local sandbox
(paykit sandbox) at ` + sandboxBaseURL + ` with its default credentials.

paykit config init writes a commented file (0600); config set changes one key of a
profile keeping the rest, comments included, under a lock on config.lock beside the
file (a symlinked file stays a link: its target is rewritten); config get and list
print api_key and secret as fingerprints, never the values. The sandbox's control
token has no key here: it is PAYKIT_SANDBOX_CONTROL_TOKEN.`,
		Example: configExample,
	}
}
