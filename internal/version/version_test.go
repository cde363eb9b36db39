package version

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFrom(t *testing.T) {
	goVer := runtime.Version()
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	tests := []struct {
		name     string
		bi       *debug.BuildInfo
		ver, rev string
		want     Info
	}{
		{"no build info", nil, "", "", Info{"devel", "unknown", goVer, false}},
		{"go run: (devel), no vcs", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}, "", "",
			Info{"devel", "unknown", "go1.26.8", false}},
		{"go test: empty main", &debug.BuildInfo{GoVersion: "go1.26.8"}, "", "", Info{"devel", "unknown", "go1.26.8", false}},
		{"go build in a clean checkout at a tag", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}, Settings: vcs("84a085e1", "false")}, "", "",
			Info{"v1.2.3", "84a085e1", "go1.26.8", false}},
		{"go build with changes", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261201092623-84a085e1f2c3+dirty"}, Settings: vcs("84a085e1f2c3", "true")}, "", "",
			Info{"v0.0.0-20261201092623-84a085e1f2c3+dirty", "84a085e1f2c3", "go1.26.8", true}},
		{"docker: -X without vcs", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}, "v1.2.3", "84a085e1",
			Info{"v1.2.3", "84a085e1", "go1.26.8", false}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, from(tt.bi, tt.ver, tt.rev)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestString(t *testing.T) {
	for _, tt := range []struct {
		in   Info
		want string
	}{
		{Info{"devel", "unknown", "go1.26.8", false}, "ocrdraft devel revision unknown go1.26.8"},
		{Info{"v1.2.3", "84a085e1", "go1.26.8", true}, "ocrdraft v1.2.3 revision 84a085e1 (modified) go1.26.8"},
	} {
		if got := tt.in.String(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.in, got, tt.want)
		}
	}
}
