package mine

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Outcome is a parsed outcome expression: a record field, a comparison and
// a value, such as attrs.reward>=1, attrs.termination=user_stop or
// attrs.status!=error, that says whether a session succeeded.
//
// The operators are = (also ==), !=, <, <=, > and >=. A value that parses
// as a number compares with a JSON number, numerically; true and false
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
	switch x, err := strconv.ParseFloat(v, 64); {
	case !quoted && err == nil:
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
	err = rereadRecords(inputs, opt, func(fi, line int, l []byte, r *rec) bool {
		if _, done := out.Succeeded[r.session]; done || x.extract(l, vals) != nil {
			return true
		}
		if k := vals[0].kind; k == kindMissing || k == kindNull {
			return true
		}
		ok, err := o.test(vals[0])
		if err != nil {
			bad = &OutcomeError{Expr: o.Expr, Msg: fmt.Sprintf("%s:%d: %v", inputs[fi].Name, line, err)}
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
