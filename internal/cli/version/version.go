// Package version is the `reprieve version` command: the build of the
// binary and the kube-scheduler version whose decisions it mirrors.
package version

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/reprieve/reprieve/internal/cli/clierr"
	"github.com/reprieve/reprieve/internal/engine/profile"
)

// KubeScheduler is the kube-scheduler release whose decisions reprieve
// reproduces by default (--kube-version's default).
var KubeScheduler = profile.DefaultRelease.Upstream()

// Releases are the kube-scheduler releases reprieve mirrors, newest first,
// each by the upstream tag it is exact for.
func Releases() []string {
	var out []string
	for _, r := range profile.Releases() {
		out = append(out, r.Upstream())
	}
	return out
}

// Info describes the binary.
type Info struct {
	// Version is the module version the binary was built from ("(devel)"
	// for a build from a checkout).
	Version string `json:"version"`
	// Commit and CommitTime are the VCS revision stamped by the Go
	// toolchain, and Modified whether the tree had local changes.
	Commit     string `json:"commit,omitempty"`
	CommitTime string `json:"commitTime,omitempty"`
	Modified   bool   `json:"modified,omitempty"`
	// GoVersion is the toolchain that built it.
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
	// KubeScheduler is the kube-scheduler version mirrored by default,
	// KubeSchedulerReleases every one mirrored (--kube-version), newest
	// first.
	KubeScheduler         string   `json:"kubeScheduler"`
	KubeSchedulerReleases []string `json:"kubeSchedulerReleases"`
}

// Stamped at link time by builds that know better than the build
// information (the Dockerfile, whose context has no .git):
//
//	-ldflags "-X github.com/reprieve/reprieve/internal/cli/version.version=v0.4.0
//	          -X github.com/reprieve/reprieve/internal/cli/version.commit=<sha>"
var version, commit string

// Get reads the binary's build information: the stamped version and commit
// when set, else what the Go toolchain recorded (the module version, and
// the VCS revision of a build from a checkout).
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return infoFrom(bi, version, commit)
}

// infoFrom builds an Info from build information (nil when the binary has
// none) and the stamped version and commit ("" when not stamped).
func infoFrom(bi *debug.BuildInfo, stampedVersion, stampedCommit string) Info {
	info := Info{Version: "(devel)", GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH, KubeScheduler: KubeScheduler, KubeSchedulerReleases: Releases()}
	if bi != nil {
		if v := bi.Main.Version; v != "" {
			info.Version = v
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Commit = s.Value
			case "vcs.time":
				info.CommitTime = s.Value
			case "vcs.modified":
				info.Modified = s.Value == "true"
			}
		}
	}
	if stampedVersion != "" {
		info.Version = stampedVersion
	}
	if stampedCommit != "" {
		info.Commit = stampedCommit
	}
	if info.Version == "(devel)" && info.Commit != "" {
		// A build from a checkout without a tag the toolchain could read
		// (go build -buildvcs=false, or an older toolchain): name the
		// commit as a pseudo-version would.
		info.Version = "v0.0.0-" + shortCommit(info.Commit)
	}
	return info
}

// shortCommit is a commit hash cut to 12 characters, as Go's
// pseudo-versions cut it.
func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// String is the one-line form `reprieve --version` prints.
func (i Info) String() string {
	s := "reprieve " + i.Version
	if i.Commit != "" {
		s += " (" + shortCommit(i.Commit)
		if i.Modified {
			s += ", modified"
		}
		s += ")"
	}
	others := ""
	for _, r := range i.KubeSchedulerReleases {
		if r != i.KubeScheduler {
			others += ", " + r
		}
	}
	return s + fmt.Sprintf(", mirrors kube-scheduler %s (default%s), %s %s", i.KubeScheduler, others, i.GoVersion, i.Platform)
}

// NewCommand returns the version command writing to out.
func NewCommand(out io.Writer) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version [-o json|yaml]",
		Short: "Print the version of reprieve and of the kube-scheduler releases it mirrors",
		Args:  cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			info := Get()
			switch output {
			case "":
				_, err := fmt.Fprintln(out, info)
				return err
			case "json":
				b, err := json.MarshalIndent(info, "", "  ")
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(out, "%s\n", b)
				return err
			case "yaml":
				b, err := yaml.Marshal(info)
				if err != nil {
					return err
				}
				_, err = out.Write(b)
				return err
			}
			return clierr.Usagef("--output must be json or yaml, got %q", output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json or yaml (default: one line)")
	return cmd
}
