package mine

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	json "github.com/goccy/go-json"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/internal/jsondup"
)

// Rules label records with task stages. Rules are tried in order and the first
// whose every field matches wins. A rule names a state (State, a template that
// may use the captures of its patterns), or drops the record (Drop). Fold
// merges consecutive records that get the same state into one visit; Detour
// marks an off-topic state: a run of detour records between two visits of the
// same stage is taken out of the flow and becomes a self-loop on that stage
// (event "detour:<state>"), so that small talk does not turn into a hub that
// connects every stage. A detour that does not return to the stage it left
// stays in the flow as a state of its own.
type Rules struct {
	Rules []Rule `json:"rules"`
	// Unmatched says what happens to a record no rule matches: "keep" (the
	// default: its node is its state), "drop", or "error" (the build fails,
	// naming the record's file and line).
	Unmatched string `json:"unmatched,omitempty"`

	raw []byte
}

// Rule is one labelling rule; see Rules.
type Rule struct {
	Name string `json:"name,omitempty"`
	// Why is the reason for the rule, for its readers (fsmine labels
	// suggest writes one per rule); labelling does not read it.
	Why    string     `json:"why,omitempty"`
	Match  matchOrder `json:"match"`
	State  string     `json:"state,omitempty"`
	Drop   bool       `json:"drop,omitempty"`
	Fold   bool       `json:"fold,omitempty"`
	Detour bool       `json:"detour,omitempty"`

	fields   []string // dotted paths, in the order written
	constant bool     // State has no capture references
	res      []*regexp.Regexp
	tmpl     []tmplPart
}

// action is what labelling does with a record.
type action uint8

const (
	actKeep action = iota
	actDrop
)

// matchOrder is a rule's "match" object with the order of its keys kept, so
// that captures number across fields in the order they are written.
type matchOrder []matchField

type matchField struct{ Path, Pattern string }

func (m *matchOrder) UnmarshalJSON(b []byte) error {
	d := json.NewDecoder(bytes.NewReader(b))
	tok, err := d.Token()
	if err != nil {
		return err
	}
	if tok != json.Delim('{') {
		return errors.New(`"match" must be an object of field paths to regular expressions`)
	}
	for d.More() {
		k, err := d.Token()
		if err != nil {
			return err
		}
		var pat string
		if err := d.Decode(&pat); err != nil {
			return fmt.Errorf("match %q: the pattern must be a string", k)
		}
		*m = append(*m, matchField{Path: k.(string), Pattern: pat})
	}
	_, err = d.Token()
	return err
}

// key is m's conditions in an order of their own: two matches with the
// same key match the same records, whatever the order they are written in.
func (m matchOrder) key() string {
	pairs := make([]string, len(m))
	for i, f := range m {
		pairs[i] = f.Path + "\x00" + f.Pattern
	}
	slices.Sort(pairs)
	return strings.Join(pairs, "\x00\x00")
}

func (m matchOrder) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, f := range m {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, _ := json.Marshal(f.Path)
		v, _ := json.Marshal(f.Pattern)
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// ParseRules decodes and compiles a rules file. Errors name the offending
// rule by number (from 1) and name.
func ParseRules(data []byte) (*Rules, error) { return parseRules(data, true) }

// ParseStoredRules is ParseRules for rules a model or a partial result
// holds, which an earlier fsmine may have taken: it reads them as that
// fsmine did, a rule whose match repeats an earlier one's (never applied)
// and text a decoder reads as U+FFFD included, so that a model mined with
// them still checks its logs.
func ParseStoredRules(data []byte) (*Rules, error) { return parseRules(data, false) }

// parseRules is ParseRules; strict refuses what a rules file should not
// say but an earlier fsmine took (see ParseStoredRules).
func parseRules(data []byte, strict bool) (*Rules, error) {
	var rs Rules
	// A key given twice, or in other case than its field's ("Match"): the
	// decoder would keep the last value, or (a rule's "match") join both.
	if err := jsondup.Check(data); err != nil {
		return nil, fmt.Errorf("label rules: %w", err)
	}
	if err := jsondup.KnownKeys(data, Rules{}); err != nil {
		return nil, fmt.Errorf("label rules: %w", err)
	}
	// The decoder would read them as U+FFFD: a pattern would match
	// other text than written.
	if err := jsondup.Text(data); strict && err != nil {
		return nil, fmt.Errorf("label rules: %w", err)
	}
	// null would decode as no rules, and be stored as null: a file of
	// rules is an object.
	if t := bytes.TrimPrefix(bytes.TrimSpace(data), []byte("\uFEFF")); strict && (len(t) == 0 || t[0] != '{') {
		return nil, fmt.Errorf(`label rules: want a JSON object, {"rules": [...]}`)
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(&rs); err != nil {
		return nil, fmt.Errorf("label rules: %w", jsondup.Position(data, err))
	}
	switch rs.Unmatched {
	case "":
		rs.Unmatched = "keep"
	case "keep", "drop", "error":
	default:
		return nil, fmt.Errorf(`"unmatched" is %q, want "keep", "drop" or "error"`, rs.Unmatched)
	}
	matches := make(map[string]int, len(rs.Rules)) // a rule's match, as matchKey gives it, to its number
	for i := range rs.Rules {
		r := &rs.Rules[i]
		where := fmt.Sprintf("rule %d", i+1)
		if r.Name != "" {
			where += fmt.Sprintf(" (%q)", r.Name)
		}
		if err := r.compile(); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		// ${name} takes the last group so named: the others are lost.
		if n := r.twiceNamed(); n != "" && strict {
			return nil, fmt.Errorf("%s: two capture groups are named %q", where, n)
		}
		// The first rule that matches wins: a later one with the same
		// conditions never would.
		k := r.Match.key()
		if first, ok := matches[k]; ok && strict {
			return nil, fmt.Errorf("%s: its \"match\" is rule %d's, which takes every record it would", where, first)
		}
		matches[k] = i + 1
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, data); err != nil {
		return nil, err
	}
	rs.raw = buf.Bytes()
	return &rs, nil
}

func (r *Rule) compile() error {
	if len(r.Match) == 0 {
		return errors.New(`"match" is empty: name at least one field`)
	}
	switch {
	case r.Drop && r.State != "":
		return errors.New(`has both "state" and "drop"`)
	case !r.Drop && r.State == "":
		return errors.New(`needs "state" or "drop": true`)
	case r.Drop && (r.Fold || r.Detour):
		return errors.New(`"fold" and "detour" go with "state", not "drop"`)
	}
	ncap := 0
	names := map[string]bool{}
	for _, f := range r.Match {
		if f.Path == "" || strings.HasPrefix(f.Path, ".") || strings.HasSuffix(f.Path, ".") || strings.Contains(f.Path, "..") {
			return fmt.Errorf("invalid field path %q", f.Path)
		}
		re, err := regexp.Compile(f.Pattern)
		if err != nil {
			return fmt.Errorf("field %q: %w", f.Path, err)
		}
		r.fields = append(r.fields, f.Path)
		r.res = append(r.res, re)
		ncap += re.NumSubexp()
		for _, n := range re.SubexpNames() {
			if n != "" {
				names[n] = true
			}
		}
	}
	if r.State != "" {
		t, err := parseTemplate(r.State, ncap, names)
		if err != nil {
			return fmt.Errorf("state %q: %w", r.State, err)
		}
		r.tmpl = t
		r.constant = len(t) == 1 && !t[0].ref
		if isReserved(r.State) {
			return fmt.Errorf("state %q is reserved", r.State)
		}
	}
	return nil
}

func isReserved(label string) bool {
	return label == automaton.StartID || label == automaton.EndID
}

// tmplPart is a literal or a reference to a capture, by number (1-based,
// across the rule's fields in order; 0 is the whole match of the first field)
// or by name.
type tmplPart struct {
	lit  string
	num  int
	name string
	ref  bool
}

func parseTemplate(s string, ncap int, names map[string]bool) ([]tmplPart, error) {
	var parts []tmplPart
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			parts = append(parts, tmplPart{lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' {
			lit.WriteByte(c)
			continue
		}
		if i+1 < len(s) && s[i+1] == '$' {
			lit.WriteByte('$')
			i++
			continue
		}
		var ref string
		switch {
		case i+1 < len(s) && s[i+1] == '{':
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				return nil, errors.New("unclosed ${")
			}
			ref = s[i+2 : i+2+end]
			i += 2 + end
		default:
			j := i + 1
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			if j == i+1 {
				return nil, errors.New(`"$" must be followed by a capture number or {name}; write "$$" for a dollar`)
			}
			ref = s[i+1 : j]
			i = j - 1
		}
		flush()
		if n, err := strconv.Atoi(ref); err == nil {
			if n > ncap {
				return nil, fmt.Errorf("$%d: the patterns have %d capture groups", n, ncap)
			}
			parts = append(parts, tmplPart{num: n, ref: true})
		} else {
			if !names[ref] {
				return nil, fmt.Errorf("${%s}: no capture group has that name", ref)
			}
			parts = append(parts, tmplPart{name: ref, ref: true})
		}
	}
	flush()
	return parts, nil
}

// Paths returns the record fields the rules read, in first-use order.
func (rs *Rules) Paths() []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rs.Rules {
		for _, p := range r.fields {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// Raw returns the compacted rules file as given.
func (rs *Rules) Raw() []byte { return rs.raw }

// SameLabelling says whether the rules files a and b (as Raw gives them; nil
// or empty for none) label every record alike: the same rules in the same
// order and the same Unmatched, their names and reasons aside, which
// labelling does not read. Files that do not parse are alike only byte for
// byte.
func SameLabelling(a, b []byte) bool {
	a, b = bytes.TrimSpace(a), bytes.TrimSpace(b)
	if bytes.Equal(a, b) {
		return true
	}
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	ra, err := ParseStoredRules(a)
	if err != nil {
		return false
	}
	rb, err := ParseStoredRules(b)
	if err != nil || ra.Unmatched != rb.Unmatched || len(ra.Rules) != len(rb.Rules) {
		return false
	}
	for i := range ra.Rules {
		x, y := &ra.Rules[i], &rb.Rules[i]
		if !slices.Equal(x.Match, y.Match) || x.State != y.State || x.Drop != y.Drop || x.Fold != y.Fold || x.Detour != y.Detour {
			return false
		}
	}
	return true
}

// errUnmatched is returned by apply when no rule matches and Unmatched is
// "error".
var errUnmatched = errors.New("no label rule matches the record")

// labelResult is the outcome of labelling one record.
type labelResult struct {
	label  string
	act    action
	fold   bool
	detour bool
}

// apply labels one record. get returns a field's value as text and whether
// the record has it; node is the record's node.
func (rs *Rules) apply(node string, get func(path string) (string, bool)) (labelResult, error) {
	if rs == nil {
		return labelResult{label: node}, nil
	}
	var caps []string
	var named map[string]string
next:
	for _, r := range rs.Rules {
		caps = caps[:0]
		for k := range named {
			delete(named, k)
		}
		for i, p := range r.fields {
			v, ok := get(p)
			if !ok {
				continue next
			}
			m := r.res[i].FindStringSubmatch(v)
			if m == nil {
				continue next
			}
			if len(r.tmpl) == 0 {
				continue
			}
			if i == 0 {
				caps = append(caps, m[0])
			}
			caps = append(caps, m[1:]...)
			for j, n := range r.res[i].SubexpNames() {
				if n != "" {
					if named == nil {
						named = map[string]string{}
					}
					named[n] = m[j]
				}
			}
		}
		if r.Drop {
			return labelResult{act: actDrop}, nil
		}
		if r.constant {
			return labelResult{label: r.tmpl[0].lit, fold: r.Fold, detour: r.Detour}, nil
		}
		var b strings.Builder
		for _, t := range r.tmpl {
			switch {
			case !t.ref:
				b.WriteString(t.lit)
			case t.name != "":
				b.WriteString(named[t.name])
			case t.num < len(caps):
				b.WriteString(caps[t.num])
			}
		}
		label := b.String()
		if !utf8.ValidString(label) {
			// A capture of a field's bytes that are not UTF-8 (a node is
			// checked as it is read; other fields are not).
			return labelResult{}, bad("label rules give node %q the state %q, which is not valid UTF-8", node, label)
		}
		return labelResult{label: label, fold: r.Fold, detour: r.Detour}, nil
	}
	switch rs.Unmatched {
	case "drop":
		return labelResult{act: actDrop}, nil
	case "error":
		return labelResult{}, errUnmatched
	}
	return labelResult{label: node}, nil
}

// twiceNamed is the first name two capture groups of r's patterns share,
// "" when none do.
func (r *Rule) twiceNamed() string {
	seen := map[string]bool{}
	for _, re := range r.res {
		for _, n := range re.SubexpNames() {
			if n == "" {
				continue
			}
			if seen[n] {
				return n
			}
			seen[n] = true
		}
	}
	return ""
}
