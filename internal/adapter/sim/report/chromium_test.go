package report

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
)

// chromium is the headless browser the rendering test uses: $CHROMIUM, or
// the first of the usual names on PATH; "" when there is none.
func chromium() string {
	if c := os.Getenv("CHROMIUM"); c != "" {
		return c
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// dumpDOM loads url in headless Chromium and returns the document after
// its scripts ran.
func dumpDOM(t *testing.T, bin, url string) *html.Node {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--user-data-dir="+t.TempDir(), "--dump-dom", url)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, stderr.String())
	}
	doc, err := html.Parse(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestInChromium opens the story's page in headless Chromium zoomed to
// 20s–1m40s by its address and checks what the page's script drew: the
// window it says it shows, the time axis, and a preemption mark moved to
// where its time falls in the window. The comparison page's timelines, one
// per tab, are redrawn too. It is skipped where no Chromium is installed
// (apt-get install chromium).
func TestInChromium(t *testing.T) {
	bin := chromium()
	if bin == "" {
		t.Skip("no Chromium on PATH (apt-get install chromium, or set CHROMIUM)")
	}
	dir := t.TempDir()
	sc, res := runStory(t)
	story := filepath.Join(dir, "story.html")
	if err := os.WriteFile(story, []byte(render(t, sc, res)), 0o644); err != nil {
		t.Fatal(err)
	}
	doc := dumpDOM(t, bin, "file://"+story+"#zoom=20-100")
	var label string
	var svgs []*html.Node
	walk(doc, func(n *html.Node) {
		switch {
		case n.Data == "span" && hasClass(n, "zoom-label"):
			label = text(n)
		case n.Data == "svg" && hasClass(n, "zoomable"):
			svgs = append(svgs, n)
		}
	})
	if want := "showing 0:00:20 – 0:01:40 of 10m"; label != want {
		t.Errorf("zoom label %q, want %q", label, want)
	}
	if len(svgs) != 2 {
		t.Fatalf("%d zoomable charts, want the timeline and the pending chart", len(svgs))
	}
	for _, svg := range svgs {
		var ticks []string
		walk(svg, func(n *html.Node) {
			if n.Data == "text" && n.Parent != nil && hasClass(n.Parent, "axis-bottom") {
				ticks = append(ticks, text(n))
			}
		})
		if len(ticks) < 3 || ticks[0] != "20s" || ticks[len(ticks)-1] != "1m40s" {
			t.Errorf("%s: bottom axis %v, want 20s … 1m40s", attr(svg, "aria-label"), ticks)
		}
	}
	// The first victim's preemption mark, at its time within 20s–100s.
	timeline := svgs[0]
	labelW, _ := strconv.ParseFloat(attr(timeline, "data-label-w"), 64)
	plotW, _ := strconv.ParseFloat(attr(timeline, "data-plot-w"), 64)
	var mark *html.Node
	walk(timeline, func(n *html.Node) {
		if mark == nil && n.Data == "g" && hasClass(n, "mark") {
			mark = n
		}
	})
	if mark == nil {
		t.Fatal("no preemption mark")
	}
	at, _ := strconv.ParseFloat(attr(mark, "data-t"), 64)
	want := fmt.Sprintf("translate(%s 0)", strconv.FormatFloat(math.Round((labelW+(at-20)/80*plotW)*10)/10, 'f', -1, 64))
	if got := attr(mark, "transform"); got != want {
		t.Errorf("mark at %gs: transform %q, want %q", at, got, want)
	}

	// The comparison: every policy's timeline follows the zoom.
	csc, runs := runPolicies(t, "upstream", "minimal")
	var b bytes.Buffer
	if err := WriteCompare(&b, csc, runs); err != nil {
		t.Fatal(err)
	}
	compare := filepath.Join(dir, "compare.html")
	if err := os.WriteFile(compare, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	doc = dumpDOM(t, bin, "file://"+compare+"#policy=minimal&zoom=50-80")
	var firstTicks []string
	walk(doc, func(n *html.Node) {
		if n.Data == "g" && hasClass(n, "axis-top") {
			var first string
			walk(n, func(x *html.Node) {
				if first == "" && x.Data == "text" {
					first = text(x)
				}
			})
			firstTicks = append(firstTicks, first)
		}
	})
	if len(firstTicks) != 2 || firstTicks[0] != "50s" || firstTicks[1] != "50s" {
		t.Errorf("first ticks of the policies' timelines %v, want 50s for both", firstTicks)
	}
	// #policy=minimal opened minimal's tab.
	checked := map[string]bool{}
	walk(doc, func(n *html.Node) {
		if n.Data == "input" && attr(n, "name") == "policy" {
			_, on := attrOK(n, "checked")
			checked[attr(n, "id")] = on
		}
	})
	if !checked["policy-1"] || checked["policy-0"] || len(checked) != 2 {
		t.Errorf("tabs checked %v, want minimal's (policy-1) only", checked)
	}
	if !strings.Contains(b.String(), `id="policy-0" checked`) {
		t.Errorf("the first tab is not the one open without #policy")
	}
}

// attrOK returns an attribute's value and whether the element has it.
func attrOK(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}
