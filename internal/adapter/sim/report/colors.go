package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/reprieve/reprieve/internal/adapter/sim"
)

// palette colours priorities, highest priority first. Red is left out: it
// marks preemptions and lost nominations.
var palette = []string{
	"#4c78a8", // blue
	"#f58518", // orange
	"#54a24b", // green
	"#b279a2", // purple
	"#72b7b2", // teal
	"#eeca3b", // yellow
	"#9d755d", // brown
	"#ff9da6", // pink
	"#79706e", // grey
	"#bcbd22", // olive
}

// Outcome colours of nominations, and the preemption marker.
const (
	colorBound   = "#2e7d32"
	colorLost    = "#d62728"
	colorOpen    = "#7f7f7f"
	colorPreempt = "#d62728"
	colorAdded   = "#2e7d32"
	colorRemoved = "#d62728"
	colorCordon  = "#e8a33d"
)

// swatch is the colours of one priority.
type swatch struct {
	Priority int32
	Classes  string // PriorityClass names with this value, comma separated
	Base     string // outlines and legend
	Fill     string // running bars
	Light    string // stripes of the termination period, waiting bars
	index    int
}

// priorityColors assigns a swatch to every priority a pod had, highest
// first: the palette when there are few priorities, evenly spaced hues when
// there are more.
func priorityColors(pods []sim.PodHistory, classes map[int32][]string) []swatch {
	var prios []int32
	for _, p := range pods {
		prios = append(prios, p.Priority)
	}
	slices.Sort(prios)
	prios = slices.Compact(prios)
	slices.Reverse(prios)
	out := make([]swatch, len(prios))
	for i, p := range prios {
		base := ""
		if len(prios) <= len(palette) {
			base = palette[i]
		} else {
			base = hsl(float64(i)*360/float64(len(prios))+210, 0.55, 0.5)
		}
		out[i] = swatch{Priority: p, Base: base, Fill: mix(base, 0.55), Light: mix(base, 0.3), index: i}
		if names := classes[p]; len(names) > 0 {
			out[i].Classes = strings.Join(names, ", ")
		}
	}
	return out
}

func rgb(hex string) (r, g, b float64) {
	v, _ := strconv.ParseUint(hex[1:], 16, 32)
	return float64(v >> 16 & 0xff), float64(v >> 8 & 0xff), float64(v & 0xff)
}

func hexColor(r, g, b float64) string {
	c := func(v float64) int { return int(math.Round(math.Max(0, math.Min(255, v)))) }
	return fmt.Sprintf("#%02x%02x%02x", c(r), c(g), c(b))
}

// mix blends hex with white: a=1 is hex, a=0 white.
func mix(hex string, a float64) string {
	r, g, b := rgb(hex)
	return hexColor(255+(r-255)*a, 255+(g-255)*a, 255+(b-255)*a)
}

// hsl converts a hue in degrees, saturation and lightness to hex.
func hsl(h, s, l float64) string {
	h = math.Mod(h, 360) / 360
	f := func(n float64) float64 {
		k := math.Mod(n+h*12, 12)
		a := s * math.Min(l, 1-l)
		return (l - a*math.Max(-1, math.Min(k-3, math.Min(9-k, 1)))) * 255
	}
	return hexColor(f(0), f(8), f(4))
}
