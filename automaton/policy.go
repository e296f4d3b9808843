package automaton

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

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
// stay in a loop (a strongly connected component of the model). Every back
// edge of a loop whose observed max_iterations is positive has a default cap
// of that max_iterations; an entry overrides the default of its edge, or caps
// another transition that lies inside one loop. from and to name states by id
// or by a label that exactly one state carries; max is at least 1.
//
// watchdog counts the consecutive decisions a session spends in one state
// (entering the state is the first); a step that would leave the session in
// that state for more than max_turns decisions fires it. fallback, when
// given, is the transition the guard then takes instead: to names a state
// (id or unique label; not __start__), event is recorded with it.
//
// rare_is_deviation makes a step along a transition the model marks rare a
// deviation (reason "rare_transition").
type Policy struct {
	Mode            string    `json:"mode,omitempty"`
	LoopCaps        []LoopCap `json:"loop_caps,omitempty"`
	Watchdog        *Watchdog `json:"watchdog,omitempty"`
	RareIsDeviation bool      `json:"rare_is_deviation,omitempty"`
}

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
// Policy.Check.
func ReadPolicy(r io.Reader) (*Policy, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	p := new(Policy)
	if err := dec.Decode(p); err != nil {
		return nil, fmt.Errorf("decoding policy: %w", err)
	}
	if dec.More() {
		return nil, errors.New("decoding policy: more than one JSON value")
	}
	if err := p.checkForm(); err != nil {
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

func (p *Policy) checkForm() error {
	switch p.Mode {
	case "", ModeEnforce, ModeMonitor:
	default:
		return fmt.Errorf("policy: mode is %q, want %q or %q", p.Mode, ModeEnforce, ModeMonitor)
	}
	for i, c := range p.LoopCaps {
		if c.From == "" || c.To == "" {
			return fmt.Errorf("policy: loop_caps[%d]: from and to are required", i)
		}
		if c.Max < 1 {
			return fmt.Errorf("policy: loop_caps[%d] (%s -[%s]-> %s): max is %d, want at least 1", i, c.From, c.Event, c.To, c.Max)
		}
	}
	if w := p.Watchdog; w != nil {
		if w.MaxTurns < 1 {
			return fmt.Errorf("policy: watchdog: max_turns is %d, want at least 1", w.MaxTurns)
		}
		if w.Fallback != nil && w.Fallback.To == "" {
			return errors.New("policy: watchdog: fallback.to is required")
		}
	}
	return nil
}

// Monitor reports whether the policy only records deviations.
func (p *Policy) Monitor() bool { return p != nil && p.Mode == ModeMonitor }

// Check reports whether the policy fits model m: every state it names exists
// and every loop cap names a transition inside one of m's loops. Errors name
// the offending entry.
func (p *Policy) Check(m *Model) error {
	_, err := compile(m, p)
	return err
}

// resolveState finds the state a policy names: by id, or else by a label that
// exactly one state carries.
func resolveState(m *Model, name string) (*State, error) {
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
