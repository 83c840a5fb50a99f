package report

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"

	"github.com/reprieve/reprieve/internal/adapter/sim"
	"github.com/reprieve/reprieve/internal/engine/preemption"
	"github.com/reprieve/reprieve/internal/engine/profile"
)

// runPolicies runs the bundled policies scenario under each policy.
func runPolicies(t *testing.T, policies ...preemption.Policy) (*sim.Scenario, []Run) {
	t.Helper()
	var runs []Run
	var first *sim.Scenario
	for _, p := range policies {
		sc, err := sim.LoadScenario("../../../../examples/simulate/policies.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = sc
		}
		res, err := sim.Run(context.Background(), sc, sim.Options{Policy: p})
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, Run{Policy: string(p), Result: res})
	}
	return first, runs
}

// TestCompare checks the comparison page of the bundled policies
// scenario: the numbers side by side with the best marked, one line per
// policy in the pending and evictions charts, and one timeline per policy
// behind a tab, each with that run's bars and preemption marks and ids of
// its own.
func TestCompare(t *testing.T) {
	sc, runs := runPolicies(t, profile.PolicyUpstream, profile.PolicyMinimal)
	var b bytes.Buffer
	if err := WriteCompare(&b, sc, runs); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	checkWellFormed(t, page)
	checkSelfContained(t, page)
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var tabs, panels, ids []string
	lines := map[string][]string{} // chart → its series
	marks := map[string]int{}      // policy → preemption marks in its timeline
	bars := map[string]map[string]string{}
	var evictionsRow []string
	var evictionsBest []bool
	walk(doc, func(n *html.Node) {
		if id := attr(n, "id"); id != "" {
			ids = append(ids, id)
		}
		switch {
		case n.Data == "label" && attr(n, "for") != "":
			tabs = append(tabs, text(n))
		case n.Data == "div" && hasClass(n, "tab-panel"):
			panels = append(panels, attr(n, "data-policy"))
		case n.Data == "path" && hasClass(n, "step"):
			svg := n.Parent
			lines[attr(svg, "aria-label")] = append(lines[attr(svg, "aria-label")], attr(n, "data-series"))
		case n.Data == "path" && hasClass(n, "preempt"):
			marks[policyOf(n)]++
		case n.Data == "g" && hasClass(n, "pod"):
			p := policyOf(n)
			if bars[p] == nil {
				bars[p] = map[string]string{}
			}
			bars[p][attr(n, "data-pod")] = attr(laneOf(n), "data-node")
		case n.Data == "tr" && n.FirstChild != nil && text(n.FirstChild) == "evictions (victims chosen)":
			for c := n.FirstChild.NextSibling; c != nil; c = c.NextSibling {
				if c.Data == "td" {
					evictionsRow = append(evictionsRow, text(c))
					evictionsBest = append(evictionsBest, hasClass(c, "best"))
				}
			}
		}
	})
	if diff := cmp.Diff([]string{"upstream", "minimal"}, tabs); diff != "" {
		t.Errorf("tabs (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"upstream", "minimal"}, panels); diff != "" {
		t.Errorf("panels (-want,+got):\n%s", diff)
	}
	for _, c := range []string{"Pending pods over time, one line per run", "Evictions over time, one line per run"} {
		if diff := cmp.Diff([]string{"upstream", "minimal"}, lines[c]); diff != "" {
			t.Errorf("lines of %q (-want,+got):\n%s", c, diff)
		}
	}
	if diff := cmp.Diff([]string{"12", "6"}, evictionsRow); diff != "" || !slices.Equal(evictionsBest, []bool{false, true}) {
		t.Errorf("evictions row %v best %v, want [12 6] with minimal best", evictionsRow, evictionsBest)
	}
	for _, r := range runs {
		want := map[string]string{}
		preempted := 0
		for _, p := range r.Result.Pods {
			if p.Bound != nil {
				want[p.Pod] = p.Node
			}
			if p.Preempted != nil {
				preempted++
			}
		}
		if diff := cmp.Diff(want, bars[r.Policy]); diff != "" {
			t.Errorf("%s: bars (-want,+got):\n%s", r.Policy, diff)
		}
		if marks[r.Policy] != preempted {
			t.Errorf("%s: %d preemption marks, want %d", r.Policy, marks[r.Policy], preempted)
		}
	}
	if marks["upstream"] != 12 || marks["minimal"] != 6 {
		t.Errorf("marks %v, want upstream 12 and minimal 6 (the scenario changed?)", marks)
	}
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	if d := slices.Compact(sorted); len(d) != len(ids) {
		t.Errorf("ids repeat in the page: %d ids, %d distinct", len(ids), len(d))
	}
	// The same runs render to the same bytes.
	var again bytes.Buffer
	if err := WriteCompare(&again, sc, runs); err != nil || again.String() != page {
		t.Errorf("a second render differs (%v)", err)
	}
	if err := WriteCompare(&again, sc, nil); err == nil {
		t.Errorf("no runs: no error")
	}
}

// policyOf is the policy of the tab panel an element is in.
func policyOf(n *html.Node) string {
	for p := n.Parent; p != nil; p = p.Parent {
		if p.Data == "div" && hasClass(p, "tab-panel") {
			return attr(p, "data-policy")
		}
	}
	return ""
}

// text is an element's text.
func text(n *html.Node) string {
	var b strings.Builder
	var f func(*html.Node)
	f = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			f(c)
		}
	}
	f(n)
	return strings.TrimSpace(b.String())
}
