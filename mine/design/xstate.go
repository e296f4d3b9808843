package design

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/fsmine/fsmine/automaton"
)

// An XState machine config (JSON, as createMachine takes it): "initial" and
// "states", each state node with "on": {EVENT: target}, a target being a
// key, "#id", {"target": ...} or an array of those; "type": "final" ends
// the flow. Compound states are flattened: their children are the states,
// a move into a compound state enters its initial child, and a compound
// state may not have moves of its own ("on", "always", "onDone"), nor may
// the machine. Of an event's moves (an array) XState takes the first whose
// guard ("guard", or XState 4's "cond" or "in") passes: a guarded move is
// kept as one the flow may take, its guard not (Options.Note is told), and
// a move after one without a guard, which XState never takes, is refused;
// so are "" as an event (XState 4's eventless move), moves out of a final
// state, a "type" XState does not have, and a key XState reads written in
// another case ("On"); other keys are skipped, as XState skips them. A
// target may be an array of one. The meta that fsmine's export
// writes (render.XState: the model's id, label, visits and sessions on a
// state, its event, counts, prob, rare and back_edge on a transition, the
// model's constraints, loops and argument rules in the machine's meta) is read back, so
// that an export reads back to its model.

type xstateNode struct {
	ID      string                     `json:"id"`
	Type    string                     `json:"type"`
	Initial string                     `json:"initial"`
	Meta    *xstateMeta                `json:"meta"`
	On      map[string]json.RawMessage `json:"on"`
	Always  json.RawMessage            `json:"always"`
	After   json.RawMessage            `json:"after"`
	Invoke  json.RawMessage            `json:"invoke"`
	OnDone  json.RawMessage            `json:"onDone"`
	States  map[string]*xstateNode     `json:"states"`
}

type xstateMeta struct {
	ID          *string `json:"id"`
	Label       *string `json:"label"`
	Event       *string `json:"event"`
	Visits      int     `json:"visits"`
	Sessions    int     `json:"sessions"`
	Count       int     `json:"count"`
	Prob        float64 `json:"prob"`
	Rare        bool    `json:"rare"`
	BackEdge    bool    `json:"back_edge"`
	Generalized string  `json:"generalized"`
	MaxRun      int     `json:"max_run"`
}

type xstateTarget struct {
	Target json.RawMessage `json:"target"`
	Meta   *xstateMeta     `json:"meta"`
	// The guard that picks the move, by XState 5's name and 4's.
	Guard json.RawMessage `json:"guard"`
	Cond  json.RawMessage `json:"cond"`
	In    json.RawMessage `json:"in"`
}

// guard is the move's guard as written, or "" for none.
func (t xstateTarget) guard() string {
	for _, g := range []json.RawMessage{t.Guard, t.Cond, t.In} {
		if given(g) {
			var b bytes.Buffer
			if json.Compact(&b, g) == nil {
				return b.String()
			}
			return string(g)
		}
	}
	return ""
}

type xstateMachine struct {
	xstateNode
	Description string `json:"description"`
	// Meta is the machine's meta: render.XState keeps the model's
	// constraints, loops and argument rules there. It hides xstateNode's.
	Meta *struct {
		Constraints []automaton.Constraint `json:"constraints"`
		Loops       []automaton.Loop       `json:"loops"`
		Args        []automaton.ArgRule    `json:"args"`
	} `json:"meta"`
}

var fsmineVersion = regexp.MustCompile(`^fsmine model version (\d+)`)

func readXState(data []byte, opt Options) (*flow, error) {
	f := newFlow(opt.Path)
	var mc xstateMachine
	if err := json.Unmarshal(data, &mc); err != nil {
		return nil, f.errorf("", "not an XState machine: %s", whyJSON(data, err))
	}
	if err := f.forgiven(data); err != nil {
		return nil, err
	}
	var tree map[string]any
	if err := json.Unmarshal(data, &tree); err == nil {
		if err := xstateKeys(f, "", tree); err != nil {
			return nil, err
		}
	}
	if len(mc.States) == 0 {
		return nil, f.errorf("", `not an XState machine: no "states"`)
	}
	if mc.Type == "parallel" {
		return nil, f.errorf("", "a parallel machine: not supported; a designed flow is one state at a time")
	}
	// Moves of the machine itself would leave every state: refused, not
	// dropped, as a compound state's own moves are.
	for _, m := range []struct {
		key   string
		given bool
	}{{"on", len(mc.On) > 0}, {"always", given(mc.Always)}, {"after", given(mc.After)}, {"invoke", given(mc.Invoke)}, {"onDone", given(mc.OnDone)}} {
		if m.given {
			return nil, f.errorf("", "moves of the machine itself (%q): not supported; give its states the moves", m.key)
		}
	}
	if v := fsmineVersion.FindStringSubmatch(mc.Description); v != nil {
		n, err := strconv.Atoi(v[1])
		if err != nil || n < 0 {
			return nil, f.errorf("", "the description's model version %s is not a version (too large)", v[1])
		}
		f.version = n
		f.versioned = true
	}
	if mc.Meta != nil {
		f.constraints, f.loops, f.args = mc.Meta.Constraints, mc.Meta.Loops, mc.Meta.Args
	}
	r := &xstateReader{f: f, opt: opt, machine: mc.ID, leaves: map[string]*xstateNode{}, byRef: map[string]string{}, ids: map[string]string{}}
	if err := r.flatten(mc.States); err != nil {
		return nil, err
	}
	if err := r.nodes(); err != nil {
		return nil, err
	}
	init, err := r.resolve(mc.Initial)
	if errors.Is(err, errNesting) {
		return nil, f.errorf(mc.Initial, "the machine's initial state: %v", err)
	}
	if mc.Initial == "" || err != nil {
		return nil, f.errorf(mc.Initial, "no start: the machine's initial state is no state of it")
	}
	if r.ids[init] != automaton.StartID {
		f.start = r.ids[init]
	}
	for _, k := range r.order {
		if err := r.edges(k); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// given reports whether a JSON value is there and not null.
func given(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && string(raw) != "null"
}

// xstateReader flattens a machine's state nodes into the flow's nodes.
type xstateReader struct {
	f       *flow
	opt     Options
	machine string                 // the machine's id, for "#machine.key" targets
	leaves  map[string]*xstateNode // the states, by key
	order   []string               // leaf keys, sorted within each parent
	byRef   map[string]string      // key or "#id" -> leaf key, or a compound's initial child
	ids     map[string]string      // leaf key -> model id
}

// flatten collects the leaves of states; a compound state stands for its
// initial child.
func (r *xstateReader) flatten(states map[string]*xstateNode) error {
	for _, k := range sortedNodeKeys(states) {
		n := states[k]
		if n == nil {
			return r.f.errorf(k, "its state node is null")
		}
		switch {
		case !xstateTypes[n.Type]:
			return r.f.errorf(k, `its "type" %q is no type of XState's (atomic, compound, final, history, parallel)`, n.Type)
		case n.Type == "parallel" || n.Type == "history":
			return r.f.errorf(k, "a %s state: not supported; a designed flow is one state at a time", n.Type)
		case len(n.After) > 0 && string(n.After) != "null":
			return r.f.errorf(k, `delayed moves ("after"): not supported; give them an event in "on"`)
		case len(n.Invoke) > 0 && string(n.Invoke) != "null":
			return r.f.errorf(k, `an invoked service ("invoke"): not supported; give its outcomes events in "on"`)
		case given(n.OnDone):
			return r.f.errorf(k, `a move when the state is done ("onDone"): not supported; give the moves out of its final children events in "on"`)
		}
		if len(n.States) > 0 {
			if len(n.On) > 0 || len(n.Always) > 0 {
				return r.f.errorf(k, "a compound state with moves of its own: not supported; give its children the moves")
			}
			if err := r.flatten(n.States); err != nil {
				return err
			}
			init := n.Initial
			if init == "" {
				init = sortedNodeKeys(n.States)[0]
			}
			if err := r.ref(k, k, init); err != nil {
				return err
			}
			if n.ID != "" {
				if err := r.ref(k, "#"+n.ID, init); err != nil {
					return err
				}
			}
			continue
		}
		if _, dup := r.leaves[k]; dup {
			return r.f.errorf(k, "two states have this key")
		}
		r.leaves[k] = n
		r.order = append(r.order, k)
		if err := r.ref(k, k, k); err != nil {
			return err
		}
		if n.ID != "" {
			if err := r.ref(k, "#"+n.ID, k); err != nil {
				return err
			}
		}
		if err := r.ref(k, "#"+r.machine+"."+k, k); err != nil {
			return err
		}
	}
	return nil
}

// ref makes ref (a key, "#id" or "#machine.key") name the state to, of
// key k: a ref that names two states is an error, not the last one's.
func (r *xstateReader) ref(k, ref, to string) error {
	if _, taken := r.byRef[ref]; taken {
		if strings.HasPrefix(ref, "#") {
			return r.f.errorf(k, "two states have the id %s", strconv.Quote(ref))
		}
		return r.f.errorf(k, "two states have this key (the flow names states by key)")
	}
	r.byRef[ref] = to
	return nil
}

// resolve is the leaf key a target names; a compound state's ref names its
// initial child, which may itself be compound.
func (r *xstateReader) resolve(ref string) (string, error) {
	for range maxNesting {
		k, ok := r.byRef[ref]
		if !ok {
			return "", errNoState
		}
		if _, leaf := r.leaves[k]; leaf {
			return k, nil
		}
		ref = k
	}
	return "", errNesting
}

// nodes adds a node per leaf, named by its meta's id when it has one.
func (r *xstateReader) nodes() error {
	for _, k := range r.order {
		n := r.leaves[k]
		id := k
		if n.Meta != nil && n.Meta.ID != nil {
			if *n.Meta.ID == "" {
				return r.f.errorf(k, "its meta.id is empty: a state needs a name")
			}
			id = *n.Meta.ID
		}
		if _, dup := r.f.nodes[id]; dup {
			return r.f.errorf(id, "two states have this id")
		}
		r.ids[k] = id
		nd := r.f.add(id)
		if n.Meta != nil {
			if n.Meta.Label != nil {
				nd.label = *n.Meta.Label
			}
			nd.visits, nd.sessions, nd.maxRun = n.Meta.Visits, n.Meta.Sessions, n.Meta.MaxRun
		}
		nd.final = n.Type == "final" && id != automaton.EndID
	}
	return nil
}

// edges adds the moves out of leaf k. Of an event's moves XState takes the
// first whose guard passes: a guarded move is kept (a move the flow may
// take; Options.Note is told the guard is not kept), and a move after one
// without a guard, which XState never takes, is an error.
func (r *xstateReader) edges(k string) error {
	n, from := r.leaves[k], r.ids[k]
	if len(n.Always) > 0 {
		return r.f.errorf(from, `"always" (eventless) moves are not supported: give them an event`)
	}
	if _, ok := n.On[""]; ok {
		return r.f.errorf(from, `an eventless move ("" in "on", XState 4's "always"): not supported; give it an event`)
	}
	if n.Type == "final" && len(n.On) > 0 {
		return r.f.errorf(from, `a final state with moves ("on"): XState leaves no final state; drop the moves, or the "type"`)
	}
	for _, name := range sortedRawKeys(n.On) {
		targets, err := xstateTargets(n.On[name])
		if err != nil {
			return r.f.errorf(from, "event %q: %s", name, typeError(err))
		}
		unguarded := ""
		for _, t := range targets {
			ref, err := xstateTargetRef(t.Target)
			if err != nil {
				return r.f.errorf(from, "event %q: %v", name, err)
			}
			if unguarded != "" {
				return r.f.errorf(from, "event %q: its move to %q follows the one to %q, which has no guard: XState takes the first move whose guard passes, so never this one (give the first a guard, or drop this one)", name, ref, unguarded)
			}
			to, err := r.resolve(ref)
			if errors.Is(err, errNesting) {
				return r.f.errorf(from, "its move on %q goes to %q: %v", name, ref, err)
			}
			if err != nil {
				return r.f.errorf(from, "its move on %q goes to %q, which is no state of the machine (a dangling target)", name, ref)
			}
			if g := t.guard(); g == "" {
				unguarded = ref
			} else if r.opt.Note != nil {
				r.opt.Note(r.f.errorf(from, "event %q: the guard %s of its move to %q is not kept: the model allows the move whatever the guard says", name, g, ref).Error())
			}
			e := edge{from: from, event: name, to: r.ids[to]}
			if m := t.Meta; m != nil {
				if m.Event != nil {
					e.event = *m.Event
				}
				e.count, e.sessions, e.prob = m.Count, m.Sessions, m.Prob
				e.rare, e.backEdge, e.generalized = m.Rare, m.BackEdge, m.Generalized
			}
			if (t.Meta == nil || t.Meta.Event == nil) && wildcard(name) {
				return r.f.errorf(from, "event %q: %s", name, errWildcard)
			}
			r.f.edges = append(r.f.edges, e)
		}
	}
	return nil
}

// xstateTargets reads the value of an event of "on".
func xstateTargets(raw json.RawMessage) ([]xstateTarget, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return nil, fmt.Errorf("no target")
	case raw[0] == '"':
		return []xstateTarget{{Target: raw}}, nil
	case raw[0] == '[':
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, err
		}
		var out []xstateTarget
		for _, it := range items {
			ts, err := xstateTargets(it)
			if err != nil {
				return nil, err
			}
			out = append(out, ts...)
		}
		return out, nil
	case raw[0] == '{':
		var t xstateTarget
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, err
		}
		return []xstateTarget{t}, nil
	}
	return nil, fmt.Errorf("a target is a string, an object or an array, not %s", raw)
}

// xstateTargetRef is the state a move's target names: a string, or an
// array of one.
func xstateTargetRef(raw json.RawMessage) (string, error) {
	var s string
	if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) {
		var several []json.RawMessage
		if err := json.Unmarshal(raw, &several); err == nil && len(several) > 1 {
			return "", fmt.Errorf("several targets of one move are not supported")
		}
		if len(several) == 1 {
			raw = several[0]
		}
	}
	if err := json.Unmarshal(raw, &s); err != nil || s == "" {
		return "", fmt.Errorf("a move without a target (a self-transition without a target is not supported)")
	}
	return strings.TrimPrefix(s, "."), nil
}

func sortedNodeKeys(m map[string]*xstateNode) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sortedRawKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// xstateTypes are the types of a state node.
var xstateTypes = map[string]bool{"": true, "atomic": true, "compound": true, "final": true, "history": true, "parallel": true}

// xstateRead are keys of a state node that XState reads, and so this
// reader (or skips, as actions), by the case XState takes.
var xstateRead = func() map[string]string {
	m := map[string]string{}
	for _, k := range []string{"id", "type", "initial", "states", "on", "always", "after", "invoke", "onDone",
		"meta", "entry", "exit", "tags", "description", "target", "history", "output", "context"} {
		m[strings.ToLower(k)] = k
	}
	return m
}()

// xstateKeys holds the keys of node (the machine, or the state node key)
// and its states to those XState takes, where it matters: XState ignores
// keys it does not know, as this reader does, but a key XState reads
// written in another case ("On") is one XState skips and Go's decoder
// would take as its own, and XState 3's "parallel": true makes regions.
func xstateKeys(f *flow, key string, node map[string]any) error {
	for _, k := range sortedKeys(node) {
		if want, ok := xstateRead[strings.ToLower(k)]; ok && k != want {
			return f.errorf(key, "the key %q: XState's is %q (keys are case-sensitive)", k, want)
		}
		if k == "parallel" && node[k] == true {
			return f.errorf(key, `"parallel": true: not supported; a designed flow is one state at a time`)
		}
	}
	states, _ := node["states"].(map[string]any)
	for _, k := range sortedKeys(states) {
		if child, ok := states[k].(map[string]any); ok {
			if err := xstateKeys(f, k, child); err != nil {
				return err
			}
		}
	}
	return nil
}

// detectJSON tells a JSON flow's format from its top-level keys, and the
// formats it could be: "" and all of them when it is more than one (or
// none).
func detectJSON(data []byte) (string, []string) {
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return "", nil
	}
	var could []string
	if _, ok := top["graph"]; ok {
		could = append(could, FormatSTAR)
	}
	if _, ok := top["states"]; ok {
		could = append(could, FormatXState)
	}
	_, nodes := top["nodes"]
	_, edges := top["edges"]
	if nodes && edges {
		could = append(could, FormatLangGraph)
	}
	if len(could) == 1 {
		return could[0], could
	}
	return "", could
}
