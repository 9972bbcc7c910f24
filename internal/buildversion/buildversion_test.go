package buildversion

import "testing"

func TestDescribe(t *testing.T) {
	for _, tc := range []struct{ module, sdk, want string }{
		{"v0.3.0", "0.3.0", "paykit v0.3.0 (paykit-go SDK 0.3.0)"},
		{"v0.0.0-20261128101500-abcdef123456", "0.3.0-dev",
			"paykit 0.3.0-dev (development build v0.0.0-20261128101500-abcdef123456; paykit-go SDK 0.3.0-dev)"},
		{"v0.3.1-0.20261128101500-abcdef123456", "0.3.1-dev",
			"paykit 0.3.1-dev (development build v0.3.1-0.20261128101500-abcdef123456; paykit-go SDK 0.3.1-dev)"},
		{"v0.0.0-20261128101500-abcdef123456+dirty", "0.3.0-dev",
			"paykit 0.3.0-dev (development build v0.0.0-20261128101500-abcdef123456+dirty; paykit-go SDK 0.3.0-dev)"},
		{"(devel)", "0.3.0-dev",
			"paykit 0.3.0-dev (development build from a working tree without version information; paykit-go SDK 0.3.0-dev)"},
		{"", "0.3.0", "paykit 0.3.0+dev (development build from a working tree without version information; paykit-go SDK 0.3.0)"},
		{"v0.3.0-rc.1", "0.3.0-rc.1", "paykit v0.3.0-rc.1 (paykit-go SDK 0.3.0-rc.1)"},
	} {
		if got := Describe("paykit", tc.module, tc.sdk); got != tc.want {
			t.Errorf("Describe(%q, %q):\n got %q\nwant %q", tc.module, tc.sdk, got, tc.want)
		}
	}
}

func TestModuleOfATestBinary(t *testing.T) {
	// A test binary records no module version: "(devel)" or a version, never "".
	if Module() == "" {
		t.Fatal("Module() is empty")
	}
}
