package guard

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"regexp/syntax"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/internal/jsondup"
	"github.com/goccy/go-json"
)

// Policy says how a Guard enforces a model. A policy file is a JSON object
// with these fields, all optional; unknown fields are an error so that a
// misspelt key is not silently ignored:
//
//	{
//	  "mode": "enforce",
//	  "loop_caps": [
//	    {"from": "get_order_details", "event": "ok", "to": "get_order_details", "max": 3}
//	  ],
//	  "watchdog": {
//	    "max_turns": 5,
//	    "fallback": {"event": "escalate", "to": "transfer_to_human_agents"}
//	  },
//	  "rare_is_deviation": false
//	}
//
// mode is "enforce" (the default: a deviating step is denied and the
// session's state does not change) or "monitor" (every step is allowed and
// the deviation is only recorded in the Decision).
//
// loop_caps caps how often one transition may be taken during one continuous
// stay in a loop (a strongly connected component of the model). Whatever
// the policy says, a loop whose observed max_iterations is positive lets
// its back edges (the transitions the model marks so) be taken at most that
// often in one stay, all together, as check counts them, and each state's
// max_run caps the visits of its label in a row. An entry lowers the cap of
// one back edge (a higher one is an error), or caps another transition that
// lies inside one loop. from and to name states by id or by a label that
// exactly one state carries; max is at least 1.
//
// watchdog counts the consecutive decisions a session spends in one state
// (entering the state is the first); a step that would leave the session in
// that state for more than max_turns decisions fires it. fallback, when
// given, is the transition the guard then takes instead: to names a state
// (id or unique label; not __start__), event is recorded with it.
//
// rare_is_deviation makes a step along a transition the model marks rare a
// deviation (reason "rare_transition").
//
// generalized says what a step along a transition the miner generalised
// (automaton.Transition.Generalized: no session took it) gets: "allow" (the default:
// allowed, and marked in the Decision) or "deny" (reason
// "generalized_transition").
//
// max_unusual, when above 0, is the most unusual steps a session may take,
// steps along a transition the model marks rare or generalised; the next is
// a deviation (reason "unusual_cap"), as check --max-unusual judges logs.
// max_unusual_run, when above 0, is the most such steps a session may take
// in a row; the next is a deviation (reason "unusual_run"), as check
// --max-unusual-run judges logs.
//
// slots, states and transitions give the agent's slots (the fields it must
// collect: an order id, a reason), state instructions and rules on moves:
//
//	{
//	  "slots": [{"name": "channel", "pattern": "^(web|phone)$"}],
//	  "states": {
//	    "collecting_info": {
//	      "required_slots": [{"name": "order_id", "pattern": "^[A-Z]{2}[0-9]{8}$"}, {"name": "reason"}],
//	      "instructions": "Ask for the order id and the reason for the return."
//	    }
//	  },
//	  "transitions": [
//	    {"from": "confirming", "event": "change_order", "to": "collecting_info", "clear": ["reason"]},
//	    {"from": "collecting_info", "to": "confirming",
//	     "when": [{"slot": "order_id", "matches": "^[A-Z]{2}"}, {"field": "event", "equals": "ok"}]}
//	  ]
//	}
//
// A slot is declared by an entry of slots or of some state's
// required_slots; a step may carry only declared slots. A slot is present
// when it holds a non-empty value, and valid when it is present and its text
// (a number's JSON text, "true" or "false") matches the RE2 pattern of the
// entry that judges it (no pattern: any value).
//
// states is keyed by a state id, or by a label, which names every state
// carrying it. required_slots are the slots a session must hold, present
// and valid, to leave the state (a move to another state; the watchdog's
// fallback is exempt): the entry's pattern and the slot's top-level pattern
// both apply. instructions is text the guard hands back with every decision
// that leaves a session in the state.
//
// transitions are rules on the model's transitions: from and to name states
// as the keys of states do; event, when given, names the event (absent: any
// event). A rule must match at least one transition of the model, and no
// transition may match two rules. when lists conditions, all of which must
// hold for the move; each names a slot or a field of the step ("event" or
// "next") and one test: "present" (true: present; false: absent), "equals"
// (a string, number or bool) or "matches" (an RE2 pattern). Conditions see
// the session's slots with the step's own slots written over them. keep
// (only these slots survive the move) or clear (these slots do not) says
// what happens to the session's slots when the move is taken; the step's own
// slots are written after, so they always survive.
type Policy struct {
	Mode            string                 `json:"mode,omitempty"`
	LoopCaps        []LoopCap              `json:"loop_caps,omitempty"`
	Watchdog        *Watchdog              `json:"watchdog,omitempty"`
	RareIsDeviation bool                   `json:"rare_is_deviation,omitempty"`
	Generalized     string                 `json:"generalized,omitempty"`
	MaxUnusual      int                    `json:"max_unusual,omitempty"`
	MaxUnusualRun   int                    `json:"max_unusual_run,omitempty"`
	Slots           []SlotSpec             `json:"slots,omitempty"`
	States          map[string]StatePolicy `json:"states,omitempty"`
	Transitions     []Rule                 `json:"transitions,omitempty"`
}

// Values of Policy.Generalized.
const (
	GeneralizedAllow = "allow"
	GeneralizedDeny  = "deny"
)

// SlotSpec declares a slot, with an optional RE2 pattern its value must
// match.
type SlotSpec struct {
	Name    string `json:"name"`
	Pattern string `json:"pattern,omitempty"`
}

// StatePolicy is what a policy says about one state.
type StatePolicy struct {
	RequiredSlots []SlotSpec `json:"required_slots,omitempty"`
	Instructions  string     `json:"instructions,omitempty"`
}

// Rule is a policy's rule on the transitions From -[Event]-> To (any event
// when Event is nil): the conditions When, and what becomes of the session's
// slots (Keep or Clear).
type Rule struct {
	From  string      `json:"from"`
	Event *string     `json:"event,omitempty"`
	To    string      `json:"to"`
	Keep  []string    `json:"keep,omitempty"`
	Clear []string    `json:"clear,omitempty"`
	When  []Condition `json:"when,omitempty"`
}

// Condition is one test a move must pass: on the slot Slot or on the step's
// field Field ("event" or "next"), exactly one of Present, Equals and
// Matches (an RE2 pattern). Equals holds a string, a bool or a number
// (json.Number as ReadPolicy decodes it, float64 or int).
type Condition struct {
	Slot    string      `json:"slot,omitempty"`
	Field   string      `json:"field,omitempty"`
	Present *bool       `json:"present,omitempty"`
	Equals  interface{} `json:"equals,omitempty"`
	Matches string      `json:"matches,omitempty"`
}

// Step fields a Condition may name.
const (
	FieldEvent = "event"
	FieldNext  = "next"
)

// Policy modes.
const (
	ModeEnforce = "enforce"
	ModeMonitor = "monitor"
)

// LoopCap caps the transition From -[Event]-> To at Max traversals during one
// stay in its loop.
type LoopCap struct {
	From  string `json:"from"`
	Event string `json:"event"`
	To    string `json:"to"`
	Max   int    `json:"max"`
}

// Watchdog bounds the consecutive turns a session spends in one state.
type Watchdog struct {
	MaxTurns int       `json:"max_turns"`
	Fallback *Fallback `json:"fallback,omitempty"`
}

// Fallback is the transition the watchdog takes: Event and the target state
// To. Label is the target's label; a Guard fills it in, a policy file need
// not give it.
type Fallback struct {
	Event string `json:"event"`
	To    string `json:"to"`
	Label string `json:"label,omitempty"`
}

// ReadPolicy decodes a policy. It checks the policy's own form (mode, caps at
// least 1, max_turns at least 1) but not its fit to a model: see
// Policy.Check. A key given twice in one object, a key in other case than
// its field's ("Mode") and watchdog.fallback.label are errors that name the
// key: JSON decoders take the last of two values, match keys in any case,
// and the label is the guard's to fill in from to.
func ReadPolicy(r io.Reader) (*Policy, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if err := jsondup.Check(data); err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	if err := jsondup.KnownKeys(data, Policy{}); err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	p := new(Policy)
	if err := dec.Decode(p); err != nil {
		return nil, fmt.Errorf("policy: %w", jsondup.Position(data, err))
	}
	if dec.More() {
		return nil, errors.New("decoding policy: more than one JSON value")
	}
	if w := p.Watchdog; w != nil && w.Fallback != nil && w.Fallback.Label != "" {
		// Label is what a Guard reports; a file that gave one would have
		// it ignored, or contradict to.
		return nil, errors.New("policy: watchdog: fallback: label is not read from a policy (the guard gives the label of the state to names); name the state by to")
	}
	if _, err := p.checkForm(); err != nil {
		return nil, err
	}
	return p, nil
}

// LoadPolicy reads the policy file at path; errors name the path.
func LoadPolicy(path string) (*Policy, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := ReadPolicy(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// checkForm checks the policy for form (see ReadPolicy) and returns its
// compiled patterns.
func (p *Policy) checkForm() (*policyPatterns, error) {
	switch p.Mode {
	case "", ModeEnforce, ModeMonitor:
	default:
		return nil, fmt.Errorf("policy: mode is %q, want %q or %q", p.Mode, ModeEnforce, ModeMonitor)
	}
	for i, c := range p.LoopCaps {
		if c.From == "" || c.To == "" {
			return nil, fmt.Errorf("policy: loop_caps[%d]: from and to are required", i)
		}
		if c.Max < 1 {
			return nil, fmt.Errorf("policy: loop_caps[%d] (%s -[%s]-> %s): max is %d, want at least 1", i, c.From, c.Event, c.To, c.Max)
		}
	}
	if w := p.Watchdog; w != nil {
		if w.MaxTurns < 1 {
			return nil, fmt.Errorf("policy: watchdog: max_turns is %d, want at least 1", w.MaxTurns)
		}
		if w.Fallback != nil && w.Fallback.To == "" {
			return nil, errors.New("policy: watchdog: fallback.to is required")
		}
	}
	switch p.Generalized {
	case "", GeneralizedAllow, GeneralizedDeny:
	default:
		return nil, fmt.Errorf("policy: generalized is %q, want %q or %q", p.Generalized, GeneralizedAllow, GeneralizedDeny)
	}
	if p.MaxUnusual < 0 {
		return nil, fmt.Errorf("policy: max_unusual is %d, want 0 (no cap) or more", p.MaxUnusual)
	}
	if p.MaxUnusualRun < 0 {
		return nil, fmt.Errorf("policy: max_unusual_run is %d, want 0 (no cap) or more", p.MaxUnusualRun)
	}
	return p.slotTable()
}

// policyPatterns are a policy's compiled patterns: every declared slot's
// (nil entries for slots without one), by name, and every pattern of a slot
// or a condition, by its text, compiled once.
type policyPatterns struct {
	decl map[string][]*regexp.Regexp
	re   map[string]*regexp.Regexp
}

// MaxPattern bounds the length of a policy's RE2 patterns, in bytes: a
// pattern is a slot's shape, and compiling a 5 MB one took 11 s and 768 MB.
const MaxPattern = 4096

// compile returns pattern compiled, once per policyPatterns; a pattern over
// MaxPattern bytes is refused before it is compiled.
func (pp *policyPatterns) compile(pattern string) (*regexp.Regexp, error) {
	if re, ok := pp.re[pattern]; ok {
		return re, nil
	}
	if len(pattern) > MaxPattern {
		return nil, fmt.Errorf("%d bytes, at most %d", len(pattern), MaxPattern)
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err
	}
	pp.re[pattern] = re
	return re, nil
}

// slotTable checks the policy's slots, states and transitions for form:
// names, patterns, conditions, and that every slot they name is declared,
// and returns the patterns compiled.
func (p *Policy) slotTable() (*policyPatterns, error) {
	pp := &policyPatterns{decl: make(map[string][]*regexp.Regexp), re: make(map[string]*regexp.Regexp)}
	decl := pp.decl
	declare := func(path string, sp SlotSpec) (*regexp.Regexp, error) {
		if sp.Name == "" {
			return nil, fmt.Errorf("policy: %s.name: a slot needs a name", path)
		}
		var re *regexp.Regexp
		if sp.Pattern != "" {
			var err error
			if re, err = pp.compile(sp.Pattern); err != nil {
				return nil, fmt.Errorf("policy: %s.pattern: invalid RE2 pattern %s: %w", path, quotePattern(sp.Pattern), unwrapSyntax(err))
			}
		}
		decl[sp.Name] = append(decl[sp.Name], re)
		return re, nil
	}
	seen := make(map[string]int)
	for i, sp := range p.Slots {
		path := fmt.Sprintf("slots[%d]", i)
		if j, dup := seen[sp.Name]; dup {
			return nil, fmt.Errorf("policy: %s: slot %q is declared by slots[%d] too", path, sp.Name, j)
		}
		seen[sp.Name] = i
		if _, err := declare(path, sp); err != nil {
			return nil, err
		}
	}
	for _, key := range sortedKeys(p.States) {
		st := p.States[key]
		if key == "" {
			return nil, errors.New(`policy: states[""]: a state needs a name`)
		}
		seen := make(map[string]int)
		for i, sp := range st.RequiredSlots {
			path := fmt.Sprintf("states%s.required_slots[%d]", jsonKey(key), i)
			if j, dup := seen[sp.Name]; dup {
				return nil, fmt.Errorf("policy: %s: slot %q is required by required_slots[%d] too", path, sp.Name, j)
			}
			seen[sp.Name] = i
			if _, err := declare(path, sp); err != nil {
				return nil, err
			}
		}
	}
	known := func(path, name string) error {
		if _, ok := decl[name]; !ok {
			return fmt.Errorf("policy: %s: slot %q is not declared (by slots or a state's required_slots)", path, name)
		}
		return nil
	}
	for i, r := range p.Transitions {
		path := fmt.Sprintf("transitions[%d]", i)
		if r.From == "" || r.To == "" {
			return nil, fmt.Errorf("policy: %s: from and to are required", path)
		}
		if r.Keep != nil && r.Clear != nil {
			return nil, fmt.Errorf("policy: %s: give keep or clear, not both", path)
		}
		for j, name := range r.Keep {
			if err := known(fmt.Sprintf("%s.keep[%d]", path, j), name); err != nil {
				return nil, err
			}
		}
		for j, name := range r.Clear {
			if err := known(fmt.Sprintf("%s.clear[%d]", path, j), name); err != nil {
				return nil, err
			}
		}
		for j, c := range r.When {
			cpath := fmt.Sprintf("%s.when[%d]", path, j)
			switch {
			case c.Slot != "" && c.Field != "":
				return nil, fmt.Errorf("policy: %s: name a slot or a field, not both", cpath)
			case c.Slot != "":
				if err := known(cpath+".slot", c.Slot); err != nil {
					return nil, err
				}
			case c.Field == FieldEvent || c.Field == FieldNext:
			case c.Field != "":
				return nil, fmt.Errorf("policy: %s.field: steps carry no field %q (they carry %q and %q)", cpath, c.Field, FieldEvent, FieldNext)
			default:
				return nil, fmt.Errorf("policy: %s: a condition names a slot or a field", cpath)
			}
			tests := 0
			if c.Present != nil {
				tests++
			}
			if c.Equals != nil {
				tests++
				if _, _, err := equalsText(c.Equals); err != nil {
					return nil, fmt.Errorf("policy: %s.equals: %w", cpath, err)
				}
			}
			if c.Matches != "" {
				tests++
				if _, err := pp.compile(c.Matches); err != nil {
					return nil, fmt.Errorf("policy: %s.matches: invalid RE2 pattern %s: %w", cpath, quotePattern(c.Matches), unwrapSyntax(err))
				}
			}
			if tests != 1 {
				return nil, fmt.Errorf("policy: %s: give exactly one of present, equals and matches (%d given)", cpath, tests)
			}
		}
	}
	return pp, nil
}

// equalsText returns the text and kind a condition's equals value compares
// with.
func equalsText(v interface{}) (string, SlotKind, error) {
	switch x := v.(type) {
	case string:
		return x, SlotString, nil
	case json.Number:
		return x.String(), SlotNumber, nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), SlotNumber, nil
	case int:
		return strconv.Itoa(x), SlotNumber, nil
	case bool:
		return strconv.FormatBool(x), SlotBool, nil
	}
	return "", 0, fmt.Errorf("want a string, number or bool, not %s", jsonType(v))
}

// jsonType names the JSON type of a decoded value.
func jsonType(v interface{}) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]interface{}:
		return "an object"
	case []interface{}:
		return "an array"
	}
	return fmt.Sprintf("%T", v)
}

// quotePattern quotes a pattern for an error: whole up to 64 bytes, else
// its first 64 bytes (whole characters) and "...", so that an error does
// not echo megabytes.
func quotePattern(p string) string {
	const show = 64
	if len(p) <= show {
		return strconv.Quote(p)
	}
	cut := show
	for cut > 0 && !utf8.RuneStart(p[cut]) {
		cut--
	}
	return strconv.Quote(p[:cut]) + "..."
}

// unwrapSyntax keeps what a pattern's error says is wrong, without
// regexp's "error parsing regexp" prefix and the pattern, which the caller's
// message already gives.
func unwrapSyntax(err error) error {
	var se *syntax.Error
	if errors.As(err, &se) {
		return errors.New(string(se.Code))
	}
	return err
}

// jsonKey writes key as a JSON path step: .key for a plain name, else
// ["key"].
func jsonKey(key string) string {
	plain := key != ""
	for i, c := range key {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			plain = false
			break
		}
	}
	if plain {
		return "." + key
	}
	return "[" + strconv.Quote(key) + "]"
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Monitor reports whether the policy only records deviations.
func (p *Policy) Monitor() bool { return p != nil && p.Mode == ModeMonitor }

// Check reports whether the policy fits model m: every state it names exists
// and every loop cap names a transition inside one of m's loops. Errors name
// the offending entry.
func (p *Policy) Check(m *automaton.Model) error {
	_, err := compile(m, p)
	return err
}

// resolveStates finds the states a policy's states key (or a rule's from or
// to) names: the state with that id, or else every state carrying it as a
// label, sorted by id.
func resolveStates(m *automaton.Model, name string) ([]*automaton.State, error) {
	if s := m.State(name); s != nil {
		return []*automaton.State{s}, nil
	}
	var out []*automaton.State
	for i := range m.States {
		if m.States[i].Label == name {
			out = append(out, &m.States[i])
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("state %q is not in the model", name)
	}
	return out, nil
}

// resolveState finds the state a policy names: by id, or else by a label that
// exactly one state carries.
func resolveState(m *automaton.Model, name string) (*automaton.State, error) {
	if s := m.State(name); s != nil {
		return s, nil
	}
	var ids []string
	for i := range m.States {
		if m.States[i].Label == name {
			ids = append(ids, m.States[i].ID)
		}
	}
	switch len(ids) {
	case 0:
		return nil, fmt.Errorf("state %q is not in the model", name)
	case 1:
		return m.State(ids[0]), nil
	}
	sort.Strings(ids)
	return nil, fmt.Errorf("label %q is carried by %d states (%s): name one by id", name, len(ids), strings.Join(ids, ", "))
}
