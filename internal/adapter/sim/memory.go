package sim

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
)

// memoryLimit is how much memory the process may use, and what says so.
type memoryLimit struct {
	// Bytes is 0 when nothing could be read: no bound.
	Bytes  int64
	Source string
}

// memorySources are where a process's memory limit is read: files (the
// cgroup's and /proc's) and Go's own soft limit.
type memorySources struct {
	readFile func(name string) ([]byte, error)
	// goLimit is debug.SetMemoryLimit(-1): math.MaxInt64 when GOMEMLIMIT
	// is not set.
	goLimit int64
}

// physicalShare is the share of physical memory a simulation may plan to
// use when no cgroup or GOMEMLIMIT says how much: the rest is the system's
// and the other processes'.
const physicalShare = 0.75

// processMemoryLimit is what this process may use.
func processMemoryLimit() memoryLimit {
	return memorySources{readFile: os.ReadFile, goLimit: debug.SetMemoryLimit(-1)}.limit()
}

// limit is GOMEMLIMIT when set, else the cgroup's memory limit when set,
// else physicalShare of MemTotal; never above the cgroup's limit.
func (m memorySources) limit() memoryLimit {
	cgroup, hasCgroup := m.cgroupLimit()
	switch {
	case m.goLimit > 0 && m.goLimit < math.MaxInt64 && (!hasCgroup || m.goLimit <= cgroup):
		return memoryLimit{Bytes: m.goLimit, Source: "GOMEMLIMIT"}
	case hasCgroup:
		return memoryLimit{Bytes: cgroup, Source: "the cgroup's memory limit"}
	}
	if total, ok := m.memTotal(); ok {
		return memoryLimit{Bytes: int64(float64(total) * physicalShare), Source: "3/4 of physical memory; set GOMEMLIMIT to allow more"}
	}
	return memoryLimit{}
}

// cgroupLimit reads the memory limit of the process's cgroup: v2's
// memory.max, else v1's memory.limit_in_bytes, at the process's own cgroup
// (/proc/self/cgroup) or at the hierarchy's root, as a container sees it.
// ok is false when none is set ("max", or v1's page-rounded MaxInt64).
func (m memorySources) cgroupLimit() (limit int64, ok bool) {
	var v1, v2 string
	if data, err := m.readFile("/proc/self/cgroup"); err == nil {
		for line := range strings.Lines(string(data)) {
			parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
			switch {
			case len(parts) != 3:
			case parts[0] == "0" && parts[1] == "":
				v2 = parts[2]
			case slices.Contains(strings.Split(parts[1], ","), "memory"):
				v1 = parts[2]
			}
		}
	}
	var candidates []string
	if v2 != "" && v2 != "/" {
		candidates = append(candidates, "/sys/fs/cgroup"+v2+"/memory.max")
	}
	candidates = append(candidates, "/sys/fs/cgroup/memory.max")
	if v1 != "" && v1 != "/" {
		candidates = append(candidates, "/sys/fs/cgroup/memory"+v1+"/memory.limit_in_bytes")
	}
	candidates = append(candidates, "/sys/fs/cgroup/memory/memory.limit_in_bytes")
	for _, name := range candidates {
		data, err := m.readFile(name)
		if err != nil {
			continue
		}
		v, err := strconv.ParseInt(string(bytes.TrimSpace(data)), 10, 64)
		if err != nil || v <= 0 || v >= 1<<62 {
			return 0, false // "max", or v1's "unlimited"
		}
		return v, true
	}
	return 0, false
}

// memTotal reads MemTotal from /proc/meminfo, in bytes.
func (m memorySources) memTotal() (int64, bool) {
	data, err := m.readFile("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil || kb <= 0 {
			return 0, false
		}
		return satMul(kb, 1024), true
	}
	return 0, false
}
