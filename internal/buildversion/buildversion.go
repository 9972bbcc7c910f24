// Package buildversion says which version a binary of this repository is,
// in words that are true of it: a release names its tag, and anything else
// says that it is a development build of the next version.
//
// The go command records a binary's module version in its build info: the
// tag for `go install ...@vX.Y.Z` and release builds, a pseudo-version
// (v0.0.0-20261128101500-abcdef123456, or one derived from the previous
// tag) for a commit without a tag, "+dirty" for a build from a modified
// working tree, and "(devel)" when it recorded nothing (a build without
// VCS information, such as an image built from a copy of the source). Only
// the first is a version anyone can `go get`; the others are shown as
// development builds of the SDK's next version (paykit.Version, which
// between releases is "X.Y.Z-dev"), with what the go command recorded
// beside it so the exact commit can still be found.
//
// Standard library only: the CLI and the sandbox binary both use it.
package buildversion

import (
	"regexp"
	"runtime/debug"
	"strings"
)

// tag matches a semantic version tag (vX.Y.Z, or vX.Y.Z-rc.1), with no
// build suffix such as +dirty; pseudo matches the go command's
// pseudo-versions, which end in a 14-digit time and a 12-digit commit.
var (
	tag    = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)
	pseudo = regexp.MustCompile(`[-.][0-9]{14}-[0-9a-f]{12}$`)
)

// Module is this binary's main module version as the go command recorded
// it, "(devel)" when it recorded none.
func Module() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// Describe is the line a binary named name prints for -version: for a
// release, "name vX.Y.Z (paykit-go SDK X.Y.Z)"; for anything else, the SDK's
// version (sdk, "X.Y.Z-dev" between releases) and that it is a development
// build, with the recorded module version, e.g. "name 0.3.0-dev (development
// build v0.0.0-20261128101500-abcdef123456; paykit-go SDK 0.3.0-dev)".
func Describe(name, module, sdk string) string {
	if IsRelease(module) {
		return name + " " + module + " (paykit-go SDK " + sdk + ")"
	}
	next := sdk
	if !strings.HasSuffix(next, "-dev") {
		// A release SDK built from an untagged commit: still a development
		// build, of whatever follows that release.
		next += "+dev"
	}
	from := "from a working tree without version information"
	if module != "" && module != "(devel)" {
		from = module
	}
	return name + " " + next + " (development build " + from + "; paykit-go SDK " + sdk + ")"
}

// IsRelease reports whether module is a tag (vX.Y.Z, or a pre-release tag
// such as vX.Y.Z-rc.1): the only recorded version that names something a
// user can fetch. A pseudo-version or a +dirty build is not.
func IsRelease(module string) bool { return tag.MatchString(module) && !pseudo.MatchString(module) }
