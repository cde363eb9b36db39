// Package version tells which build of ocrdraft is running, from what the Go toolchain recorded
// in the binary (runtime/debug.ReadBuildInfo), so that no constant has to be kept in step by hand.
//
// go build and go install in a git checkout record the main module's version (a tag, or a
// pseudo-version such as v0.0.0-20261201092623-84a085e1f2c3+dirty) and the commit. go run, go test
// and builds without the repository (-buildvcs=false, a Docker context without .git) record
// neither: Info then says "devel" and "unknown", unless the build passed them with
//
//	-ldflags "-X github.com/ocrdraft/ocrdraft/internal/version.version=v1.2.3 -X github.com/ocrdraft/ocrdraft/internal/version.revision=<commit>"
//
// as the Dockerfile does from its VERSION and REVISION build arguments.
package version

import (
	"runtime"
	"runtime/debug"
)

// Set by the linker (-X) where the build has no VCS information of its own; see the package doc.
var version, revision string

// Info is the running build, as GET /version, ocrdraft version, the start log and
// ocrdraft_build_info report it.
type Info struct {
	Version   string `json:"version" desc:"The main module's version: a tag, a pseudo-version, or devel for a build that recorded none."`
	Revision  string `json:"revision" desc:"The commit the binary was built from, or unknown."`
	GoVersion string `json:"goVersion" desc:"The Go toolchain that built the binary."`
	Modified  bool   `json:"modified,omitempty" desc:"The working tree had uncommitted changes at build time."`
}

// Read returns the running build's Info.
func Read() Info {
	bi, _ := debug.ReadBuildInfo()
	return from(bi, version, revision)
}

// from reads bi (nil when the binary carries none), preferring values set with -X.
func from(bi *debug.BuildInfo, ver, rev string) Info {
	in := Info{Version: "devel", Revision: "unknown", GoVersion: runtime.Version()}
	if bi != nil {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			in.Version = v
		}
		if bi.GoVersion != "" {
			in.GoVersion = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if s.Value != "" {
					in.Revision = s.Value
				}
			case "vcs.modified":
				in.Modified = s.Value == "true"
			}
		}
	}
	if ver != "" {
		in.Version = ver
	}
	if rev != "" {
		in.Revision = rev
	}
	return in
}

// String is the one line ocrdraft version prints: "ocrdraft v1.2.3 revision 84a085e1… (modified) go1.26.8".
func (in Info) String() string {
	s := "ocrdraft " + in.Version + " revision " + in.Revision
	if in.Modified {
		s += " (modified)"
	}
	return s + " " + in.GoVersion
}
