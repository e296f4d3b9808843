package mine

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/fsmine/fsmine/automaton"
)

// Outcome is a parsed outcome expression: a record field, a comparison and
// a value, such as attrs.reward>=1, attrs.termination=user_stop or
// attrs.status!=error, that says whether a session succeeded.
//
// The operators are = (also ==), !=, <, <=, > and >=. A value that is a
// decimal number (1, -0.5, .5, 1e3; not NaN, Inf or hex) compares with a
// JSON number, numerically; true and false
// compare with a JSON boolean; any other value (quotes optional, "..." or
// '...') compares with a JSON string, and only with = and !=.
type Outcome struct {
	// Expr is the expression as given.
	Expr string
	// Path is the dotted field path, Op the operator (= for ==), Value
	// the value's text (quotes taken off).
	Path, Op, Value string

	kind valueKind // the JSON type Value compares with
	num  float64
}

// ErrOutcome is wrapped by every error about an outcome expression: one
// that does not parse, names a field no record carries, or compares a
// value of one type with a field of another.
var ErrOutcome = errors.New("outcome")

// OutcomeError is an error about an outcome expression; it names the
// expression.
type OutcomeError struct {
	Expr string
	Msg  string
}

func (e *OutcomeError) Error() string { return fmt.Sprintf("outcome %q: %s", e.Expr, e.Msg) }

// Unwrap makes errors.Is(err, ErrOutcome) hold.
func (e *OutcomeError) Unwrap() error { return ErrOutcome }

// ParseOutcome parses an outcome expression (see Outcome). Its errors are
// *OutcomeError.
func ParseOutcome(expr string) (*Outcome, error) {
	bad := func(format string, args ...any) error {
		return &OutcomeError{Expr: expr, Msg: fmt.Sprintf(format, args...)}
	}
	i := strings.IndexAny(expr, "=!<>")
	if i < 0 {
		return nil, bad("want FIELD OP VALUE, with OP one of = != < <= > >= (for example attrs.reward>=1)")
	}
	o := &Outcome{Expr: expr, Path: strings.TrimSpace(expr[:i])}
	rest := expr[i:]
	for _, op := range []string{"==", "!=", "<=", ">=", "=", "<", ">"} {
		if strings.HasPrefix(rest, op) {
			o.Op, rest = op, rest[len(op):]
			break
		}
	}
	if o.Op == "" {
		return nil, bad("%q is no operator: want one of = != < <= > >=", rest[:1])
	}
	if o.Op == "==" {
		o.Op = "="
	}
	if o.Path == "" {
		return nil, bad("no field before %s", o.Op)
	}
	if _, err := newExtractor([]string{o.Path}); err != nil {
		return nil, bad("%v", err)
	}
	v := strings.TrimSpace(rest)
	if strings.ContainsAny(v, "=<>") || strings.HasPrefix(v, "!") {
		return nil, bad("more than one operator")
	}
	quoted := len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'')
	if quoted {
		v = v[1 : len(v)-1]
	}
	if v == "" && !quoted {
		return nil, bad("no value after %s", o.Op)
	}
	o.Value = v
	// A number is written in decimal, as JSON writes one (a sign or a
	// leading point allowed): ParseFloat also takes NaN, Inf, hex and
	// underscores, which no JSON number equals (=NaN failed every session).
	decimal := strings.Trim(v, "+-.0123456789eE") == "" && strings.ContainsAny(v, "0123456789")
	switch x, err := strconv.ParseFloat(v, 64); {
	case !quoted && decimal && errors.Is(err, strconv.ErrRange):
		return nil, bad("%s is beyond the range of a number (±%g)", v, math.MaxFloat64)
	case !quoted && decimal && err == nil:
		o.kind, o.num = kindNumber, x
	case !quoted && (v == "true" || v == "false"):
		o.kind = kindBool
	default:
		o.kind = kindString
	}
	if o.kind != kindNumber && o.Op != "=" && o.Op != "!=" {
		return nil, bad("%s compares numbers, and %q is not one", o.Op, v)
	}
	return o, nil
}

// test reports whether value v (of the field, present) makes the outcome
// true; an error when its type is not the one the expression compares.
func (o *Outcome) test(v value) (bool, error) {
	if v.kind != o.kind {
		return false, fmt.Errorf("%s is a %s (%s), the expression compares a %s", o.Path, v.kind, shortRaw(v), o.kind)
	}
	switch o.kind {
	case kindNumber:
		x, err := strconv.ParseFloat(string(v.raw), 64)
		if err != nil {
			return false, fmt.Errorf("%s: %v", o.Path, err)
		}
		switch o.Op {
		case "=":
			return x == o.num, nil
		case "!=":
			return x != o.num, nil
		case "<":
			return x < o.num, nil
		case "<=":
			return x <= o.num, nil
		case ">":
			return x > o.num, nil
		default:
			return x >= o.num, nil
		}
	}
	eq := string(v.raw) == o.Value
	if o.Op == "!=" {
		return !eq, nil
	}
	return eq, nil
}

func shortRaw(v value) string {
	s := string(v.raw)
	if v.kind == kindString {
		s = strconv.Quote(s)
	}
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return s
}

// Outcomes are the sessions' outcomes under an expression: Succeeded says,
// for every session whose records carry the field, whether the session
// succeeded; the sessions without it are not in the map.
type Outcomes struct {
	Expr      string
	Succeeded map[string]bool
}

// SessionOutcomes reads the inputs again, as Read read them (opt must be the
// options Read was given), and tests each session's value of o's field: the
// first value, in input order, of the session's records that carry it (not
// null). Its errors are *OutcomeError when no record carries the field, or a
// value's type is not the one o compares (naming the file and line); a
// session whose records do not carry the field is left out of the map.
func SessionOutcomes(inputs []Input, opt ReadOptions, o *Outcome) (*Outcomes, error) {
	x, err := newExtractor([]string{o.Path})
	if err != nil {
		return nil, &OutcomeError{Expr: o.Expr, Msg: err.Error()}
	}
	out := &Outcomes{Expr: o.Expr, Succeeded: map[string]bool{}}
	vals := make([]value, 1)
	var bad error
	err = rereadRecords(inputs, opt, func(fi, _, at int, l []byte, r *rec) bool {
		if _, done := out.Succeeded[r.session]; done {
			return true
		}
		if err := x.extract(l, vals); err != nil {
			// A line the read took, whose outcome is ambiguous (given
			// twice), is an error, as an outcome that is no value is.
			var ae *ambiguousError
			if errors.As(err, &ae) {
				bad = &OutcomeError{Expr: o.Expr, Msg: fmt.Sprintf("%s:%d: %v", inputs[fi].Name, at, err)}
				return false
			}
			return true
		}
		if k := vals[0].kind; k == kindMissing || k == kindNull {
			return true
		}
		ok, err := o.test(vals[0])
		if err != nil {
			bad = &OutcomeError{Expr: o.Expr, Msg: fmt.Sprintf("%s:%d: %v", inputs[fi].Name, at, err)}
			return false
		}
		out.Succeeded[strings.Clone(r.session)] = ok
		return true
	})
	if err != nil {
		return nil, err
	}
	if bad != nil {
		return nil, bad
	}
	if len(out.Succeeded) == 0 {
		return nil, &OutcomeError{Expr: o.Expr, Msg: fmt.Sprintf("no record has the field %s", o.Path)}
	}
	return out, nil
}

// OutcomeTally counts sessions by outcome per state and per transition of
// a model: Log over every session, States by state id, Transitions by
// their key, and for each, up to the examples asked of the failed sessions
// through it (the first by id).
type OutcomeTally struct {
	Expr        string
	Log         automaton.Outcome
	States      map[string]*ItemOutcome
	Transitions map[automaton.EdgeRef]*ItemOutcome
}

// ItemOutcome is a state's or a transition's sessions by outcome, and
// examples of its failed sessions, sorted by id.
type ItemOutcome struct {
	automaton.Outcome
	FailedExamples []string
}

// TallyOutcomes walks every session of lg through m, as check walks it,
// and counts, per state and transition, the distinct sessions that passed
// through it by their outcome in outs (a session outs does not name counts
// as Unknown). A session that leaves the model is counted up to the move it
// leaves at. Each item keeps up to examples failed session ids.
func TallyOutcomes(m *automaton.Model, lg *Log, outs *Outcomes, examples int) *OutcomeTally {
	t := &OutcomeTally{Expr: outs.Expr, States: map[string]*ItemOutcome{}, Transitions: map[automaton.EdgeRef]*ItemOutcome{}}
	add := func(it *ItemOutcome, id string, ok, known bool) {
		switch {
		case !known:
			it.Unknown++
		case ok:
			it.Sessions++
			it.Succeeded++
		default:
			it.Sessions++
			if len(it.FailedExamples) < examples {
				it.FailedExamples = append(it.FailedExamples, id)
			}
		}
	}
	var buf []automaton.Move
	seenS := map[string]bool{}
	seenT := map[automaton.EdgeRef]bool{}
	for si := range lg.Sessions {
		s := &lg.Sessions[si]
		ok, known := outs.Succeeded[s.ID]
		lit := &ItemOutcome{Outcome: t.Log}
		add(lit, s.ID, ok, known)
		t.Log = lit.Outcome
		clear(seenS)
		clear(seenT)
		buf = lg.AppendMoves(buf[:0], s)
		at := automaton.StartID
		seenS[at] = true
		for _, mv := range buf {
			tr := m.Next(at, mv)
			if tr == nil {
				break
			}
			seenT[automaton.EdgeRef{From: tr.From, Event: tr.Event, To: tr.To}] = true
			seenS[tr.To] = true
			at = tr.To
		}
		for id := range seenS {
			it := t.States[id]
			if it == nil {
				it = &ItemOutcome{}
				t.States[id] = it
			}
			add(it, s.ID, ok, known)
		}
		for e := range seenT {
			it := t.Transitions[e]
			if it == nil {
				it = &ItemOutcome{}
				t.Transitions[e] = it
			}
			add(it, s.ID, ok, known)
		}
	}
	return t
}

// Apply stores the tally in m: Params.Outcome, Source.Outcome, and the
// Outcome of every state and transition (zero counts for those no session
// passed through). The digest does not change.
func (t *OutcomeTally) Apply(m *automaton.Model) {
	m.Params.Outcome = t.Expr
	lo := t.Log
	m.Source.Outcome = &lo
	for i := range m.States {
		o := automaton.Outcome{}
		if it := t.States[m.States[i].ID]; it != nil {
			o = it.Outcome
		}
		m.States[i].Outcome = &o
	}
	for i := range m.Transitions {
		tr := &m.Transitions[i]
		o := automaton.Outcome{}
		if it := t.Transitions[automaton.EdgeRef{From: tr.From, Event: tr.Event, To: tr.To}]; it != nil {
			o = it.Outcome
		}
		tr.Outcome = &o
	}
}

// TallyFromModel is the tally a model built with an outcome stores (see
// Apply), without examples; nil when m has none.
func TallyFromModel(m *automaton.Model) *OutcomeTally {
	if m.Params.Outcome == "" || m.Source.Outcome == nil {
		return nil
	}
	t := &OutcomeTally{Expr: m.Params.Outcome, Log: *m.Source.Outcome, States: map[string]*ItemOutcome{}, Transitions: map[automaton.EdgeRef]*ItemOutcome{}}
	for _, s := range m.States {
		if s.Outcome != nil {
			t.States[s.ID] = &ItemOutcome{Outcome: *s.Outcome}
		}
	}
	for _, tr := range m.Transitions {
		if tr.Outcome != nil {
			t.Transitions[automaton.EdgeRef{From: tr.From, Event: tr.Event, To: tr.To}] = &ItemOutcome{Outcome: *tr.Outcome}
		}
	}
	return t
}
