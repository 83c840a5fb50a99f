package clierr

import (
	"github.com/spf13/pflag"

	"github.com/reprieve/reprieve/internal/engine/profile"
)

// AddKubeVersion registers --kube-version on f. live says whether the
// command reads a cluster, whose API server's version is then the default.
func AddKubeVersion(f *pflag.FlagSet, s *string, live bool) {
	var names []string
	for _, r := range profile.Releases() {
		names = append(names, r.String())
	}
	usage := "kube-scheduler release whose decisions to mirror: " + joinOr(names) + " (v1.38.0 is accepted)"
	if live {
		usage += "; default: the connected API server's release, or else " + profile.DefaultRelease.String()
	} else {
		usage += "; default " + profile.DefaultRelease.String()
	}
	f.StringVar(s, "kube-version", "", usage)
}

// ParseKubeVersion parses --kube-version; "" is the newest mirrored release.
func ParseKubeVersion(s string) (profile.Release, error) {
	r, err := profile.ParseRelease(s)
	if err != nil {
		return 0, Usagef("--kube-version: %v", err)
	}
	return r, nil
}

func joinOr(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	s := ""
	for i, n := range names[:len(names)-1] {
		if i > 0 {
			s += ", "
		}
		s += n
	}
	return s + " or " + names[len(names)-1]
}
