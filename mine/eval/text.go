package eval

import (
	"fmt"
	"io"
	"strings"

	"github.com/fsmine/fsmine/internal/text"
)

// WriteText writes the report as fsmine eval prints it: one row per
// setting (those on the Pareto front of accepted and rejected marked *),
// the recommendation, and each setting's folds. Setting names are the
// caller's (Setting.Name) and written as they are.
func (rep *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%d sessions, %d folds (mine on %d, replay the held-out one)\n", rep.Sessions, rep.Folds, rep.Folds-1)
	if rep.Emptied > 0 {
		fmt.Fprintf(&b, "%s with every record dropped by the label rules, left out\n", text.Count(rep.Emptied, "more session"))
	}
	if rep.ArgRules != nil {
		fmt.Fprintf(&b, "argument rules learned on each fold's training sessions (%.1f a fold): a call that breaks one refuses its session\n", *rep.ArgRules)
	}
	b.WriteString("\n")
	truth := len(rep.Results) > 0 && rep.Results[0].Overall.TruthRejected != nil
	width := 42
	for _, r := range rep.Results {
		width = max(width, len(r.Name))
	}
	fmt.Fprintf(&b, "  %-*s %8s %7s %8s %7s %6s %6s %6s %7s", width, "setting", "accepted", "fitness", "rejected", "remove", "swap", "repeat", "event", "at-real")
	if truth {
		fmt.Fprintf(&b, " %7s %8s", "t-rej", "gen-prec")
	}
	fmt.Fprintf(&b, " %6s %6s %6s %6s %8s\n", "states", "trans", "common", "gen", "build_ms")
	for _, r := range rep.Results {
		mark := " "
		if r.Pareto {
			mark = "*"
		}
		o := r.Overall
		fmt.Fprintf(&b, "%s %-*s %8.3f %7.3f %8.3f %7.3f %6.3f %6.3f %6.3f %7.3f",
			mark, width, r.Name, o.Accepted, o.Fitness, o.Rejected,
			o.RejectedBy[KindRemove], o.RejectedBy[KindSwap], o.RejectedBy[KindRepeat], o.RejectedBy[KindEvent], o.RejectedReal)
		if truth {
			fmt.Fprintf(&b, " %7.3f %8.3f", deref(o.TruthRejected), deref(o.GenPrecision))
		}
		fmt.Fprintf(&b, " %6.1f %6.1f %6.1f %6.1f %8.1f\n", o.States, o.Transitions, o.Common, o.Generalized, o.BuildMS)
	}
	best := rep.Results[rep.Recommended]
	fmt.Fprintf(&b, "\n* on the Pareto front of accepted and rejected (rejected: removal and swap; repeat and event apart)\n")
	fmt.Fprintf(&b, "at-real: of the rejected, the share whose first refused move is none of the model's and a held-out session takes it\n")
	if truth {
		fmt.Fprintf(&b, "t-rej: share of the perturbations the truth rejects (removal and swap) that the model rejects; gen-prec: share of generalised transitions the truth has\n")
		writeGenOutside(&b, rep.Results)
	}
	if best.Overall.Rejected >= rep.MinRejected {
		fmt.Fprintf(&b, "recommended: %s (accepts %.3f of held-out sessions, rejects %.3f of perturbed ones, at least %.2f)\n",
			best.Name, best.Overall.Accepted, best.Overall.Rejected, rep.MinRejected)
	} else {
		fmt.Fprintf(&b, "recommended: %s (no setting rejects %.2f of perturbed sessions; this one rejects the most, %.3f)\n",
			best.Name, rep.MinRejected, best.Overall.Rejected)
	}
	if n := rep.Nested; n != nil {
		fmt.Fprintf(&b, "nested: recommended on the other %d folds, scored on the held-out one: accepts %.3f, rejects %.3f\n",
			rep.Folds-1, n.Overall.Accepted, n.Overall.Rejected)
		for f, name := range n.Chosen {
			fmt.Fprintf(&b, "  fold %d: %s\n", f+1, name)
		}
	}
	fmt.Fprintf(&b, "\nper fold (accepted / rejected):\n")
	for _, r := range rep.Results {
		fmt.Fprintf(&b, "  %-*s", width, r.Name)
		for _, f := range r.Folds {
			fmt.Fprintf(&b, " %.2f/%.2f", f.Accepted, f.Rejected)
		}
		b.WriteByte('\n')
	}
	if _, err := io.WriteString(w, b.String()); err != nil || rep.Outcome == nil {
		return err
	}
	io.WriteString(w, "\n")
	return rep.Outcome.WriteText(w)
}

// maxGenOutside is how many generalised moves outside the truth the text
// lists per setting; the JSON has them all.
const maxGenOutside = 10

// writeGenOutside lists, per setting, the generalised moves the truth does
// not have, with how many of the folds' transitions each stands for.
func writeGenOutside(b *strings.Builder, results []Result) {
	for _, r := range results {
		out := r.Overall.GenOutside
		if len(out) == 0 {
			continue
		}
		fmt.Fprintf(b, "generalised outside the truth, %s:\n", r.Name)
		for _, g := range out[:min(len(out), maxGenOutside)] {
			fmt.Fprintf(b, "  %3d  %s (%s)\n", g.Count, text.Move(g.From, g.Event, g.To), text.Cell(g.Kind))
		}
		if len(out) > maxGenOutside {
			fmt.Fprintf(b, "  and %d more (in --format json)\n", len(out)-maxGenOutside)
		}
	}
}

func deref(x *float64) float64 {
	if x == nil {
		return 0
	}
	return *x
}
