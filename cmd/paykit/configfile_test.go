package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// redacted is s with the test's secrets replaced, for a failure message
// that shows a config file without printing what it must not.
func redacted(s string) string {
	return strings.NewReplacer(testSecret, "<secret>", testKey, "<key>").Replace(s)
}

// TestConfigSetNoFinalNewline: config set on a file whose last line has
// no line break (an editor that does not add one, a file written by a
// script) adds its line as a line of its own. The old writer glued it onto
// the last line: `base_url = https://api.example.comsecret = sk_...`,
// which config list printed in clear as the base URL, the profile left
// without a secret after a "set" that said it succeeded.
func TestConfigSetNoFinalNewline(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct{ name, before, after string }{
		{"key last", "[default]\nbase_url = https://api.example.com",
			"[default]\nbase_url = https://api.example.com\nsecret = " + testSecret + "\n"},
		{"comment last", "[default]\nbase_url = https://api.example.com\n# the end",
			"[default]\nbase_url = https://api.example.com\nsecret = " + testSecret + "\n# the end\n"},
		{"crlf", "[default]\r\nbase_url = https://api.example.com",
			"[default]\r\nbase_url = https://api.example.com\nsecret = " + testSecret + "\n"},
		{"other section last", "[default]\nbase_url = https://api.example.com\n[ops]\nlive = true",
			"[default]\nbase_url = https://api.example.com\nsecret = " + testSecret + "\n[ops]\nlive = true\n"},
		{"section header last", "[ops]\nlive = true\n[default]",
			"[ops]\nlive = true\n[default]\nsecret = " + testSecret + "\n"},
	} {
		path := filepath.Join(t.TempDir(), "config")
		if err := os.WriteFile(path, []byte(c.before), 0o600); err != nil {
			t.Fatal(err)
		}
		vars := map[string]string{"PAYKIT_CONFIG": path}
		if r := e.runEnv(vars, testSecret+"\n", "config", "set", "secret", "-"); r.code != 0 || strings.Contains(r.stdout+r.stderr, testSecret) {
			t.Fatalf("%s: config set secret -: exit %d, %q %q", c.name, r.code, redacted(r.stdout), redacted(r.stderr))
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.after {
			t.Errorf("%s: the file after set:\n%s\nwant\n%s", c.name, redacted(string(b)), redacted(c.after))
		}
		r := e.runEnv(vars, "", "config", "list", "-o", "csv")
		base := "https://api.example.com"
		if !strings.Contains(c.before, base) {
			base = ""
		}
		if want := "default," + base + ",," + fingerprint(testSecret) + ","; r.code != 0 || !strings.Contains(r.stdout, "\r\n"+want+"\r\n") ||
			strings.Contains(r.stdout, testSecret) {
			t.Errorf("%s: config list: exit %d, %q; want the row %q", c.name, r.code, redacted(r.stdout), want)
		}
	}
}

// TestConfigDuplicates: a key twice in a section, or a section twice, is
// refused by its line number, by the reader (every command) and by the
// writer alike, and the writer leaves the file as it was. The old writer
// changed the first base_url and the reader used the last: "set" said so
// and payouts still went to the old host.
func TestConfigDuplicates(t *testing.T) {
	e := newEnv(t)
	good := "base_url = " + e.srv.URL + "\napi_key = " + testKey + "\nsecret = " + testSecret + "\n"
	for _, c := range []struct{ name, body, want string }{
		{"key", "[default]\n" + good + "# moved\nbase_url = http://127.0.0.1:1\n", ":6: a second base_url in [default] (the first is at line 2): keep one"},
		{"section", "[default]\n" + good + "\n[default]\nbase_url = http://127.0.0.1:1\n", ":6: a second [default] section (the first is at line 1): merge them into one"},
		{"key before any section", "base_url = http://127.0.0.1:1\n[default]\n" + good, ":1: base_url is before any [profile] section, so it belongs to none"},
	} {
		path := filepath.Join(t.TempDir(), "config")
		if err := os.WriteFile(path, []byte(c.body), 0o600); err != nil {
			t.Fatal(err)
		}
		vars := map[string]string{"PAYKIT_CONFIG": path}
		for _, args := range [][]string{{"balance"}, {"config", "list"}, {"config", "set", "base_url", "https://new.example.com"}} {
			r := e.runEnv(vars, "", args...)
			if r.code != 4 || r.stderr != "paykit: "+path+c.want+"\n" || r.stdout != "" {
				t.Errorf("%s: paykit %v: exit %d, stdout %q, stderr %q; want 4 and %q", c.name, args, r.code, redacted(r.stdout), redacted(r.stderr), c.want)
			}
		}
		if b, err := os.ReadFile(path); err != nil || string(b) != c.body {
			t.Errorf("%s: config set changed a refused file: %v\n%s", c.name, err, redacted(string(b)))
		}
	}
	if n := e.sb.RequestCount("GET", "/v1/balance"); n != 0 {
		t.Errorf("%d balance requests sent with a refused config file", n)
	}
}

// TestConfigSetConcurrent: writers at once, each a paykit process setting
// its own profile (base_url, then live = true), lose nothing: the lock on
// config.lock is held from the read to the rename. Without it, of 8 such
// writers 3 or 4 profiles were lost, live = true among them, which takes
// away the typed confirmation of a production profile.
func TestConfigSetConcurrent(t *testing.T) {
	e := newEnv(t)
	const writers = 12
	path := filepath.Join(t.TempDir(), "config")
	vars := map[string]string{"PAYKIT_CONFIG": path}
	var wg sync.WaitGroup
	errs := make(chan string, 2*writers)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := fmt.Sprintf("p%02d", i)
			for _, kv := range [][2]string{{"base_url", "https://" + p + ".example.com"}, {"live", "true"}} {
				if r := e.runEnv(vars, "", "--profile", p, "config", "set", kv[0], kv[1]); r.code != 0 {
					errs <- fmt.Sprintf("%s: config set %s: exit %d, %q", p, kv[0], r.code, r.stderr)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for s := range errs {
		t.Error(s)
	}
	names, profiles, err := readProfiles(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != writers {
		t.Errorf("%d profiles of %d survived: %v", len(names), writers, names)
	}
	for i := range writers {
		p := fmt.Sprintf("p%02d", i)
		if got := profiles[p]; got["base_url"] != "https://"+p+".example.com" || got["live"] != "true" {
			t.Errorf("profile [%s] after the writers: %v", p, got)
		}
	}
	if st, err := os.Stat(path + ".lock"); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the lock file: %v, %v", st, err)
	}
}

// TestConfigSetSymlink: a config file that is a symlink (dotfiles kept in
// a repository) stays one: config set writes the link's target, and the
// lock is beside the target, so that two links to one file share it.
// The old writer renamed a new regular file over the link.
func TestConfigSetSymlink(t *testing.T) {
	e := newEnv(t)
	dotfiles := t.TempDir()
	target := filepath.Join(dotfiles, "paykit.ini")
	if err := os.WriteFile(target, []byte("[default]\nbase_url = https://old.example.com\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mid := filepath.Join(dir, "mid")
	link := filepath.Join(dir, "config")
	// A chain, the first link relative: config -> mid -> target.
	if err := os.Symlink(target, mid); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("mid", link); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"PAYKIT_CONFIG": link}
	if r := e.runEnv(vars, "", "config", "set", "base_url", "https://new.example.com"); r.code != 0 {
		t.Fatalf("config set through a symlink: exit %d, %q", r.code, r.stderr)
	}
	for _, l := range []string{link, mid} {
		if st, err := os.Lstat(l); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("%s is no longer a symlink: %v, %v", l, st, err)
		}
	}
	b, err := os.ReadFile(target)
	if err != nil || string(b) != "[default]\nbase_url = https://new.example.com\n" {
		t.Fatalf("the link's target after set: %v %q", err, b)
	}
	if st, err := os.Stat(target); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the target's mode: %v, %v", st, err)
	}
	if _, err := os.Stat(target + ".lock"); err != nil {
		t.Errorf("no lock beside the target: %v", err)
	}
	for _, l := range []string{link + ".lock", mid + ".lock"} {
		if _, err := os.Lstat(l); err == nil {
			t.Errorf("a lock beside the link %s", l)
		}
	}
	// A link whose target does not exist yet: init writes the target.
	if err := os.Remove(target); err != nil {
		t.Fatal(err)
	}
	if r := e.runEnv(vars, "", "config", "init"); r.code != 0 {
		t.Fatalf("config init through a dangling symlink: exit %d, %q", r.code, r.stderr)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("config init replaced the link: %v, %v", st, err)
	}
	if b, err := os.ReadFile(target); err != nil || !strings.Contains(string(b), "[default]\n") {
		t.Fatalf("config init through a link: %v %q", err, b)
	}
}

// TestConfigWriterWholeLines: over generated files (sections, keys,
// comments, blank lines, CRLF, with and without a last line break), each
// set leaves every other profile and key as it read, the key set to its
// value, every line whole: what the file reads back as is what was meant.
func TestConfigWriterWholeLines(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 1))
	pieces := []string{"# comment", "; note", "", "  ", "base_url = https://a.example.com   # inline", "api_key = k1", "secret = \"s1\"", "live = false", "live=true"}
	keys := []string{"base_url", "api_key", "secret", "live"}
	cases := 0
	for range 3000 {
		var lines []string
		for s := range rng.IntN(4) {
			name := []string{"default", "ops", "staging", "live"}[s]
			lines = append(lines, "["+name+"]")
			used := map[string]bool{}
			for range rng.IntN(6) {
				p := pieces[rng.IntN(len(pieces))]
				k, _, _ := strings.Cut(p, "=")
				k = strings.TrimSpace(k)
				if used[k] {
					continue
				}
				used[k] = true
				lines = append(lines, p)
			}
		}
		sep := "\n"
		if rng.IntN(4) == 0 {
			sep = "\r\n"
		}
		text := strings.Join(lines, sep)
		if rng.IntN(2) == 0 && text != "" {
			text += sep
		}
		old, err := parseConfig("config", []byte(text))
		if err != nil {
			t.Fatalf("generated file refused: %v\n%q", err, text)
		}
		profile := []string{"default", "ops", "new"}[rng.IntN(3)]
		key := keys[rng.IntN(len(keys))]
		v := "v" + fmt.Sprint(rng.IntN(100))
		if key == "live" {
			v = "true"
		}
		doc, _ := parseConfig("config", []byte(text))
		doc.set(profile, key, v)
		back, err := parseConfig("config", doc.text())
		if err != nil {
			t.Fatalf("set %s.%s on %q: the result is refused: %v\n%q", profile, key, text, err, doc.text())
		}
		want := map[string]map[string]string{}
		for _, n := range old.names {
			want[n] = map[string]string{}
			for k, val := range old.profiles[n] {
				want[n][k] = val
			}
		}
		if want[profile] == nil {
			want[profile] = map[string]string{}
		}
		want[profile][key] = v
		if len(back.profiles) != len(want) {
			t.Fatalf("set %s.%s on %q: %v, want %v", profile, key, text, back.profiles, want)
		}
		for n, keys := range want {
			if fmt.Sprint(back.profiles[n]) != fmt.Sprint(keys) {
				t.Fatalf("set %s.%s on %q: [%s] reads %v, want %v\n%q", profile, key, text, n, back.profiles[n], keys, doc.text())
			}
		}
		if !sameProfiles(back, doc) {
			t.Fatalf("set %s.%s on %q: the document and its text differ", profile, key, text)
		}
		// Every line of the old file is still there, in order, but the
		// key's own line.
		rest := string(doc.text())
		for _, l := range strings.Split(strings.TrimSuffix(text, sep), sep) {
			k, _, _ := strings.Cut(l, "=")
			if strings.TrimSpace(k) == key || l == "" {
				continue
			}
			i := strings.Index(rest, l)
			if i < 0 {
				t.Fatalf("set %s.%s on %q: the line %q is gone or out of order:\n%q", profile, key, text, l, doc.text())
			}
			rest = rest[i+len(l):]
		}
		cases++
	}
	if cases != 3000 {
		t.Fatalf("%d cases", cases)
	}
}
