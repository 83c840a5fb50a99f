package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"

	"github.com/reprieve/reprieve/internal/adapter/sim"
)

func runStory(t *testing.T) (*sim.Scenario, *sim.Result) {
	t.Helper()
	sc, err := sim.LoadScenario("../../../../examples/simulate/story.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(context.Background(), sc, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return sc, res
}

func render(t *testing.T, sc *sim.Scenario, res *sim.Result) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, sc, res); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func ptr(f float64) *float64 { return &f }

// TestStory checks the page of the bundled example: one lane per node, one
// bar per bound pod in its node's lane, the nominations, the preemption
// marks and the sections the brief asks for.
func TestStory(t *testing.T) {
	sc, res := runStory(t)
	page := render(t, sc, res)
	checkWellFormed(t, page)
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}

	var nodes []string
	for _, n := range res.Nodes {
		if !slices.Contains(nodes, n.Name) {
			nodes = append(nodes, n.Name)
		}
	}
	var lanes []string
	gotBars := map[string]string{} // pod → lane it is drawn in
	gotNoms := map[string][]string{}
	marks := 0
	walk(doc, func(n *html.Node) {
		switch {
		case n.Data == "g" && hasClass(n, "lane") && attr(n, "data-node") != "pending":
			lanes = append(lanes, attr(n, "data-node"))
		case n.Data == "g" && hasClass(n, "pod"):
			gotBars[attr(n, "data-pod")] = attr(laneOf(n), "data-node")
		case n.Data == "g" && hasClass(n, "nom"):
			gotNoms[attr(n, "data-pod")] = append(gotNoms[attr(n, "data-pod")], attr(laneOf(n), "data-node")+" "+strings.TrimPrefix(attr(n, "class"), "nom nom-"))
		case n.Data == "path" && hasClass(n, "preempt"):
			marks++
		}
	})
	if diff := cmp.Diff(nodes, lanes); diff != "" {
		t.Errorf("lanes (-want,+got):\n%s", diff)
	}
	wantBars := map[string]string{}
	wantNoms := map[string][]string{}
	wantMarks := 0
	for _, p := range res.Pods {
		if p.Bound != nil {
			wantBars[p.Pod] = p.Node
		}
		if p.Preempted != nil {
			wantMarks++
		}
		for _, n := range p.Nominations {
			wantNoms[p.Pod] = append(wantNoms[p.Pod], n.Node+" "+n.Outcome)
		}
	}
	if len(wantBars) < 5 || len(wantNoms) == 0 || wantMarks == 0 {
		t.Fatalf("the story changed: %d bound pods, %d nominated, %d preempted", len(wantBars), len(wantNoms), wantMarks)
	}
	if diff := cmp.Diff(wantBars, gotBars); diff != "" {
		t.Errorf("pod bars and their lanes (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(wantNoms, gotNoms); diff != "" {
		t.Errorf("nominations (-want,+got):\n%s", diff)
	}
	if marks != wantMarks {
		t.Errorf("%d preemption marks, want %d", marks, wantMarks)
	}
	for _, want := range []string{
		"<h1>story</h1>",
		`class="timeline zoomable"`, `class="pending zoomable"`, `class="events"`,
		"nominations lost", "victim runtime lost", "Time to schedule",
		"preempted at 0:00:30.001 by finance/urgent-report", // a victim's tooltip
		`<tr class="warn">`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// Self-contained: one inline script (the zoom), nothing fetched, and
	// the only URLs are SVG namespaces.
	checkSelfContained(t, page)
}

// TestDeterministic: the same result renders to the same bytes, and so does
// a second run of the same scenario.
func TestDeterministic(t *testing.T) {
	sc, res := runStory(t)
	first := render(t, sc, res)
	if again := render(t, sc, res); again != first {
		t.Fatalf("two renders of one result differ:\n%s", cmp.Diff(first, again))
	}
	sc2, res2 := runStory(t)
	if other := render(t, sc2, res2); other != first {
		t.Fatalf("renders of two runs differ:\n%s", cmp.Diff(first, other))
	}
	big := synthetic(30, 400)
	if a, b := render(t, nil, big), render(t, nil, big); a != b {
		t.Fatalf("two renders of a synthetic result differ")
	}
}

// TestEscaping: names and messages from the scenario are text, never markup.
func TestEscaping(t *testing.T) {
	const evil = `<script>alert("x")</script>`
	sc := &sim.Scenario{Name: "a<b>" + evil, Description: evil + ` & "quotes"`}
	res := &sim.Result{
		Summary:    sim.Summary{Scenario: sc.Name, TimeToSchedule: []sim.PriorityWaits{{Priority: 5, Scheduled: 1}}},
		EndSeconds: 60,
		Nodes:      []*sim.NodeHistory{{Name: `node"` + evil}},
		Pods: []sim.PodHistory{{
			Pod: "ns/" + evil, Priority: 5, Created: 0, Bound: ptr(1), Node: `node"` + evil, Preempted: ptr(10), Terminating: ptr(10), Gone: ptr(20),
			Nominations: []sim.Nomination{{Node: `node"` + evil, From: 0, To: ptr(1), Outcome: "bound"}},
		}},
		Events:  []sim.Event{{At: "0:00:10.000", Type: "Warning", Reason: evil, Namespace: evil, Object: "pod/" + evil, Related: "pod/" + evil, Message: evil + " 'single' & \"double\""}},
		Pending: []sim.Sample{{At: 0, Pending: 1}, {At: 1, Pending: 0}},
	}
	page := render(t, sc, res)
	if n := strings.Count(strings.ToLower(page), "<script"); n != 1 {
		t.Fatalf("%d <script> elements in the page, want the zoom's only", n)
	}
	if strings.Contains(page, "<b>") {
		t.Errorf("unescaped <b> from the scenario name")
	}
	if !strings.Contains(page, "&lt;script&gt;") {
		t.Errorf("the escaped name is missing")
	}
	checkWellFormed(t, page)
	// The markup survives parsing: the lane's attribute holds the whole name.
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var lanes []string
	walk(doc, func(n *html.Node) {
		if n.Data == "g" && hasClass(n, "lane") {
			lanes = append(lanes, attr(n, "data-node"))
		}
	})
	if diff := cmp.Diff([]string{`node"` + evil, "pending"}, lanes); diff != "" {
		t.Errorf("lanes (-want,+got):\n%s", diff)
	}
}

// TestLarge: beyond 200 nodes the timeline shows the 200 most preempted
// nodes first and says so; rows per lane are capped; the pending chart is
// still drawn.
func TestLarge(t *testing.T) {
	res := synthetic(250, 6000)
	// The last node is the most preempted: it comes first.
	last := res.Nodes[len(res.Nodes)-1].Name
	for i := range 40 {
		res.Pods = append(res.Pods, sim.PodHistory{Pod: fmt.Sprintf("x/victim-%d", i), Created: 1, Bound: ptr(2), Node: last, Preempted: ptr(100), Terminating: ptr(100), Gone: ptr(130)})
	}
	page := render(t, nil, res)
	checkWellFormed(t, page)
	for _, want := range []string{"The timeline shows the 200 most preempted of 250 nodes", `class="pending zoomable"`, `class="step"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if got := strings.Count(page, `<g class="lane" data-node="node-`); got != maxLanes {
		t.Errorf("%d node lanes, want %d", got, maxLanes)
	}
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var lanes []string
	walk(doc, func(n *html.Node) {
		if n.Data == "g" && hasClass(n, "lane") {
			lanes = append(lanes, attr(n, "data-node"))
		}
	})
	if len(lanes) == 0 || lanes[0] != last {
		t.Errorf("first lane %v, want the most preempted node %s", lanes[:min(3, len(lanes))], last)
	}
	if len(page) > 16<<20 {
		t.Errorf("page is %d MiB", len(page)>>20)
	}
}

// TestPack checks the greedy row assignment.
func TestPack(t *testing.T) {
	type span struct{ x0, x1 float64 }
	tests := map[string]struct {
		spans    []span
		after    map[int]int // item → the item it continues
		wantRows []int
	}{
		"overlapping bars take new rows": {
			spans:    []span{{0, 10}, {5, 15}, {8, 20}},
			wantRows: []int{0, 1, 2},
		},
		"touching bars share a row": {
			spans:    []span{{0, 10}, {10, 20}, {0, 30}},
			wantRows: []int{0, 0, 1},
		},
		"a bar continues its nomination's row": {
			spans:    []span{{0, 10}, {0, 5}, {5, 8}, {10, 40}},
			after:    map[int]int{3: 2},
			wantRows: []int{0, 1, 1, 1},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			l := &lane{}
			items := make([]*item, len(tc.spans))
			for i, s := range tc.spans {
				items[i] = &item{x0: s.x0, x1: s.x1, row: -1}
			}
			for i, a := range tc.after {
				items[i].after = items[a]
			}
			l.items = slices.Clone(items)
			if hidden := l.pack(); hidden != 0 {
				t.Fatalf("%d hidden", hidden)
			}
			var got []int
			for _, it := range items {
				got = append(got, it.row)
			}
			if diff := cmp.Diff(tc.wantRows, got); diff != "" {
				t.Errorf("rows (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestFormat(t *testing.T) {
	for in, want := range map[float64]string{0: "0s", 1.5: "1.5s", 0.25: "250ms", 90: "1m30s", 600: "10m", 3600: "1h", 3900: "1h5m", 3661: "1h1m1s",
		-57600: "0s", 1e12: "2562047h47m16.854775807s"} { // never negative, never wrapped round
		if got := fmtDur(in); got != want {
			t.Errorf("fmtDur(%v) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[float64]string{0: "0:00:00", 30: "0:00:30", 3725.5: "1:02:05.500"} {
		if got := fmtClock(in); got != want {
			t.Errorf("fmtClock(%v) = %q, want %q", in, got, want)
		}
	}
	if got, want := timeTicks(0, 600, 12), []float64{0, 60, 120, 180, 240, 300, 360, 420, 480, 540, 600}; !slices.Equal(got, want) {
		t.Errorf("timeTicks(0, 600) = %v, want %v", got, want)
	}
	if got := timeTicks(0, 0.3, 12); len(got) < 3 || len(got) > 13 {
		t.Errorf("timeTicks(0, 0.3) = %v", got)
	}
	if got, want := timeTicks(25, 95, 7), []float64{30, 40, 50, 60, 70, 80, 90}; !slices.Equal(got, want) {
		t.Errorf("timeTicks(25, 95) = %v, want %v", got, want)
	}
	ticks, top := countTicks(4, 5)
	if !slices.Equal(ticks, []int{0, 1, 2, 3, 4}) || top != 4 {
		t.Errorf("countTicks(4) = %v, %d", ticks, top)
	}
	ticks, top = countTicks(1234, 5)
	if top != 1500 || len(ticks) != 4 {
		t.Errorf("countTicks(1234) = %v, %d", ticks, top)
	}
}

// synthetic builds a result with nodes × pods: pods cycle over nodes and
// priorities, some preempted, some nominated, some never bound.
func synthetic(nodes, pods int) *sim.Result {
	res := &sim.Result{EndSeconds: 3600, Summary: sim.Summary{Scenario: "synthetic", Duration: "1h0m0s"}}
	for i := range nodes {
		n := &sim.NodeHistory{Name: fmt.Sprintf("node-%03d", i)}
		if i%17 == 5 {
			n.Added = 600
		}
		if i%23 == 7 {
			n.Removed = ptr(3000)
		}
		res.Nodes = append(res.Nodes, n)
	}
	pending := 0
	for i := range pods {
		created := float64(i%120) * 30
		p := sim.PodHistory{Pod: fmt.Sprintf("ns-%d/pod-%05d", i%7, i), Priority: int32(i%4) * 100, Created: created}
		node := res.Nodes[i%nodes].Name
		switch {
		case i%11 == 3: // never bound
			pending++
			res.Pending = append(res.Pending, sim.Sample{At: created, Pending: pending})
		default:
			b := created + float64(i%5)*20
			p.Bound, p.Node = ptr(b), node
			if i%9 == 0 {
				p.Nominations = []sim.Nomination{{Node: node, From: created, To: ptr(b), Outcome: "bound"}}
			}
			if i%13 == 2 {
				p.Preempted, p.Terminating, p.Gone = ptr(b+300), ptr(b+300), ptr(b+330)
			} else if i%3 == 0 {
				p.Finished = ptr(b + 900)
			}
		}
		res.Pods = append(res.Pods, p)
	}
	slices.SortStableFunc(res.Pending, func(a, b sim.Sample) int { return int(a.At - b.At) })
	for i := range res.Pending {
		res.Pending[i].Pending = i + 1
	}
	return res
}

// checkWellFormed checks that every non-void element is closed in order,
// as XHTML would require, and that the page parses.
func checkWellFormed(t *testing.T, page string) {
	t.Helper()
	void := map[string]bool{"meta": true, "link": true, "br": true, "hr": true, "img": true, "input": true, "col": true, "wbr": true}
	z := html.NewTokenizer(strings.NewReader(page))
	var stack []string
	for {
		switch z.Next() {
		case html.ErrorToken:
			if !errors.Is(z.Err(), io.EOF) {
				t.Fatalf("tokenizing: %v", z.Err())
			}
			if len(stack) > 0 {
				t.Fatalf("unclosed elements at the end: %v", stack)
			}
			if _, err := html.Parse(strings.NewReader(page)); err != nil {
				t.Fatalf("parsing: %v", err)
			}
			return
		case html.StartTagToken:
			name, _ := z.TagName()
			if !void[string(name)] {
				stack = append(stack, string(name))
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			if len(stack) == 0 || stack[len(stack)-1] != string(name) {
				t.Fatalf("</%s> closes %v", name, stack)
			}
			stack = stack[:len(stack)-1]
		}
	}
}

// laneOf is the lane (g.lane) an element is drawn in.
func laneOf(n *html.Node) *html.Node {
	for p := n.Parent; p != nil; p = p.Parent {
		if p.Data == "g" && hasClass(p, "lane") {
			return p
		}
	}
	return nil
}

// checkSelfContained: the page's only script is the inline zoom script,
// nothing refers to another resource, and the only URLs are SVG
// namespaces.
func checkSelfContained(t *testing.T, page string) {
	t.Helper()
	want := 1
	if strings.Contains(page, tabScript) {
		want = 2 // the comparison's tabs
	}
	if n := strings.Count(page, "<script"); n != want || !strings.Contains(page, "<script>"+zoomScript+"</script>") {
		t.Errorf("%d scripts, want the inline zoom script (and the comparison's tab script) only", n)
	}
	for _, bad := range []string{"src=", "href=", "fetch(", "XMLHttpRequest", "@import", "url(http"} {
		if strings.Contains(page, bad) {
			t.Errorf("page has %q", bad)
		}
	}
	if urls, ns := strings.Count(page, "://"), strings.Count(page, `xmlns="http://www.w3.org/2000/svg"`)+strings.Count(zoomScript, "://"); urls != ns {
		t.Errorf("page names %d URLs besides the SVG namespace", urls-ns)
	}
}

func walk(n *html.Node, f func(*html.Node)) {
	if n.Type == html.ElementNode {
		f(n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, f)
	}
}

func attr(n *html.Node, key string) string {
	if n == nil {
		return ""
	}
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasClass(n *html.Node, class string) bool {
	return slices.Contains(strings.Fields(attr(n, "class")), class)
}

// TestActivityWindow: the charts' window runs from the first event to the
// last, padded and rounded, not over the run's whole duration.
func TestActivityWindow(t *testing.T) {
	events := func(secs ...float64) *sim.Result {
		r := &sim.Result{}
		for _, s := range secs {
			r.Events = append(r.Events, sim.Event{Time: time.Duration(s * float64(time.Second))})
		}
		return r
	}
	tests := map[string]struct {
		end  float64
		res  []*sim.Result
		want window
	}{
		"no events: the whole run":          {end: 600, res: []*sim.Result{events()}, want: window{0, 600}},
		"busy over most of the run":         {end: 3600, res: []*sim.Result{events(0, 3000)}, want: window{0, 3600}},
		"the first seconds of an hour":      {end: 3600, res: []*sim.Result{events(0, 2, 10)}, want: window{0, 10.5}},
		"half the run":                      {end: 600, res: []*sim.Result{events(0, 30, 300)}, want: window{0, 315}},
		"a burst in the middle":             {end: 3600, res: []*sim.Result{events(600, 605, 610)}, want: window{599.5, 610.5}},
		"several runs: the union":           {end: 3600, res: []*sim.Result{events(0, 5), events(1, 10)}, want: window{0, 10.5}},
		"one instant: a sliver, not a zero": {end: 3600, res: []*sim.Result{events(0, 0)}, want: window{0, 3.8}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := activityWindow(tc.end, tc.res...)
			if math.Abs(got.from-tc.want.from) > 1e-9 || math.Abs(got.to-tc.want.to) > 1e-9 {
				t.Errorf("window %+v, want %+v", got, tc.want)
			}
		})
	}
	// The story's page: its activity ends at 5m of 10m, and the axis too.
	sc, res := runStory(t)
	page := render(t, sc, res)
	for _, want := range []string{`data-from="0" data-to="315" data-end="600"`, "The charts show 0:00:00 to 0:05:15, from the first event to the last, of the 10m run"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// TestBudgetNodesFirst: a crowd of pending pods listed before the bound ones
// does not use up the bars' budget: the nodes' bars are all drawn.
func TestBudgetNodesFirst(t *testing.T) {
	res := &sim.Result{EndSeconds: 600, Nodes: []*sim.NodeHistory{{Name: "n1"}}}
	for i := range maxBars + 500 {
		res.Pods = append(res.Pods, sim.PodHistory{Pod: fmt.Sprintf("ns/waiting-%05d", i), Created: float64(i%60) + 1})
	}
	for i := range 10 {
		res.Pods = append(res.Pods, sim.PodHistory{Pod: fmt.Sprintf("ns/bound-%d", i), Created: 1, Bound: ptr(2), Node: "n1"})
	}
	res.Events = []sim.Event{{Time: 0}, {Time: 300 * time.Second}}
	page := render(t, nil, res)
	if got := strings.Count(page, `<g class="pod" data-pod="ns/bound-`); got != 10 {
		t.Errorf("%d of the node's 10 bars drawn", got)
	}
}

// TestEventSeries: the event log shows a FailedScheduling event repeated
// alike as one row with its count and last time, and the charts' window
// reaches the last time.
func TestEventSeries(t *testing.T) {
	sc, res := runStory(t)
	if page := render(t, sc, res); !strings.Contains(page, "×2, last 0:02:30.002") {
		t.Errorf("the story's page does not show the batch pods' FailedScheduling series (×2, last 0:02:30.002)")
	}
	res = &sim.Result{EndSeconds: 3600, Events: []sim.Event{{Time: 0, Reason: "FailedScheduling",
		Series: &sim.EventSeries{Count: 100, Last: 3000 * time.Second, LastObservedAt: "0:50:00.000"}}}}
	if got := activityWindow(3600, res); got != (window{0, 3600}) {
		t.Errorf("window %+v, want the whole run: the series lasts until 3000s", got)
	}
}

// TestPreemptorNamespace: the timeline's tooltips name a victim's preemptor
// in the preemptor's namespace, and the event log says which namespace the
// related pod is in when it is not the event's.
func TestPreemptorNamespace(t *testing.T) {
	sc, res := runStory(t)
	page := render(t, sc, res)
	if n := strings.Count(page, "by finance/urgent-report"); n != 2 {
		t.Errorf("the page names finance/urgent-report as the preemptor %d times, want 2 (once per victim's tooltip)", n)
	}
	if n := strings.Count(page, "↳ pod/urgent-report in finance"); n != 2 {
		t.Errorf("the event log names the preemptor of the victims' Preempted events in finance %d times, want 2", n)
	}
}
