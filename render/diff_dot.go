package render

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/internal/text"
)

// Colours of the diff overlay: GitHub's diff green and red, an orange for
// changed edges and states, grey for what did not change.
const (
	diffAdded     = "#1a7f37"
	diffRemoved   = "#cf222e"
	diffChanged   = "#bc4c00"
	diffUnchanged = "#8c959f"
)

// DiffDOT writes a Graphviz DOT overlay of two models: the union of their
// states and transitions, with what new added in green, what it removed in
// red and dashed, transitions whose share changed significantly (or that
// flipped between rare and common) in orange and annotated "old% -> new%",
// and everything else grey. States whose label changed or whose outflow
// distribution shifted are outlined in orange. A generalised transition
// (taken by no session) is dotted and captioned with its kind. Loop and
// trunk changes are listed in the graph's caption. d must be
// automaton.Compare(old, new, ...).
// Nodes are written in model order (automaton.CompareIDs) and edges by
// (from, event, to), so the output is byte-stable. Ids, labels and events
// are quoted as DOT quotes them (dotLines): a control or bidi character
// shows as its escape and never reaches the file raw.
func DiffDOT(w io.Writer, old, new *automaton.Model, d *automaton.Diff) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }

	p("digraph fsmine_diff {\n")
	p("  rankdir=LR;\n")
	p("  labelloc=b;\n")
	p("  label=%s;\n", dotLines(diffCaption(d)...))
	p("  fontname=\"Helvetica\";\n  fontsize=10;\n")
	p("  node [shape=box, style=rounded, fontname=\"Helvetica\", fontsize=11];\n")
	p("  edge [fontname=\"Helvetica\", fontsize=9];\n")

	// Nodes.
	added := map[string]bool{}
	for _, s := range d.StatesAdded {
		added[s.ID] = true
	}
	removed := map[string]bool{}
	for _, s := range d.StatesRemoved {
		removed[s.ID] = true
	}
	relabeled := map[string]automaton.Relabel{}
	for _, r := range d.StatesRelabeled {
		relabeled[r.ID] = r
	}
	shifted := map[string]automaton.OutflowShift{}
	for _, s := range d.OutflowShifts {
		shifted[s.State] = s
	}
	labels := map[string]string{}
	for _, s := range old.States {
		labels[s.ID] = s.Label
	}
	for _, s := range new.States {
		labels[s.ID] = s.Label
	}
	ids := make([]string, 0, len(labels))
	for id := range labels {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, automaton.CompareIDs)
	for _, id := range ids {
		color, style, penwidth := diffUnchanged, "rounded", 1
		switch {
		case added[id]:
			color, penwidth = diffAdded, 2
		case removed[id]:
			color, style = diffRemoved, "rounded,dashed"
		}
		label := diffNodeLabel(id, labels[id])
		if r, ok := relabeled[id]; ok {
			color, penwidth = diffChanged, 2
			label = []string{r.OldLabel + " -> " + r.NewLabel}
			if r.NewLabel != id {
				label = append(label, id)
			}
		}
		if s, ok := shifted[id]; ok {
			color, penwidth = diffChanged, 2
			label = append(label, fmt.Sprintf("outflow shift p=%.2g", s.P))
		}
		switch id {
		case automaton.StartID:
			// A point, as in DOT: Graphviz built into fsmine draws an empty
			// label as the node's name.
			p("  %s [shape=point, width=0.15, height=0.15, color=%s, fillcolor=%s];\n",
				dotString(id), dotString(color), dotString(color))
		case automaton.EndID:
			p("  %s [shape=doublecircle, label=%s, fontsize=9, color=%s];\n", dotString(id), dotString(automaton.EndID), dotString(color))
		default:
			p("  %s [label=%s, style=%s, color=%s, fontcolor=%s, penwidth=%d];\n",
				dotString(id), dotLines(label...), dotString(style), dotString(color), dotString(diffFont(color)), penwidth)
		}
	}

	// Edges.
	type key struct{ from, event, to string }
	ref := func(from, event, to string) key { return key{from, event, to} }
	addedE := map[key]automaton.TransitionRef{}
	for _, t := range d.TransitionsAdded {
		addedE[ref(t.From, t.Event, t.To)] = t
	}
	removedE := map[key]automaton.TransitionRef{}
	for _, t := range d.TransitionsRemoved {
		removedE[ref(t.From, t.Event, t.To)] = t
	}
	changedE := map[key]automaton.ShareChange{}
	for _, c := range d.ShareChanges {
		changedE[ref(c.From, c.Event, c.To)] = c
	}
	flippedE := map[key]automaton.RareFlip{}
	for _, f := range d.RareFlips {
		flippedE[ref(f.From, f.Event, f.To)] = f
	}
	var union []*automaton.Transition
	seen := map[key]bool{}
	for _, m := range []*automaton.Model{new, old} {
		for i := range m.Transitions {
			t := &m.Transitions[i]
			if k := ref(t.From, t.Event, t.To); !seen[k] {
				seen[k] = true
				union = append(union, t)
			}
		}
	}
	slices.SortFunc(union, automaton.CompareEdges)
	for _, t := range union {
		k := ref(t.From, t.Event, t.To)
		label := diffEventLines(t.Event)
		color, style, penwidth := diffUnchanged, "solid", 1
		switch {
		case diffHas(addedE, k):
			color, penwidth = diffAdded, 2
			label = append(label, text.Percent(addedE[k].Share))
		case diffHas(removedE, k):
			color, style = diffRemoved, "dashed"
			label = append(label, text.Percent(removedE[k].Share))
		default:
			c, changed := changedE[k]
			f, flipped := flippedE[k]
			if changed {
				color, penwidth = diffChanged, 2
				label = append(label, text.Percent(c.OldShare)+" -> "+text.Percent(c.NewShare))
			}
			if flipped {
				color, penwidth = diffChanged, 2
				if !changed {
					label = append(label, text.Percent(f.OldShare)+" -> "+text.Percent(f.NewShare))
				}
				label = append(label, diffRareWord(f.OldRare)+" -> "+diffRareWord(f.NewRare))
			}
		}
		if t.Generalized != "" {
			// No session took it: dotted, whatever its change.
			style = "dotted"
			label = append(label, "generalized ("+t.Generalized+")")
		}
		p("  %s -> %s [label=%s, color=%s, fontcolor=%s, style=%s, penwidth=%d];\n",
			dotString(t.From), dotString(t.To), dotLines(label...), dotString(color), dotString(diffFont(color)),
			dotString(style), penwidth)
	}
	p("}\n")
	return bw.Flush()
}

func diffHas[K comparable, V any](m map[K]V, k K) bool {
	_, ok := m[k]
	return ok
}

// diffCaption names both versions and lists the changes an edge colour
// cannot show, loops and the trunk, one line each.
func diffCaption(d *automaton.Diff) []string {
	lines := []string{fmt.Sprintf("fsmine diff: v%d -> v%d", d.Old.Version, d.New.Version)}
	for _, l := range d.Loops {
		states := "{" + strings.Join(l.States, ", ") + "}"
		switch l.Change {
		case automaton.LoopAppeared:
			lines = append(lines, fmt.Sprintf("loop %s appeared (max %d, p95 %d)", states, l.New.MaxIterations, l.New.P95Iterations))
		case automaton.LoopDisappeared:
			lines = append(lines, fmt.Sprintf("loop %s disappeared (was max %d, p95 %d)", states, l.Old.MaxIterations, l.Old.P95Iterations))
		default:
			member := ""
			if len(l.Joined) > 0 {
				member += " +{" + strings.Join(l.Joined, ", ") + "}"
			}
			if len(l.Left) > 0 {
				member += " -{" + strings.Join(l.Left, ", ") + "}"
			}
			lines = append(lines, fmt.Sprintf("loop %s %s%s: max %d -> %d, p95 %d -> %d", states, l.Change, member,
				l.Old.MaxIterations, l.New.MaxIterations, l.Old.P95Iterations, l.New.P95Iterations))
		}
	}
	if d.Trunk != nil {
		lines = append(lines, "trunk: "+strings.Join(d.Trunk.Old, " > ")+"  ->  "+strings.Join(d.Trunk.New, " > "))
	}
	return lines
}

// diffNodeLabel is a state's lines: its label, then its id when they
// differ.
func diffNodeLabel(id, label string) []string {
	if label == id || label == "" {
		return []string{id}
	}
	return []string{label, id}
}

// diffEventLines is an edge's first line, its event, or none.
func diffEventLines(event string) []string {
	if event == "" {
		return nil
	}
	return []string{event}
}

// diffFont keeps unchanged labels readable: a darker grey than the lines.
func diffFont(color string) string {
	if color == diffUnchanged {
		return "#57606a"
	}
	return color
}

func diffRareWord(rare bool) string {
	if rare {
		return "rare"
	}
	return "common"
}
