package paykit

import (
	"bufio"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newestRelease is the version of CHANGELOG.md's first section that is not
// [Unreleased]: the version a merchant has in hand.
func newestRelease(t *testing.T) string {
	t.Helper()
	f, err := os.Open("CHANGELOG.md")
	require.NoError(t, err)
	defer f.Close()
	heading := regexp.MustCompile(`^## \[([^\]]+)\]`)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := heading.FindStringSubmatch(sc.Text())
		if m == nil || strings.EqualFold(m[1], "Unreleased") {
			continue
		}
		return m[1]
	}
	require.NoError(t, sc.Err())
	t.Fatal("CHANGELOG.md has no released section (## [X.Y.Z] - date)")
	return ""
}

// TestVersionIsNewestRelease protects the User-Agent from a stale version:
// Version moves with CHANGELOG's newest released section (RELEASING.md).
func TestVersionIsNewestRelease(t *testing.T) {
	t.Parallel()
	want := newestRelease(t)
	assert.Regexp(t, `^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`, want, "CHANGELOG's newest section is not a semantic version")
	assert.Equal(t, want, Version, "paykit.Version is not CHANGELOG.md's newest released section")

	c, rec := mockClient(t, 200, `{"banks":[]}`)
	_, err := c.ListBanks(ctx)
	require.NoError(t, err)
	assert.Regexp(t, `^paykit-go/`+regexp.QuoteMeta(want)+` go[0-9]`, rec.only(t).UserAgent)
}
