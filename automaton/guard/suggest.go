package guard

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/fsmine/fsmine/automaton"
	"github.com/goccy/go-json"
)

// SuggestPolicy drafts a policy for m from what its sessions did, for a
// person to review and edit before it is enforced:
//
//   - mode is monitor: a draft reports what it would deny before it denies
//     anything.
//   - states has an entry for every state but automaton.StartID and automaton.EndID, keyed by
//     id, with empty instructions to fill in, and as required_slots the
//     state's Fields (recorded by fsmine build --slots) named as SlotName
//     names them, in that order, without patterns.
//   - loop_caps caps every back edge of every loop that iterated at its
//     loop's observed max_iterations (the guard's default, written out so
//     that it can be lowered).
//   - watchdog's max_turns is an upper bound of the longest stay in one
//     state that any session made: per state the smaller of its max_run
//     (the most visits of its label in a row) and, for a state in a loop,
//     the loop's max_iterations + 1 (a stay in one state of a loop repeats
//     it along back edges only); 1 for a state that is in no loop and has
//     no max_run. No session the model was mined from would have fired it.
//     It has no fallback: it denies.
//
// For a conditioned model (m.By) the draft keeps the loop caps and states
// every sub-map has, as a policy applies to every map.
//
// Enforced with steps that carry their records' fields as slots, the draft
// allows every session the model was mined from. It returns a new policy;
// m must be valid.
func SuggestPolicy(m *automaton.Model) *Policy {
	p := &Policy{Mode: ModeMonitor, States: map[string]StatePolicy{}}
	loopOf := map[string]int{}
	for li, l := range m.Loops {
		for _, id := range l.States {
			loopOf[id] = li
		}
		if l.MaxIterations < 1 {
			continue
		}
		for _, be := range l.BackEdges {
			p.LoopCaps = append(p.LoopCaps, LoopCap{From: be.From, Event: be.Event, To: be.To, Max: l.MaxIterations})
		}
	}
	sortCaps(p.LoopCaps)
	maxTurns := 1
	for _, s := range m.States {
		if s.ID == automaton.StartID || s.ID == automaton.EndID {
			continue
		}
		stay := 1
		li, inLoop := loopOf[s.ID]
		switch {
		case inLoop && s.MaxRun > 0:
			stay = min(s.MaxRun, m.Loops[li].MaxIterations+1)
		case inLoop:
			stay = m.Loops[li].MaxIterations + 1
		case s.MaxRun > 0:
			stay = s.MaxRun
		}
		maxTurns = max(maxTurns, stay)

		var sp StatePolicy
		seen := map[string]bool{}
		for _, f := range s.Fields {
			name := SlotName(f)
			if !seen[name] {
				seen[name] = true
				sp.RequiredSlots = append(sp.RequiredSlots, SlotSpec{Name: name})
			}
		}
		p.States[s.ID] = sp
	}
	p.Watchdog = &Watchdog{MaxTurns: maxTurns}
	if m.By != nil {
		p.fitEveryMap(m)
	}
	return p
}

// fitEveryMap keeps, of the loop caps and states p drafts from the shared
// map of conditioned model m, those every sub-map has: a policy applies to
// every map and must fit each (a sub-map mined from its value's sessions
// alone, or restricted to the stages they visit, may lack a state or a back
// edge the shared map has), so the draft is one serve accepts unchanged.
func (p *Policy) fitEveryMap(m *automaton.Model) {
	fits := func(q *Policy) bool {
		for i := range m.By.Maps {
			if q.Check(m.For(m.By.Maps[i].Value)) != nil {
				return false
			}
		}
		return true
	}
	caps := p.LoopCaps[:0]
	for _, c := range p.LoopCaps {
		if fits(&Policy{Mode: p.Mode, LoopCaps: []LoopCap{c}}) {
			caps = append(caps, c)
		}
	}
	p.LoopCaps = caps
	for id, sp := range p.States {
		if !fits(&Policy{Mode: p.Mode, States: map[string]StatePolicy{id: sp}}) {
			delete(p.States, id)
		}
	}
}

// slotPrefixes are the record paths whose leaves SlotName names by what
// follows them, most specific first: a tool call's arguments as the
// importers write them (attrs.args.NAME), a log's own args.NAME, and the
// record's attrs.NAME.
var slotPrefixes = []string{"attrs.args.", "args.", "attrs."}

// SlotName is the name of the slot that carries the record field at path
// (a dotted path, as State.Fields holds): path without the first of
// "attrs.args.", "args." and "attrs." it starts with, so that
// attrs.args.order_id is order_id, args.reason is reason, attrs.channel is
// channel and attrs.args.address.zip is address.zip; any other path is its
// own name. Two paths may give one name (attrs.args.order_id and
// args.order_id): a session that carried either carries the slot.
func SlotName(path string) string {
	for _, pre := range slotPrefixes {
		if rest, ok := strings.CutPrefix(path, pre); ok && rest != "" {
			return rest
		}
	}
	return path
}

// Write writes the policy as a policy file that ReadPolicy reads back to an
// equal policy: indented JSON with the fields in the order of Policy, one
// loop cap, slot, state or rule to a line, states in order of their keys.
// A state's instructions are written even when empty, as the place where a
// person writes them. The same policy gives the same bytes.
func (p *Policy) Write(w io.Writer) error {
	var buf bytes.Buffer
	first := true
	sep := func(name string) {
		if first {
			buf.WriteString("{\n")
		} else {
			buf.WriteString(",\n")
		}
		first = false
		fmt.Fprintf(&buf, "  %q: ", name)
	}
	var err error
	enc := func(v any) []byte {
		b, e := json.Marshal(v)
		if e != nil && err == nil {
			err = e
		}
		return b
	}
	list := func(name string, n int, elem func(i int) []byte) {
		sep(name)
		buf.WriteByte('[')
		for i := 0; i < n; i++ {
			if i > 0 {
				buf.WriteByte(',')
			}
			buf.WriteString("\n    ")
			buf.Write(elem(i))
		}
		buf.WriteString("\n  ]")
	}
	if p.Mode != "" {
		sep("mode")
		buf.Write(enc(p.Mode))
	}
	if len(p.LoopCaps) > 0 {
		list("loop_caps", len(p.LoopCaps), func(i int) []byte { return enc(p.LoopCaps[i]) })
	}
	if p.Watchdog != nil {
		sep("watchdog")
		buf.Write(enc(p.Watchdog))
	}
	if p.RareIsDeviation {
		sep("rare_is_deviation")
		buf.WriteString("true")
	}
	if p.Generalized != "" {
		sep("generalized")
		buf.Write(enc(p.Generalized))
	}
	if p.MaxUnusual > 0 {
		sep("max_unusual")
		buf.WriteString(strconv.Itoa(p.MaxUnusual))
	}
	if p.MaxUnusualRun > 0 {
		sep("max_unusual_run")
		buf.WriteString(strconv.Itoa(p.MaxUnusualRun))
	}
	if len(p.Slots) > 0 {
		list("slots", len(p.Slots), func(i int) []byte { return enc(p.Slots[i]) })
	}
	if len(p.States) > 0 {
		keys := sortedKeys(p.States)
		sep("states")
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			buf.WriteString("\n    ")
			buf.Write(enc(k))
			buf.WriteString(": ")
			st := p.States[k]
			buf.WriteByte('{')
			if len(st.RequiredSlots) > 0 {
				buf.WriteString(`"required_slots": `)
				buf.Write(enc(st.RequiredSlots))
				buf.WriteString(", ")
			}
			buf.WriteString(`"instructions": `)
			buf.Write(enc(st.Instructions))
			buf.WriteByte('}')
		}
		buf.WriteString("\n  }")
	}
	if len(p.Transitions) > 0 {
		list("transitions", len(p.Transitions), func(i int) []byte { return enc(p.Transitions[i]) })
	}
	if err != nil {
		return fmt.Errorf("encoding the policy: %w", err)
	}
	if first {
		buf.WriteString("{")
	}
	buf.WriteString("\n}\n")
	_, werr := w.Write(buf.Bytes())
	return werr
}
