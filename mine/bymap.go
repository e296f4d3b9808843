package mine

import (
	"errors"
	"fmt"
	"sort"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/internal/text"
)

// DefaultByMin is how many sessions a value needs, by default, for a
// sub-map of its own in a conditioned model (BuildBy). A map mined from n
// sessions accepts a new session only when the session's path, or a
// generalisation the log supports, is among theirs; by Good–Turing the
// chance that the next session takes a path none of the n took is
// estimated by the share of paths seen once, which a handful of sessions
// cannot bring low: below about ten sessions a value's own map denies
// legitimate sessions that the shared map, mined from all, lets through.
// eval --by measures the trade on a log (see docs/build.md).
const DefaultByMin = 10

// DefaultByMode is the mode of a conditioned model's sub-maps, by
// default: see docs/build.md for the measurements that chose it.
const DefaultByMode = automaton.ByPaths

// ErrByField is wrapped by the error BuildBy returns when no session
// carries the field.
var ErrByField = errors.New("no session carries the field")

// ByOptions say how BuildBy conditions a model.
type ByOptions struct {
	// Field is the record field whose value picks a session's map, such
	// as attrs.task_id.
	Field string
	// MinSessions is how many sessions a value needs for a sub-map of its
	// own; at least 1 (DefaultByMin is the CLI's default).
	MinSessions int
	// Mode is what a sub-map is: automaton.ByStages, the shared map on the
	// labels the value's sessions visit, automaton.ByMoves, that map on
	// the moves between labels the value's sessions made, or
	// automaton.ByPaths (or ""), a map mined from the value's sessions
	// alone.
	Mode string
}

// BuildBy mines a conditioned model (see automaton.By): the shared map,
// mined from every session of lg with opt as Build mines it, and a sub-map
// for each value of by.Field that at least by.MinSessions sessions carry,
// made as by.Mode says (mined with the same options, or restricted from the
// shared map; see restrictedMap). values holds each session's value (see
// SessionValues), by session id; sessions not in it have none and are
// judged by the shared map. Memory beyond Build's is one map per value with
// a sub-map, at most len(lg.Sessions)/by.MinSessions of them, and a count
// per distinct value.
//
// It returns an error wrapping ErrByField when no session of lg has a
// value, and one naming the session for a value that cannot name a map (see
// automaton.ValidByValue). lg must have been read whole (not streamed).
func BuildBy(lg *Log, opt Options, by ByOptions, values map[string]string) (*automaton.Model, error) {
	field, minSessions := by.Field, by.MinSessions
	if minSessions < 1 {
		return nil, fmt.Errorf("by %s: %d sessions a value: want 1 or more", field, minSessions)
	}
	mode := by.Mode
	switch mode {
	case automaton.ByPaths:
		mode = ""
	case "", automaton.ByStages, automaton.ByMoves:
	default:
		return nil, fmt.Errorf("by %s: mode %q: want %s", field, by.Mode, text.Or(automaton.ByModes))
	}
	if lg.Streamed {
		return nil, fmt.Errorf("by %s: the log was read streaming; read it whole", field)
	}
	of := map[string][]int{} // per value: its sessions, indices into lg.Sessions
	unvalued := 0
	for i := range lg.Sessions {
		id := lg.Sessions[i].ID
		v, ok := values[id]
		if !ok {
			unvalued++
			continue
		}
		if err := automaton.ValidByValue(v); err != nil {
			return nil, fmt.Errorf("by %s: session %q: %w", field, id, err)
		}
		of[v] = append(of[v], i)
	}
	if len(lg.Sessions) > 0 && len(of) == 0 {
		return nil, fmt.Errorf("by %s: %w: none of the %d sessions' records has it", field, ErrByField, len(lg.Sessions))
	}
	m, err := Build(lg, opt)
	if err != nil {
		return nil, err
	}
	b := &automaton.By{Field: field, Mode: mode, MinSessions: minSessions, Values: len(of), Unvalued: unvalued, Shared: unvalued}
	var kept []string
	for v, is := range of {
		if len(is) >= minSessions {
			kept = append(kept, v)
		} else {
			b.Shared += len(is)
		}
	}
	sort.Strings(kept)
	b.Maps = make([]automaton.SubMap, 0, len(kept))
	for _, v := range kept {
		if mode != "" {
			b.Maps = append(b.Maps, restrictedMap(m, lg, of[v], v, mode))
			continue
		}
		sub, err := buildValue(lg, opt, values, v)
		if err != nil {
			return nil, fmt.Errorf("by %s: value %q: %w", field, v, err)
		}
		b.Maps = append(b.Maps, automaton.NewSubMap(v, sub))
	}
	m.By = b
	m.Digest = m.ComputeDigest()
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("by %s: %w", field, err)
	}
	return m, nil
}

// Grouped is a log split by a value per session: each value's model,
// mined from the sessions with that value.
type Grouped struct {
	Values  []string           // sorted
	Models  []*automaton.Model // Models[i] mined from the sessions of Values[i]
	Missing int                // sessions without a value, left out
}

// BuildEach mines one model per distinct value of values (each session's
// value by id, see SessionValues and OutcomeValues) from the sessions that
// carry it, with opt; sessions without a value are left out and counted.
// The values come sorted. lg must have been read whole (not streamed).
func BuildEach(lg *Log, opt Options, values map[string]string) (*Grouped, error) {
	if lg.Streamed {
		return nil, errStreamed
	}
	g := &Grouped{}
	seen := map[string]bool{}
	for i := range lg.Sessions {
		v, ok := values[lg.Sessions[i].ID]
		if !ok {
			g.Missing++
			continue
		}
		if !seen[v] {
			seen[v] = true
			g.Values = append(g.Values, v)
		}
	}
	sort.Strings(g.Values)
	g.Models = make([]*automaton.Model, len(g.Values))
	for i, v := range g.Values {
		m, err := buildValue(lg, opt, values, v)
		if err != nil {
			return nil, fmt.Errorf("value %q: %w", v, err)
		}
		g.Models[i] = m
	}
	return g, nil
}

// OutcomeValues turns sessions' outcomes into values for BuildEach:
// "succeeded" or "failed" by session id.
func OutcomeValues(outs *Outcomes) map[string]string {
	vals := make(map[string]string, len(outs.Succeeded))
	for id, ok := range outs.Succeeded {
		vals[id] = "failed"
		if ok {
			vals[id] = "succeeded"
		}
	}
	return vals
}

// buildValue mines the sessions of lg whose value is v.
func buildValue(lg *Log, opt Options, values map[string]string, v string) (*automaton.Model, error) {
	return Build(lg.Subset(func(s *Session) bool { x, ok := values[s.ID]; return ok && x == v }), opt)
}
