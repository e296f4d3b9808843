package automaton

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// SharedMap is the name, in a Decision or a report, of the map that
// answered for a session of a conditioned model whose value has no sub-map
// of its own (seen too rarely when the model was mined, never seen, or
// absent): the model's own map, mined from every session. It is not a
// value: a sub-map's name is "by:" and its value (see MapName).
const SharedMap = "shared"

// MapName returns the name of the map that answers for value in a
// conditioned model: "by:" and the value when it has a sub-map, SharedMap
// when not. It is "" for a model that is not conditioned.
func (m *Model) MapName(value string) string {
	if m.By == nil {
		return ""
	}
	if m.By.Map(value) != nil {
		return "by:" + value
	}
	return SharedMap
}

// By makes a model conditioned (fsmine build --by): the model's own states,
// transitions, loops and constraints are the shared map, mined from every
// session, and Maps hold a sub-map for each value of the record field Field
// that at least MinSessions sessions carried: mined from those sessions
// alone with the same options (Mode ByPaths), or the shared map restricted
// to what those sessions did (ByStages, ByMoves). A session is judged by the sub-map of its
// value (the value of Field on the first of its records that carries it)
// and by the shared map when its value has no sub-map: a value seen in
// fewer than MinSessions sessions, never seen, or no value at all. The
// sub-maps are part of the digest.
type By struct {
	// Field is the record field, a dotted path such as attrs.task_id.
	Field string `json:"field"`
	// Mode says what the sub-maps are: ByPaths (written as "", the mode
	// of models that predate the field), ByMoves or ByStages.
	// Provenance: a sub-map is digested as it stands, whichever way it
	// was made.
	Mode string `json:"mode,omitempty"`
	// MinSessions is how many sessions a value needs for a sub-map of its
	// own; at least 1.
	MinSessions int `json:"min_sessions"`
	// Values counts the distinct values the log showed, Shared the
	// sessions judged by the shared map (their value had too few sessions,
	// or they had none) and Unvalued the sessions without a value.
	// Provenance: not part of the digest.
	Values   int `json:"values"`
	Shared   int `json:"shared_sessions"`
	Unvalued int `json:"unvalued_sessions"`
	// Maps are the sub-maps, sorted by value, values unique.
	Maps []SubMap `json:"maps"`

	subs map[string]*Model // by value: the sub-maps as models (see Model.For)
}

// The modes of a conditioned model (By.Mode).
const (
	// ByPaths: a value's sub-map is mined from the value's sessions alone,
	// so it accepts the orders of stages they showed (and what the
	// generalisation their own log supports adds).
	ByPaths = "paths"
	// ByStages: a value's sub-map is the shared map restricted to the
	// labels the value's sessions visited: the value decides which stages
	// may happen, the shared map, mined from every session, how they
	// connect.
	ByStages = "stages"
	// ByMoves: a value's sub-map is the shared map restricted to the
	// labels the value's sessions visited and to the moves between them
	// (one label after another, whatever the event) that they made, in
	// whatever context the shared map makes them: between ByPaths, which
	// knows the contexts too, and ByStages, which knows no order.
	ByMoves = "moves"
)

// ByModes lists the modes, ByPaths (the mode of a By without one) first,
// then from the narrowest sub-maps to the widest.
var ByModes = []string{ByPaths, ByMoves, ByStages}

// SubMap is the map of one value of a conditioned model (see By): what a
// model's behaviour is made of, mined from the value's sessions or, in a
// restricted mode, the shared map's part that they use.
type SubMap struct {
	Value       string       `json:"value"`
	Sessions    int          `json:"sessions"`
	Events      int          `json:"events"`
	Initial     string       `json:"initial"`
	States      []State      `json:"states"`
	Transitions []Transition `json:"transitions"`
	Loops       []Loop       `json:"loops"`
	Trunk       []string     `json:"trunk"`
	Variants    int          `json:"variants"`
	Constraints []Constraint `json:"constraints,omitempty"`
}

// NewSubMap returns the sub-map of value made of model sub's behaviour, as
// mined from the value's sessions.
func NewSubMap(value string, sub *Model) SubMap {
	return SubMap{
		Value: value, Sessions: sub.Source.Sessions, Events: sub.Source.Events, Initial: sub.Initial,
		States: sub.States, Transitions: sub.Transitions, Loops: sub.Loops,
		Trunk: sub.Trunk, Variants: sub.Variants, Constraints: sub.Constraints,
	}
}

// Map returns the sub-map of value, or nil when it has none.
func (b *By) Map(value string) *SubMap {
	i := sort.Search(len(b.Maps), func(i int) bool { return b.Maps[i].Value >= value })
	if i < len(b.Maps) && b.Maps[i].Value == value {
		return &b.Maps[i]
	}
	return nil
}

// For returns the model that judges a session whose value of By.Field is
// value: the sub-map of value as a model of its own (the parent's schema,
// digest, params and source, its sessions the sub-map's, and no By), or m
// itself, the shared map, when m is not conditioned or value has no
// sub-map. The sub-models are made once, by Validate or Reindex; they must
// not be modified.
func (m *Model) For(value string) *Model {
	if m.By == nil {
		return m
	}
	if m.By.subs == nil {
		m.By.models(m)
	}
	if s, ok := m.By.subs[value]; ok {
		return s
	}
	return m
}

// made reports whether b's sub-models are made, and are fresh, the ones
// models would make of the model as it stands (by value), down to the
// addresses of the transitions their indexes point to.
func (b *By) made(fresh map[string]*Model) bool {
	if b.subs == nil || len(b.subs) != len(b.Maps) {
		return false
	}
	for i := range b.Maps {
		old, fresh := b.subs[b.Maps[i].Value], fresh[b.Maps[i].Value]
		if fresh == nil || old == nil || old.index == nil || !old.index.current(fresh.index) {
			return false
		}
		o, f := *old, *fresh
		o.index, f.index = nil, nil
		if !reflect.DeepEqual(o, f) {
			return false
		}
	}
	return true
}

// models makes the sub-models of b (see For).
func (b *By) models(m *Model) {
	b.subs = make(map[string]*Model, len(b.Maps))
	for i := range b.Maps {
		b.subs[b.Maps[i].Value] = b.Maps[i].model(m)
	}
}

func (s *SubMap) model(parent *Model) *Model {
	sub := &Model{
		Schema: parent.Schema, Version: parent.Version, Parent: parent.Parent, Digest: parent.Digest,
		Created: parent.Created, Generator: parent.Generator, Source: parent.Source, Params: parent.Params,
		Initial: s.Initial, States: s.States, Transitions: s.Transitions, Loops: s.Loops,
		Trunk: s.Trunk, Variants: s.Variants, Constraints: s.Constraints,
		// Argument rules are about tools, whichever map a session is on.
		Args: parent.Args, sub: true,
	}
	sub.Source.Sessions, sub.Source.Events = s.Sessions, s.Events
	sub.Source.Outcome = nil
	sub.Reindex()
	return sub
}

// ValidByValue reports why value cannot name a sub-map: it is empty, not
// valid UTF-8, or holds a control character (which would forge lines of
// the text reports that name maps). nil when it can.
func ValidByValue(value string) error {
	if value == "" {
		return fmt.Errorf("an empty value")
	}
	for i, r := range value {
		if r == unicode.ReplacementChar {
			return fmt.Errorf("value %s is not valid UTF-8 at byte %d", strconv.Quote(value), i)
		}
		if unicode.IsControl(r) {
			return fmt.Errorf("value %s has a control character at byte %d", strconv.Quote(value), i)
		}
	}
	return nil
}

// validateBy checks a conditioned model's By: a field, MinSessions at
// least 1, values valid, unique and sorted, each sub-map with at least
// MinSessions sessions and valid as a model of its own. The sub-models it
// made so go to m.checkedSubs.
func (m *Model) validateBy() error {
	b := m.By
	if b == nil {
		return nil
	}
	if b.Field == "" {
		return fmt.Errorf("invalid model: by has no field")
	}
	if err := ValidByValue(b.Field); err != nil {
		return fmt.Errorf("invalid model: by.field: %w", err)
	}
	if slices.Contains(strings.Split(b.Field, "."), "") {
		return fmt.Errorf("invalid model: by.field %q: want names joined by dots, e.g. attrs.task_id", b.Field)
	}
	if b.Mode != "" && !slices.Contains(ByModes, b.Mode) {
		return fmt.Errorf("invalid model: by.mode is %q, want %q, %q, %q or none", b.Mode, ByPaths, ByMoves, ByStages)
	}
	if b.MinSessions < 1 {
		return fmt.Errorf("invalid model: by.min_sessions is %d, want 1 or more", b.MinSessions)
	}
	if b.Values < 0 || b.Shared < 0 || b.Unvalued < 0 {
		return fmt.Errorf("invalid model: a count of by is negative")
	}
	if b.Values < len(b.Maps) {
		return fmt.Errorf("invalid model: by.values is %d, fewer than its %d maps", b.Values, len(b.Maps))
	}
	subs := make(map[string]*Model, len(b.Maps))
	for i := range b.Maps {
		s := &b.Maps[i]
		if err := ValidByValue(s.Value); err != nil {
			return fmt.Errorf("invalid model: by.maps[%d]: %w", i, err)
		}
		if i > 0 && b.Maps[i-1].Value >= s.Value {
			return fmt.Errorf("invalid model: by.maps[%d]: value %q is not after %q (want sorted, unique values)", i, s.Value, b.Maps[i-1].Value)
		}
		if s.Sessions < b.MinSessions {
			return fmt.Errorf("invalid model: by.maps[%d] (value %q) has %d sessions, fewer than by.min_sessions %d", i, s.Value, s.Sessions, b.MinSessions)
		}
		// Made afresh, so indexed afresh: nothing else reads it.
		sub := s.model(m)
		if err := sub.validate(); err != nil {
			return fmt.Errorf("by.maps[%d] (value %q): %w", i, s.Value, err)
		}
		subs[s.Value] = sub
		if b.Mode == ByStages || b.Mode == ByMoves {
			if err := m.restricts(s); err != nil {
				return fmt.Errorf("invalid model: by.maps[%d] (value %q): %w", i, s.Value, err)
			}
		}
	}
	m.checkedSubs = subs
	return nil
}

// restricts reports the first state or transition of s, a sub-map in mode
// ByStages or ByMoves, that the shared map m lacks: such a sub-map may only
// leave out: its run caps and loop caps are the shared map's or lower (0,
// no cap, is above every cap), and a back edge of s must lie in a loop of
// s, whose cap counts its turns. Of a transition's flags, those check and
// the guard hold a move to must stay: a back edge of a capped loop of m
// (unmarked, its turns would count towards no cap) and the generalisation
// mark (which --generalized deny refuses). Rare may go: a restricted
// sub-map marks rarity anew over the outflow it keeps (see
// mine.restrictedMap), which can only make a move less rare.
func (m *Model) restricts(s *SubMap) error {
	for _, st := range s.States {
		ms := m.State(st.ID)
		if ms == nil || ms.Label != st.Label {
			return fmt.Errorf("state %q (label %q) is not the shared map's", st.ID, st.Label)
		}
		if ms.MaxRun > 0 && (st.MaxRun == 0 || st.MaxRun > ms.MaxRun) {
			return fmt.Errorf("state %q: max_run %d, the shared map's is %d", st.ID, st.MaxRun, ms.MaxRun)
		}
	}
	for _, l := range s.Loops {
		// A state is in one loop at most: the loop of m that holds l's
		// states, if any, is the one.
		i := slices.IndexFunc(m.Loops, func(ml Loop) bool {
			return !slices.ContainsFunc(l.States, func(id string) bool { return !slices.Contains(ml.States, id) })
		})
		if i < 0 {
			return fmt.Errorf("loop %v (max_iterations %d) is in no loop of the shared map", l.States, l.MaxIterations)
		}
		if most := m.Loops[i].MaxIterations; most > 0 && (l.MaxIterations == 0 || l.MaxIterations > most) {
			return fmt.Errorf("loop %v: max_iterations %d, the shared map's is %d (0 is no cap)", l.States, l.MaxIterations, most)
		}
	}
	for _, t := range s.Transitions {
		to := m.State(t.To)
		mt := m.Next(t.From, Move{Event: t.Event, Label: to.Label})
		if mt == nil || mt.To != t.To {
			return fmt.Errorf("transition %s -[%s]-> %s is not the shared map's", t.From, t.Event, t.To)
		}
		if mt.BackEdge && !t.BackEdge && slices.ContainsFunc(m.Loops, func(l Loop) bool {
			return l.MaxIterations > 0 && slices.Contains(l.States, t.From) && slices.Contains(l.States, t.To)
		}) {
			return fmt.Errorf("transition %s -[%s]-> %s is no back edge, the shared map's is one of a capped loop", t.From, t.Event, t.To)
		}
		if mt.Generalized != "" && t.Generalized == "" {
			return fmt.Errorf("transition %s -[%s]-> %s is not generalised, the shared map's is (%s)", t.From, t.Event, t.To, mt.Generalized)
		}
		if t.BackEdge && !slices.ContainsFunc(s.Loops, func(l Loop) bool {
			return slices.Contains(l.States, t.From) && slices.Contains(l.States, t.To)
		}) {
			return fmt.Errorf("back edge %s -[%s]-> %s closes no loop: its cycle would have no cap", t.From, t.Event, t.To)
		}
	}
	return nil
}

// digestBy adds a conditioned model's field, threshold and sub-maps to the
// digest: they decide which map judges a session.
func (m *Model) digestBy(d *digester, kind int) {
	b := m.By
	if b == nil {
		return
	}
	d.line("by", b.Field, strconv.Itoa(b.MinSessions))
	for i := range b.Maps {
		s := &b.Maps[i]
		d.line("map", s.Value)
		s.model(m).digestBody(d, kind)
	}
}
