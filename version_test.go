package paykit

import (
	"bufio"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// changelogSections are CHANGELOG.md's "## [...]" headings in order:
// "Unreleased" and the released versions (X.Y.Z).
func changelogSections(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("CHANGELOG.md")
	require.NoError(t, err)
	defer f.Close()
	heading := regexp.MustCompile(`^## \[([^\]]+)\]`)
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := heading.FindStringSubmatch(sc.Text()); m != nil {
			out = append(out, m[1])
		}
	}
	require.NoError(t, sc.Err())
	return out
}

// semver splits X.Y.Z[-pre] into its three numbers; ok is false for
// anything else.
func semver(v string) (n [3]int, ok bool) {
	core, _, _ := strings.Cut(v, "-")
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return n, false
	}
	for i, p := range parts {
		x, err := strconv.Atoi(p)
		if err != nil || x < 0 {
			return n, false
		}
		n[i] = x
	}
	return n, true
}

// tagsInClone lists the clone's tags; ok is false where there is no git or
// no repository (a module zip), and the tag rules cannot be checked.
func tagsInClone(t *testing.T) (map[string]bool, bool) {
	t.Helper()
	if _, err := os.Stat(".git"); err != nil {
		if out, err := exec.Command("git", "rev-parse", "--is-inside-work-tree").Output(); err != nil || strings.TrimSpace(string(out)) != "true" {
			return nil, false
		}
	}
	out, err := exec.Command("git", "tag", "--list", "v*").Output()
	if err != nil {
		return nil, false
	}
	tags := map[string]bool{}
	for _, l := range strings.Fields(string(out)) {
		tags[l] = true
	}
	return tags, true
}

// TestVersionIsTrue protects the version a merchant sees (Version, the
// User-Agent) from naming a release that does not exist: between releases
// Version is the next version marked "-dev", newer than every released
// section; in a release it is CHANGELOG.md's newest released section. A
// section has a version's heading only once its tag exists, and
// CHANGELOG's top section is [Unreleased] until then (RELEASING.md).
func TestVersionIsTrue(t *testing.T) {
	t.Parallel()
	sections := changelogSections(t)
	require.NotEmpty(t, sections, "CHANGELOG.md has no ## [...] section")
	var released []string
	for _, s := range sections {
		if !strings.EqualFold(s, "Unreleased") {
			released = append(released, s)
		}
	}
	for _, r := range released {
		_, ok := semver(r)
		assert.True(t, ok, "CHANGELOG section [%s] is not a semantic version", r)
	}

	if base, ok := strings.CutSuffix(Version, "-dev"); ok {
		assert.Equal(t, "Unreleased", sections[0], "a development version needs CHANGELOG's top section to be [Unreleased]")
		next, ok := semver(base)
		require.True(t, ok, "Version %q is not X.Y.Z-dev", Version)
		for _, r := range released {
			prev, _ := semver(r)
			assert.True(t, less(prev, next), "Version %s is not newer than the released %s", Version, r)
		}
	} else {
		require.NotEmpty(t, released, "Version %s is a release, but CHANGELOG.md has no released section", Version)
		assert.Equal(t, released[0], Version, "paykit.Version is not CHANGELOG.md's newest released section")
	}

	if tags, ok := tagsInClone(t); ok {
		for _, r := range released {
			assert.True(t, tags["v"+r], "CHANGELOG.md has a section [%s], but the clone has no tag v%s: until it exists the section is [Unreleased]", r, r)
		}
	} else {
		t.Log("not a git clone: the tags of CHANGELOG's sections are not checked")
	}

	c, rec := mockClient(t, 200, `{"banks":[]}`)
	_, err := c.ListBanks(ctx)
	require.NoError(t, err)
	assert.Regexp(t, `^paykit-go/`+regexp.QuoteMeta(Version)+` go[0-9]`, rec.only(t).UserAgent)
}

func less(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

func TestSemverAndLess(t *testing.T) {
	n, ok := semver("1.20.3-dev")
	assert.True(t, ok)
	assert.Equal(t, [3]int{1, 20, 3}, n)
	for _, bad := range []string{"1.2", "a.b.c", "1.2.3.4", "-1.0.0"} {
		_, ok := semver(bad)
		assert.False(t, ok, bad)
	}
	assert.True(t, less([3]int{0, 2, 0}, [3]int{0, 3, 0}))
	assert.False(t, less([3]int{0, 3, 0}, [3]int{0, 3, 0}))
	assert.False(t, less([3]int{1, 0, 0}, [3]int{0, 9, 9}))
}
