package render

import (
	"bytes"
	"io"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/fsmine/fsmine/automaton"
)

// XState writes m as an XState v5 machine config in JSON, ready for
// createMachine: {"id": "fsmine", "initial": "__start__", "states": {...}}
// with one state node per state, __end__ of type "final", and
// "on": {EVENT: [{"target": ...}]} for the transitions out of each state,
// most frequent first.
//
// Events are named "<event>/<label>": the model's event and the label of the
// state the transition enters; out of __start__, whose event is empty, the
// name is "/<label>". In the model a state, an event and the next state's
// label pick the transition (automaton.Model.Next), and one event often
// leads to several states. XState's alternative, an array of transitions
// under one event, takes the first whose guard passes: without guards the
// others could never be taken, and guards would need code outside the JSON.
// With one event per move the JSON runs as it is, and a driver sends
// {type: event + "/" + label}. In both parts "%", "/" and "*" are written
// %25, %2F and %2A, so names are one to one and never wildcards.
//
// State keys are the state ids with ".", "\" and "#" (XState's path, escape
// and id characters) replaced by "_", made unique with "_2", "_3", ...
// Every state node's meta keeps the model's id, label, visits and sessions
// (and max_run, the state's repeat cap, when it has one), and every
// transition's meta its event, label, count, sessions, prob, rare and
// back_edge (and generalized, the kind of a generalised transition). The
// machine's meta keeps the model's constraints, loops and argument rules,
// as the model file writes them ("constraints": [{"kind", "a", "b",
// "support", "confidence"}], "loops": [{"states", "back_edges", "count",
// "sessions", "max_iterations", "p95_iterations"}], "args": [{"tool",
// "arg", "kind", "steps", "sessions", "values", "from"}]), each left out
// when there are none.
// That is all that the model's digest covers, so that fsmine import reads
// the machine back to the model.
//
// With opt.Detail DetailSummary the states of each stage of several states
// (see Stages) are nested in a compound state keyed "stage_N" (N counting
// stages from 1; made unique as state keys are), whose meta names the
// stage; every state node then has an id equal to its key and transitions
// target "#key", since a target may sit in another stage. Other options are
// not used: a machine keeps every transition.
func XState(w io.Writer, m *automaton.Model, opt Options) error {
	m, err := sorted(m)
	if err != nil {
		return err
	}
	states := make([]*automaton.State, len(m.States))
	for i := range m.States {
		states[i] = &m.States[i]
	}
	nested := opt.Detail == DetailSummary
	var stages []Stage
	ids := stateIDs(states)
	if nested {
		stages = stagesOf(m)
		for i := range stages {
			ids = append(ids, stageKey(i))
		}
	}
	keys := uniqueNames(ids, xstateKey)
	target := func(id string) string {
		if nested {
			return "#" + keys[id] // the target may sit in another stage
		}
		return keys[id]
	}

	var nodes object
	byID := map[string]object{}
	for _, s := range states {
		node := object{}
		if nested {
			node = append(node, field{"id", keys[s.ID]})
		}
		if s.ID == automaton.EndID {
			node = append(node, field{"type", "final"})
		}
		meta := object{
			{"id", s.ID},
			{"label", s.Label},
			{"visits", s.Visits},
			{"sessions", s.Sessions},
		}
		if s.MaxRun > 0 {
			meta = append(meta, field{"max_run", s.MaxRun})
		}
		node = append(node, field{"meta", meta})
		var on object
		for _, t := range m.Out(s.ID) {
			label := m.State(t.To).Label
			meta := object{
				{"event", t.Event},
				{"label", label},
				{"count", t.Count},
				{"sessions", t.Sessions},
				{"prob", t.Prob},
				{"rare", t.Rare},
				{"back_edge", t.BackEdge},
			}
			if t.Generalized != "" {
				meta = append(meta, field{"generalized", t.Generalized})
			}
			on = append(on, field{xstateEvent(t.Event, label), []object{{
				{"target", target(t.To)},
				{"meta", meta},
			}}})
		}
		if len(on) > 0 {
			node = append(node, field{"on", on})
		}
		byID[s.ID] = node
		if !nested {
			nodes = append(nodes, field{keys[s.ID], node})
		}
	}
	if nested {
		nodes = append(nodes, field{keys[automaton.StartID], byID[automaton.StartID]})
		for i, st := range stages {
			if len(st.States) == 1 {
				nodes = append(nodes, field{keys[st.States[0]], byID[st.States[0]]})
				continue
			}
			var children object
			for _, id := range st.States {
				children = append(children, field{keys[id], byID[id]})
			}
			nodes = append(nodes, field{keys[stageKey(i)], object{
				{"id", keys[stageKey(i)]},
				{"initial", keys[st.States[0]]},
				{"meta", object{{"stage", st.Name}}},
				{"states", children},
			}})
		}
		nodes = append(nodes, field{keys[automaton.EndID], byID[automaton.EndID]})
	}
	machine := object{
		{"id", "fsmine"},
		{"initial", keys[automaton.StartID]},
		{"description", "fsmine model version " + strconv.Itoa(m.Version) + digestNote(m, shownText) +
			`; events are "<event>/<next label>"`},
	}
	var meta object
	if len(m.Constraints) > 0 {
		meta = append(meta, field{"constraints", m.Constraints})
	}
	if len(m.Loops) > 0 {
		meta = append(meta, field{"loops", m.Loops})
	}
	if len(m.Args) > 0 {
		meta = append(meta, field{"args", m.Args})
	}
	if meta != nil {
		machine = append(machine, field{"meta", meta})
	}
	machine = append(machine, field{"states", nodes})
	out, err := marshalJSON(machine)
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}

// xstateKey is the XState state key for a state id, before uniqueNames.
func xstateKey(id string) string {
	return strings.NewReplacer(".", "_", `\`, "_", "#", "_").Replace(id)
}

// xstateEventEscaper writes the characters that would make event names
// ambiguous or wildcards as percent escapes.
var xstateEventEscaper = strings.NewReplacer("%", "%25", "/", "%2F", "*", "%2A")

// xstateEvent is the XState event name of a move.
func xstateEvent(event, label string) string {
	return xstateEventEscaper.Replace(event) + "/" + xstateEventEscaper.Replace(label)
}

// object is a JSON object that keeps its fields in order.
type object []field

type field struct {
	key   string
	value any
}

// MarshalJSON implements json.Marshaler.
func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshalCompact(f.key)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		v, err := marshalCompact(f.value)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshalCompact is json.Marshal without HTML escaping, so that "<" and
// ">" in names stay readable.
func marshalCompact(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// marshalJSON is marshalCompact indented by two spaces, with a final
// newline.
func marshalJSON(v any) ([]byte, error) {
	compact, err := marshalCompact(v)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := json.Indent(&b, compact, "", "  "); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// stageKey is the id a stage is keyed by before xstateKey and uniqueNames:
// its "." makes xstateKey change it, so it never keeps a state's key.
func stageKey(i int) string { return "stage." + strconv.Itoa(i+1) }
