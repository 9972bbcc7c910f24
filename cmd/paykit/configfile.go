package main

// The config file as lines: one parser for the reader (every command's
// credentials) and the writer (config init and set), so that both read a
// file the same way, and a writer that handles whole lines, so that no
// change can run into the line before or after it.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// maxConfigSize bounds what is read of a config file: a few profiles take
// a few hundred bytes; a larger file is not one paykit wrote.
const maxConfigSize = 1 << 20

// configLine is one line of the config file, without its line break.
type configLine struct {
	// text is the line as it is in the file (a CRLF file's \r kept).
	text string
	// section is the name of a [section] header line; key and value are
	// those of a key = value line (value without its inline comment and
	// quotes). A blank or comment line has none of them.
	section    string
	key, value string
}

// configDoc is a parsed config file: its lines, in order, and what they
// mean. Every key belongs to a section, a section appears once and a key
// once in its section: a file where either repeats is refused, since the
// reader would have to pick one and the writer might change the other.
type configDoc struct {
	path  string
	lines []configLine
	// names are the sections in file order.
	names []string
	// profiles are the keys and values of each section.
	profiles map[string]map[string]string
	// header is the line index of each section's header; keyAt that of
	// each section's keys.
	header map[string]int
	keyAt  map[string]map[string]int
}

// configErrorf is a refusal of the file (exit 4, as the service's refusal
// of credentials): path:line: what is wrong, never the line's text, which
// could be a secret missing its key.
func configErrorf(path string, line int, format string, a ...any) error {
	return &credentialsError{msg: fmt.Sprintf("%s:%d: ", path, line) + fmt.Sprintf(format, a...)}
}

// parseConfig reads the text of the file at path (path is for messages).
// It refuses a malformed line, a key before any section, an unknown key,
// a live other than true or false, and a section or a key in a section
// seen before, each by its line number.
func parseConfig(path string, text []byte) (*configDoc, error) {
	d := &configDoc{path: path, profiles: map[string]map[string]string{}, header: map[string]int{}, keyAt: map[string]map[string]int{}}
	raw := strings.Split(string(text), "\n")
	if raw[len(raw)-1] == "" {
		raw = raw[:len(raw)-1] // the file's last line break, or an empty file
	}
	section := ""
	inSection := false
	for i, t := range raw {
		n := i + 1
		l := configLine{text: t}
		s := strings.TrimSpace(t)
		switch {
		case s == "" || s[0] == '#' || s[0] == ';':
		case s[0] == '[':
			s = stripComment(s)
			if !strings.HasSuffix(s, "]") {
				return nil, configErrorf(path, n, "a section header is [name]")
			}
			section, inSection = strings.TrimSpace(s[1:len(s)-1]), true
			if first, ok := d.header[section]; ok {
				return nil, configErrorf(path, n, "a second [%s] section (the first is at line %d): merge them into one", safeCell(section), first+1)
			}
			l.section = section
			d.header[section] = i
			d.names = append(d.names, section)
			d.profiles[section] = map[string]string{}
			d.keyAt[section] = map[string]int{}
		default:
			k, v, ok := strings.Cut(s, "=")
			if !ok {
				// The line is not echoed: it could be a secret missing its key.
				return nil, configErrorf(path, n, "want key = value")
			}
			k, v = strings.TrimSpace(k), stripComment(v)
			switch k {
			case "base_url", "api_key", "secret":
			case "live":
				if v != "true" && v != "false" {
					return nil, configErrorf(path, n, "live is true or false")
				}
			default:
				// Not even the key is echoed: a base64 secret pasted alone
				// ends in "=" and would be the "key".
				return nil, configErrorf(path, n, "unknown key (want base_url, api_key, secret or live = value)")
			}
			if !inSection {
				return nil, configErrorf(path, n, "%s is before any [profile] section, so it belongs to none", k)
			}
			if first, ok := d.keyAt[section][k]; ok {
				return nil, configErrorf(path, n, "a second %s in [%s] (the first is at line %d): keep one", k, safeCell(section), first+1)
			}
			l.key, l.value = k, strings.Trim(v, `"`)
			d.keyAt[section][k] = i
			d.profiles[section][k] = l.value
		}
		d.lines = append(d.lines, l)
	}
	return d, nil
}

// configFileError is a failure to read or write the config file (exit 4:
// without its file, no command has credentials).
func configFileError(err error) error {
	return &credentialsError{msg: fmt.Sprintf("config file: %v", err)}
}

// readConfig reads and parses the file at path; nil (no error) when it
// does not exist. A file that group or others can read or write is
// refused before a line is parsed, whatever it holds: it is where secrets
// live.
func readConfig(path string) (*configDoc, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, configFileError(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, configFileError(err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, &credentialsError{msg: fmt.Sprintf("config file %s holds secrets but is readable by others (mode %04o); fix it with:\n  chmod 600 %s",
			path, st.Mode().Perm(), shellQuote(path))}
	}
	text, err := io.ReadAll(io.LimitReader(f, maxConfigSize+1))
	if err != nil {
		return nil, configFileError(err)
	}
	if len(text) > maxConfigSize {
		return nil, &credentialsError{msg: fmt.Sprintf("config file %s: larger than %d bytes, which no config file is", path, maxConfigSize)}
	}
	return parseConfig(path, text)
}

// set makes key = v in [profile]: the key's line rewritten (its inline
// comment kept), else a line added after the section's last key (or its
// header), else the section added at the end.
func (d *configDoc) set(profile, key, v string) {
	line := configLine{key: key, value: v}
	if i, ok := d.keyAt[profile][key]; ok {
		k, rest, _ := strings.Cut(d.lines[i].text, "=")
		line.text = k + "= " + v
		if c := commentIndex(rest); c >= 0 {
			line.text += "   " + strings.TrimRight(rest[c:], "\r")
		}
		d.lines[i] = line
		d.profiles[profile][key] = v
		return
	}
	line.text = key + " = " + v
	h, ok := d.header[profile]
	if !ok {
		d.lines = append(d.lines, configLine{text: "[" + profile + "]", section: profile}, line)
		d.header[profile] = len(d.lines) - 2
		d.names = append(d.names, profile)
		d.profiles[profile] = map[string]string{key: v}
		d.keyAt[profile] = map[string]int{key: len(d.lines) - 1}
		return
	}
	at := h + 1
	for _, i := range d.keyAt[profile] {
		at = max(at, i+1)
	}
	d.lines = slices.Insert(d.lines, at, line)
	for _, keys := range d.keyAt {
		for k, i := range keys {
			if i >= at {
				keys[k] = i + 1
			}
		}
	}
	for s, i := range d.header {
		if i >= at {
			d.header[s] = i + 1
		}
	}
	d.keyAt[profile][key] = at
	d.profiles[profile][key] = v
}

// text is the file: every line followed by its line break. Lines are
// whole by construction: no line can run into the next.
func (d *configDoc) text() []byte {
	var b strings.Builder
	for _, l := range d.lines {
		b.WriteString(l.text)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// sameProfiles tells whether two files hold the same profiles, keys and
// values, in the same order of sections.
func sameProfiles(a, b *configDoc) bool {
	if !slices.Equal(a.names, b.names) {
		return false
	}
	for _, n := range a.names {
		if !maps.Equal(a.profiles[n], b.profiles[n]) {
			return false
		}
	}
	return true
}

// checkProfileName refuses a profile name that a [name] header could not
// hold and read back as given.
func checkProfileName(name string) error {
	if name == "" || name != strings.TrimSpace(name) || strings.ContainsAny(name, "[]#;\r\n") || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return usagef("the profile name %q cannot be a [section] of the config file: use letters, digits, - and _", safeCell(name))
	}
	return nil
}

// updateConfig changes the config file at path under its lock: it reads
// the file (nil when there is none), lets change make the new text from
// it, and writes that text in place of the file, through a symlink to its
// target. change's error leaves the file as it was. The lock is held from
// the read to the rename, so that two paykit processes changing the file
// at once each see the other's change.
func updateConfig(ctx context.Context, path string, change func(old *configDoc) (*configDoc, error)) error {
	target, err := linkTarget(path)
	if err != nil {
		return configFileError(err)
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		return configFileError(err)
	}
	unlock, err := lockConfig(ctx, target)
	if err != nil {
		return err
	}
	defer unlock()
	old, err := readConfig(path)
	if err != nil {
		return err
	}
	doc, err := change(old)
	if err != nil {
		return err
	}
	text := doc.text()
	// What is written must read back as what was meant: the file is
	// parsed again, and a file that reads otherwise is not written.
	back, err := parseConfig(path, text)
	if err != nil || !sameProfiles(back, doc) {
		return &exitError{code: exitInternal, msg: "config file: the new text would not read back as written (a bug); the file was not changed"}
	}
	return writeConfig(target, text)
}

// linkTarget is the file a config path names: path itself, or the target
// of the symlink chain it is (a target that does not exist yet included),
// so that the file is replaced and the link kept.
func linkTarget(path string) (string, error) {
	p := path
	for range 40 {
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) || err == nil && st.Mode()&fs.ModeSymlink == 0 {
			return p, nil
		}
		if err != nil {
			return "", err
		}
		t, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(filepath.Dir(p), t)
		}
		p = t
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links", path)
}

// lockConfig takes the lock of the config file at target: an exclusive
// lock (flock, or LockFileEx on Windows) on target.lock beside it, made
// 0600 and never removed (removing it would let a second writer lock a
// new file while a first holds the old). A wait for the lock ends with the
// command's context (Ctrl-C), nothing written.
func lockConfig(ctx context.Context, target string) (unlock func(), err error) {
	f, err := os.OpenFile(target+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, &credentialsError{msg: fmt.Sprintf("config file lock: %v", err)}
	}
	done := make(chan error, 1)
	go func() { done <- lockFile(f) }()
	select {
	case err := <-done:
		if err != nil {
			f.Close()
			return nil, &credentialsError{msg: fmt.Sprintf("config file lock %s: %v", target+".lock", err)}
		}
		return func() { f.Close() }, nil // closing the file releases the lock
	case <-ctx.Done():
		// The goroutine may still take the lock: the process is ending,
		// which releases it.
		return nil, &interruptedError{what: "the config file was not changed"}
	}
}

// writeConfig writes the file readable by its owner alone: a new file
// beside it, synced, then a rename, so that no moment leaves a secret in a
// file others can read or a half-written file behind. path is the file
// itself, not a symlink to it (see linkTarget), in a directory that
// exists (updateConfig makes it).
func writeConfig(path string, text []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".config-*")
	if err != nil {
		return configFileError(err)
	}
	defer os.Remove(f.Name()) // after the rename, a no-op
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return &credentialsError{msg: fmt.Sprintf("config file: cannot make %s readable by you alone", f.Name())}
	}
	_, err = f.Write(text)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		return configFileError(err)
	}
	return nil
}
