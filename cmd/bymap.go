package cmd

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/internal/text"
)

// bindMapFlag binds --map, which picks the sub-map of a conditioned model
// (build --by) that a command shows.
func bindMapFlag(f *pflag.FlagSet, value *string) {
	f.StringVar(value, "map", "", "of a model built with --by, show the sub-map of `VALUE` (default: the shared map of every session)")
}

// byModeUsage is the help of --by-mode, in build and eval.
const byModeUsage = "`MODE` of a --by value's sub-map: paths (mined from its sessions alone: only the orders they show), moves (the shared map on the stages its sessions visit and the moves between them they made, in any context) or stages (the shared map on the stages its sessions visit: any order the shared map allows)"

// checkByMode returns a usage error for a --by-mode that is no mode.
func checkByMode(mode string) error {
	if !slices.Contains(automaton.ByModes, mode) {
		return usagef("--by-mode %q: want %s", mode, text.Or(automaton.ByModes))
	}
	return nil
}

// pickMap returns the map of m, read from path, that a command shows: the
// sub-map of value when value is not empty, else m itself. For a
// conditioned model shown whole (no --map) it says on w that the shared map
// is shown, so that no reader takes it for the map a session of a value is
// judged by. A value for a model that is not conditioned, or one without a
// sub-map, is a usage error naming the values that have one.
func pickMap(m *automaton.Model, path, value string, w io.Writer) (*automaton.Model, error) {
	if value == "" {
		if m.By != nil {
			fmt.Fprintf(w, "%s is conditioned on %s (%s): showing the shared map of every session; --map VALUE shows a value's\n",
				text.Terminal(path), text.Terminal(m.By.Field), text.Count(len(m.By.Maps), "sub-map"))
		}
		return m, nil
	}
	if m.By == nil {
		return nil, usagef("--map %q: %s is not conditioned (build it with --by FIELD)", value, path)
	}
	if m.By.Map(value) == nil {
		return nil, usagef("--map %q: %s has no sub-map of that value; %s", value, path, mapValuesText(m.By))
	}
	return m.For(value), nil
}

// mapValuesText lists the first values of b that have a sub-map.
func mapValuesText(b *automaton.By) string {
	if len(b.Maps) == 0 {
		return "no value of " + b.Field + " has one (each was seen in too few sessions)"
	}
	const shown = 10
	vs := make([]string, 0, shown)
	for i := 0; i < len(b.Maps) && i < shown; i++ {
		vs = append(vs, fmt.Sprintf("%q", b.Maps[i].Value))
	}
	s := "values with one: " + strings.Join(vs, ", ")
	if len(b.Maps) > shown {
		s += fmt.Sprintf(" and %d more", len(b.Maps)-shown)
	}
	return s
}
