package whatif

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/reprieve/reprieve/internal/cli/output"
	"github.com/reprieve/reprieve/internal/whatif"
)

// Kinds returns the -o values whatif accepts.
func Kinds() []string { return output.Shared(output.Table, output.Wide) }

// Print writes the decision in the given format. explain adds, for people,
// a line for every node; wide adds the candidates' table.
func Print(w io.Writer, d *whatif.Decision, format output.Format, explain bool) error {
	switch {
	case format.Generic():
		return format.Print(w, d)
	case format.Kind == output.Name:
		return output.PrintNames(w, names(d))
	}
	if err := printTable(w, d, explain); err != nil {
		return err
	}
	if format.Kind == output.Wide {
		return printCandidates(w, d)
	}
	return nil
}

// names are the -o name lines of a decision: node/NAME for the node the
// pod lands on, or the node preemption nominates, then "-n NAMESPACE
// pod/NAME" for each victim. kubectl's own -o name leaves the namespace
// out, which loses it for victims of several namespaces; each line here is
// kubectl's arguments for one object, so that `xargs -L1 kubectl get`
// reads them.
func names(d *whatif.Decision) []string {
	var out []string
	switch {
	case d.Placement != nil:
		out = append(out, "node/"+d.Placement.Node)
	case d.NominatedNode != "":
		out = append(out, "node/"+d.NominatedNode)
	}
	for _, v := range d.Victims {
		out = append(out, podName(v.Pod))
	}
	return out
}

// podName is the -o name line of the pod "namespace/name".
func podName(key string) string {
	ns, name, _ := strings.Cut(key, "/")
	return "-n " + ns + " pod/" + name
}

// printCandidates writes -o wide's table of every candidate node of
// preemption with the criteria kube-scheduler compares, the chosen first.
func printCandidates(w io.Writer, d *whatif.Decision) error {
	if len(d.Candidates) == 0 {
		return nil
	}
	cands := sortedCandidates(d)
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CANDIDATE\tCHOSEN\tVICTIMS\tPDB VIOLATIONS\tHIGHEST PRIORITY\tPRIORITY SUM\tEARLIEST START")
	for _, c := range cands {
		chosen := "-"
		if c.Node == d.NominatedNode {
			chosen = "yes"
		}
		s := c.Score
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%s\n", c.Node, chosen, s.NumVictims, s.NumPDBViolations, s.HighestPriority, s.SumPriorities, s.EarliestStart.UTC().Format(time.RFC3339))
	}
	return tw.Flush()
}

// PrintMany writes the decisions for several pods: a table of one row per
// pod (wide adds the placement's score and runner-up, the PDB violations
// and the number of candidates), every decision's names, or a JSON, YAML
// or templated list of the decisions.
func PrintMany(w io.Writer, ds []*whatif.Decision, format output.Format) error {
	switch {
	case format.Generic():
		return format.Print(w, ds)
	case format.Kind == output.Name:
		for _, d := range ds {
			if err := output.PrintNames(w, names(d)); err != nil {
				return err
			}
		}
		return nil
	}
	wide := format.Kind == output.Wide
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if wide {
		fmt.Fprintln(tw, "POD\tPRIORITY\tNODE\tVICTIMS\tSCORE\tRUNNER-UP\tPDB VIOLATIONS\tCANDIDATES\tDECISION")
	} else {
		fmt.Fprintln(tw, "POD\tPRIORITY\tNODE\tVICTIMS\tDECISION")
	}
	for _, d := range ds {
		node, victims := "-", "-"
		score, runnerUp := "-", "-"
		switch {
		case d.Placement != nil:
			node = d.Placement.Node
			if d.Placement.ScoredNodes > 0 {
				score = fmt.Sprint(d.Placement.Score)
			}
			if d.Placement.RunnerUp != "" {
				runnerUp = fmt.Sprintf("%s (%d)", d.Placement.RunnerUp, d.Placement.RunnerUpScore)
			}
		case d.NominatedNode != "":
			node, victims = d.NominatedNode, fmt.Sprint(len(d.Victims))
		}
		if wide {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%d\t%d\t%s\n", d.Pod, d.Priority, node, victims, score, runnerUp, d.NumPDBViolations, len(d.Candidates), d.Summary)
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", d.Pod, d.Priority, node, victims, d.Summary)
	}
	return tw.Flush()
}

func printTable(w io.Writer, d *whatif.Decision, explain bool) error {
	fmt.Fprintf(w, "POD       %s (priority %d)\n", d.Pod, d.Priority)
	fmt.Fprintf(w, "DECISION  %s\n", d.Summary)
	if d.DecidedBy != "" && d.DecidedBy != "tie" {
		fmt.Fprintf(w, "WHY       %s won on %s among %d candidates\n", d.NominatedNode, d.DecidedBy, len(d.Candidates))
	} else if d.DecidedBy == "tie" {
		fmt.Fprintf(w, "WHY       %s tied with %s on every criterion; picked at random (seeded), as kube-scheduler does\n", d.NominatedNode, someOf(others(d.TiedNodes, d.NominatedNode), maxTiedNamed))
	}
	if p := d.Placement; p != nil {
		switch {
		case p.ScoredNodes == 0:
			fmt.Fprintf(w, "PLACE     %s (the only feasible node examined; not scored)\n", p.Node)
		default:
			fmt.Fprintf(w, "PLACE     %s (score %d; runner-up %s, %d; %d of %d feasible nodes scored)\n", p.Node, p.Score, p.RunnerUp, p.RunnerUpScore, p.ScoredNodes, len(d.FeasibleNodes))
		}
		if p.Error != "" {
			fmt.Fprintf(w, "WARNING   kube-scheduler would fail the cycle: %s\n", p.Error)
		}
	}
	if u := d.Upstream; u != nil {
		fmt.Fprintf(w, "POLICY    %s\n", d.Policy)
		if u.NominatedNode == "" {
			fmt.Fprintln(w, "UPSTREAM  kube-scheduler would not preempt")
		} else {
			fmt.Fprintf(w, "UPSTREAM  kube-scheduler would evict %s on %s (%d budget(s) broken)\n", strings.Join(u.Victims, ", "), u.NominatedNode, u.NumPDBViolations)
		}
	}
	for _, warn := range d.Warnings {
		fmt.Fprintf(w, "WARNING   %s\n", warn)
	}
	if len(d.Victims) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		groups := len(d.VictimGroups) > 0
		if groups {
			fmt.Fprintln(tw, "VICTIM\tNODE\tPRIORITY\tSTARTED\tBREAKS PDB\tEVICTED WITH")
		} else {
			fmt.Fprintln(tw, "VICTIM\tNODE\tPRIORITY\tSTARTED\tBREAKS PDB")
		}
		for _, v := range d.Victims {
			started := "-"
			if v.StartTime != nil {
				started = v.StartTime.UTC().Format(time.RFC3339)
			}
			pdbs := "-"
			if len(v.PDBs) > 0 {
				pdbs = strings.Join(v.PDBs, ",")
			}
			if !groups {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", v.Pod, v.Node, v.Priority, started, pdbs)
				continue
			}
			with := "-"
			if v.Group != nil {
				with = v.Group.String()
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", v.Pod, v.Node, v.Priority, started, pdbs, with)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(d.VictimGroups) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "GROUP EVICTED WHOLE\tPRIORITY\tPODS\tNODES")
		for _, g := range d.VictimGroups {
			fmt.Fprintf(tw, "%s %s\t%d\t%d\t%s\n", g.Kind, g.Name, g.Priority, len(g.Members), strings.Join(g.Nodes, ","))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintf(w, "WORKLOADS %d disrupted (pod groups evicted whole, and pods of pod groups evicted on their own)\n", d.DisruptedWorkloads)
	}
	if d.Message != "" && !d.Fits {
		fmt.Fprintf(w, "\nEVENT     FailedScheduling: %s\n", d.Message)
	}
	if !explain {
		return nil
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tRESULT\tDETAIL")
	for _, row := range explainRows(d) {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", row[0], row[1], row[2])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	printHolds(w, d)
	if err := whatif.WritePlacements(w, d); err != nil {
		return err
	}
	if d.DryRun != nil {
		fmt.Fprintf(w, "\nDry run: %d of %d potential nodes visited from offset %d, looking for %d candidates.\n",
			d.DryRun.VisitedNodes, d.DryRun.PotentialNodes, d.DryRun.Offset, d.DryRun.WantedCandidates)
		if err := whatif.WriteSearch(w, d); err != nil {
			return err
		}
		fmt.Fprintln(w, "Score: fewest PDB violations, then lowest highest victim priority, lowest priority sum, fewest victims, latest start.")
	}
	return nil
}

// maxTiedNamed is how many tied nodes the table names (-o json lists
// them all).
const maxTiedNamed = 5

// someOf joins names, naming at most max of them and counting the rest.
func someOf(names []string, max int) string {
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d other nodes", strings.Join(names[:max], ", "), len(names)-max)
}

func others(all []string, exclude string) []string {
	var out []string
	for _, s := range all {
		if s != exclude {
			out = append(out, s)
		}
	}
	return out
}

// explainRows returns one row per node: feasible, candidate (chosen first)
// or rejected, sorted by name within each group.
func explainRows(d *whatif.Decision) [][3]string {
	var rows [][3]string
	for _, n := range d.FeasibleNodes {
		rows = append(rows, [3]string{n, "fits", ""})
	}
	for _, c := range sortedCandidates(d) {
		result := "candidate"
		if c.Node == d.NominatedNode {
			result = "CHOSEN"
		}
		s := c.Score
		whole := ""
		if len(c.VictimGroups) > 0 {
			whole = " (whole: " + strings.Join(c.VictimGroups, ", ") + ")"
		}
		rows = append(rows, [3]string{c.Node, result, fmt.Sprintf("evict %s%s  [pdb=%d highest=%d sum=%d victims=%d earliest=%s]",
			strings.Join(c.Victims, ", "), whole, s.NumPDBViolations, s.HighestPriority, s.SumPriorities, s.NumVictims, s.EarliestStart.UTC().Format(time.RFC3339))})
	}
	statuses := d.NodeStatuses.Map()
	names := make([]string, 0, len(statuses))
	for n := range statuses {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		st := statuses[n]
		detail := statusText(st.Code, st.Plugin, st.Reasons)
		if p := st.Preemption; p != nil {
			detail += "; dry run: " + statusText(p.Code, p.Plugin, p.Reasons)
		} else if st.Code == "Unschedulable" && d.DryRun != nil {
			detail += "; not dry-run (enough candidates found first)"
		}
		rows = append(rows, [3]string{n, "rejected", detail})
	}
	return rows
}

// sortedCandidates returns the candidates, the nominated node first, then
// by name.
func sortedCandidates(d *whatif.Decision) []whatif.Candidate {
	cands := slices.Clone(d.Candidates)
	slices.SortFunc(cands, func(a, b whatif.Candidate) int {
		switch {
		case a.Node == d.NominatedNode:
			return -1
		case b.Node == d.NominatedNode:
			return 1
		}
		return strings.Compare(a.Node, b.Node)
	})
	return cands
}

func statusText(code, plugin string, reasons []string) string {
	short := map[string]string{"Unschedulable": "Unschedulable", "UnschedulableAndUnresolvable": "Unresolvable"}[code]
	if short == "" {
		short = code
	}
	if plugin != "" {
		return fmt.Sprintf("%s by %s: %s", short, plugin, strings.Join(reasons, ", "))
	}
	return fmt.Sprintf("%s: %s", short, strings.Join(reasons, ", "))
}
