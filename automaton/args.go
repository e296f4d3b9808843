package automaton

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	json "github.com/goccy/go-json"
)

// Deviation kinds of a tool call's arguments (see ArgRule).
const (
	// KindUnseenValue: an argument that took one of a few stable values in
	// every session the model was mined from took another.
	KindUnseenValue = "unseen_value"
	// KindValueWithoutSource: an argument whose value always appeared
	// earlier in the session (the user's words, a tool's answer) took a
	// value that did not.
	KindValueWithoutSource = "value_without_source"
)

// ArgRule is evidence about one argument of one tool, learned from the
// sessions a model was mined from: Kind KindUnseenValue says the argument
// took only the values Values hashes (each in at least two sessions);
// KindValueWithoutSource says every value it took had appeared earlier in
// its session, in the text of a step labelled one of From (any step when
// From is empty): a recipient always copied from the user's words, and
// never from a web page a tool read, has From [user_msg]. Tool is the label of the step that made the call; Arg the
// argument's name, dotted for nested objects and ending in "[]" for the
// elements of an array. Steps and Sessions are the calls and sessions the
// rule was learned from (its support).
//
// Values are never kept: Values holds ArgHash of each value, sorted, so
// that a model file can be shared without the accounts or addresses it
// was mined from. A hash of a value from a small set can be found by trying
// candidates; treat the model as you would the logs where that matters.
type ArgRule struct {
	Tool     string   `json:"tool"`
	Arg      string   `json:"arg"`
	Kind     string   `json:"kind"`
	Steps    int      `json:"steps"`
	Sessions int      `json:"sessions"`
	Values   []string `json:"values,omitempty"`
	From     []string `json:"from,omitempty"`
}

// ArgHash is the hash a model keeps of an argument's value: the first 16
// hex digits of the SHA-256 of tool, argument and value, so that the same
// value of two arguments hashes differently.
func ArgHash(tool, arg, value string) string {
	k := argHashKey(tool, arg, value)
	return hex.EncodeToString(k[:])
}

// argHashKey is ArgHash's bytes, without allocating for a call of the
// usual size.
func argHashKey(tool, arg, value string) [8]byte {
	var buf [2048]byte
	b := append(buf[:0], tool...)
	b = append(b, 0)
	b = append(b, arg...)
	b = append(b, 0)
	b = append(b, value...)
	sum := sha256.Sum256(b)
	return [8]byte(sum[:8])
}

// Arg is one argument value of a tool call: Name as ArgRule.Arg names it,
// Value the text of a string or the JSON text of a number or bool.
type Arg struct {
	Name  string
	Value string
}

// Limits that keep what a session holds for its arguments bounded whatever
// a hostile log or caller sends.
const (
	// MaxArgValue is the longest value, in bytes, the rules look at; a
	// longer value is judged by its first MaxArgValue bytes.
	MaxArgValue = 1 << 10
	// MaxSeenTokens is the most distinct tokens a session remembers as
	// sources; later ones are not remembered (a value from them is then
	// without source).
	MaxSeenTokens = 1 << 14
	// MaxArgLeaves and MaxArgDepth bound the values FlattenArgs gives
	// for one call, and their nesting.
	MaxArgLeaves = 64
	MaxArgDepth  = 4
	// maxTokenLen bounds one token.
	maxTokenLen = 256
)

// SortArgRules orders rules by tool, argument and kind.
func SortArgRules(rs []ArgRule) {
	sort.Slice(rs, func(i, j int) bool {
		a, b := rs[i], rs[j]
		if a.Tool != b.Tool {
			return a.Tool < b.Tool
		}
		if a.Arg != b.Arg {
			return a.Arg < b.Arg
		}
		return a.Kind < b.Kind
	})
}

// argDigestLines gives the digest's lines of the model's argument rules.
func argDigestLines(d *digester, rs []ArgRule) {
	for _, r := range rs {
		d.line(append([]string{"arg", r.Tool, r.Arg, r.Kind, strconv.Itoa(r.Steps), strconv.Itoa(r.Sessions)}, r.Values...)...)
		if len(r.From) > 0 {
			d.line(append([]string{"arg_from"}, r.From...)...)
		}
	}
}

// Tokens calls fn with each token of text, lower-cased: a run of letters,
// digits and the characters _-@.#+/: without the punctuation (.:/-) at its
// ends, at most 256 bytes (longer runs are cut). The tokens of a value and
// of the text it was copied from match however the text wraps it: a
// sentence, a JSON document, a list.
func Tokens(text string, fn func(tok string)) {
	TokenSpans(text, func(_, tok string) { fn(tok) })
}

// TokenSpans is Tokens with each token's run as text has it: the run, alone
// or among others apart by spaces, gives the same token again.
func TokenSpans(text string, fn func(run, tok string)) {
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		run := text[start:end]
		tok := strings.Trim(run, ".:/-")
		start = -1
		if tok == "" {
			return
		}
		if len(tok) > maxTokenLen {
			tok = tok[:maxTokenLen]
		}
		fn(run, strings.ToLower(tok))
	}
	for i, r := range text {
		if tokenRune(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		flush(i)
	}
	flush(len(text))
}

func tokenRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.IndexByte("_-@.#+/:", byte(r)) >= 0
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// ArgWatch remembers the text that entered one session, for judging its
// calls against argument rules (ArgWatch.Call): it keeps hashes of at most
// MaxSeenTokens tokens, each with the labels of the steps whose text had
// it (the first 63 labels of the session a bit each, later ones one bit
// together), never the text. It is not safe for concurrent use.
type ArgWatch struct {
	labels   map[string]uint64
	seen     map[uint64]uint64 // token hash -> the bits of the labels whose text had it
	overflow bool              // a label past the first 63 has text
}

// ArgRules are a model's argument rules prepared for lookups.
type ArgRules struct {
	byKey map[argKey]*argRule
	tools map[string]bool
}

const otherBit = uint64(1) << 63

type argKey struct{ tool, arg string }

type argRule struct {
	values  map[[8]byte]bool // hashes; nil without a value rule
	sourced bool             // a KindValueWithoutSource rule
	from    []string         // the labels a source must have; nil for any
	rules   [2]*ArgRule      // the value rule, the source rule
}

// NewArgRules prepares rules; nil when there are none.
func NewArgRules(rs []ArgRule) *ArgRules {
	if len(rs) == 0 {
		return nil
	}
	a := &ArgRules{byKey: map[argKey]*argRule{}, tools: map[string]bool{}}
	for i := range rs {
		r := &rs[i]
		k := argKey{r.Tool, r.Arg}
		ar := a.byKey[k]
		if ar == nil {
			ar = &argRule{}
			a.byKey[k] = ar
		}
		a.tools[r.Tool] = true
		switch r.Kind {
		case KindUnseenValue:
			ar.values = make(map[[8]byte]bool, len(r.Values))
			for _, v := range r.Values {
				var k [8]byte
				hex.Decode(k[:], []byte(v)) // 16 hex digits: validArgRules checks them
				ar.values[k] = true
			}
			ar.rules[0] = r
		case KindValueWithoutSource:
			ar.sourced, ar.from = true, r.From
			ar.rules[1] = r
		}
	}
	return a
}

// NewArgWatch starts the watch of one session.
func NewArgWatch() *ArgWatch {
	return &ArgWatch{labels: map[string]uint64{}, seen: map[uint64]uint64{}}
}

// See records the tokens of text, brought in by a step labelled label, as
// sources for the session's later calls.
func (w *ArgWatch) See(label, text string) {
	bit, ok := w.labels[label]
	if !ok {
		if len(w.labels) < 63 {
			bit = uint64(1) << len(w.labels)
			w.labels[label] = bit
		} else {
			bit, w.overflow = otherBit, true
		}
	}
	Tokens(text, func(tok string) {
		h := tokenHash(tok)
		if old, ok := w.seen[h]; ok || len(w.seen) < MaxSeenTokens {
			w.seen[h] = old | bit
		}
	})
}

// Has reports whether the watch keeps text under label.
func (w *ArgWatch) Has(label string) bool {
	_, ok := w.labels[label]
	return ok
}

// Relabel gives the text seen under each label that rename maps to
// another name that name instead (a guard's stand-in for a label that a
// reloaded model has), as if it had been seen under it; where the watch
// has the name already, the text counts under both.
func (w *ArgWatch) Relabel(rename func(label string) (string, bool)) {
	for _, from := range slices.Sorted(maps.Keys(w.labels)) {
		to, ok := rename(from)
		if !ok || to == from {
			continue
		}
		bit := w.labels[from]
		have, ok := w.labels[to]
		if !ok {
			// The bit moves to the name: no bit is freed or taken.
			delete(w.labels, from)
			w.labels[to] = bit
			continue
		}
		// Both: from keeps its bit (a freed bit would be given again
		// while tokens still carry it), and its tokens gain to's.
		for h, b := range w.seen {
			if b&bit != 0 {
				w.seen[h] = b | have
			}
		}
	}
}

// mask gives the bits of labels; nil labels are every bit.
func (w *ArgWatch) mask(labels []string) uint64 {
	if labels == nil {
		return ^uint64(0)
	}
	var m uint64
	for _, l := range labels {
		if b, ok := w.labels[l]; ok {
			m |= b
		} else if w.overflow {
			m |= otherBit
		}
	}
	return m
}

// sourced reports whether every token of value was seen before in the text
// of a step whose label has one of the bits from; a value without tokens
// counts as sourced.
func (w *ArgWatch) sourced(value string, from uint64) bool {
	ok := true
	Tokens(value, func(tok string) {
		if w.seen[tokenHash(tok)]&from == 0 {
			ok = false
		}
	})
	return ok
}

// ArgDeviation is an argument of a call that breaks a rule. It names the
// argument and the rule, never the value.
type ArgDeviation struct {
	Kind string   `json:"kind"`
	Tool string   `json:"tool"`
	Arg  string   `json:"arg"`
	Rule *ArgRule `json:"-"`
}

// Call judges the arguments of a call of tool by rules r and returns the
// first argument, in the order given, that breaks one (a value rule before
// a source rule), or nil; nil rules break none. The call's own arguments
// are no source for it.
func (w *ArgWatch) Call(r *ArgRules, tool string, args []Arg) *ArgDeviation {
	if r == nil || !r.tools[tool] {
		return nil
	}
	for _, a := range args {
		ar := r.byKey[argKey{tool, a.Name}]
		if ar == nil {
			continue
		}
		v := a.Value
		if len(v) > MaxArgValue {
			v = v[:MaxArgValue]
		}
		if ar.values != nil && !ar.values[argHashKey(tool, a.Name, v)] {
			return &ArgDeviation{Kind: KindUnseenValue, Tool: tool, Arg: a.Name, Rule: ar.rules[0]}
		}
		if ar.sourced && !w.sourced(v, w.mask(ar.from)) {
			return &ArgDeviation{Kind: KindValueWithoutSource, Tool: tool, Arg: a.Name, Rule: ar.rules[1]}
		}
	}
	return nil
}

// tokenHash is FNV-1a, 64 bits: the session keeps 8 bytes a token.
func tokenHash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// validArgRules checks a model's argument rules: a tool some state is
// labelled (labels), one rule of a kind per tool and argument, a known
// kind, support at least one session, value hashes only on value rules,
// each 16 lower-case hex digits, sorted and unique.
func validArgRules(rs []ArgRule, labels map[string]bool) error {
	type key struct{ tool, arg, kind string }
	seen := make(map[key]int, len(rs))
	for i, r := range rs {
		if j, dup := seen[key{r.Tool, r.Arg, r.Kind}]; dup {
			return fmt.Errorf("invalid model: args[%d] and args[%d] are both %s rules of %s's %q", j, i, r.Kind, r.Tool, r.Arg)
		}
		seen[key{r.Tool, r.Arg, r.Kind}] = i
		switch {
		case r.Tool != "" && !labels[r.Tool]:
			return fmt.Errorf("invalid model: args[%d] is a rule of tool %q, which no state of the model is labelled", i, r.Tool)
		case r.Tool == "" || r.Arg == "":
			return fmt.Errorf("invalid model: args[%d] has no tool or no arg", i)
		case r.Kind != KindUnseenValue && r.Kind != KindValueWithoutSource:
			return fmt.Errorf("invalid model: args[%d] has kind %q, want %s or %s", i, r.Kind, KindUnseenValue, KindValueWithoutSource)
		case r.Sessions < 1 || r.Steps < r.Sessions:
			return fmt.Errorf("invalid model: args[%d] has %d steps of %d sessions, want at least one session and a step each", i, r.Steps, r.Sessions)
		case r.Kind == KindUnseenValue && len(r.Values) == 0:
			return fmt.Errorf("invalid model: args[%d] is an %s rule without values", i, r.Kind)
		case r.Kind == KindValueWithoutSource && len(r.Values) > 0:
			return fmt.Errorf("invalid model: args[%d] is a %s rule with values", i, r.Kind)
		}
		for j, v := range r.Values {
			if len(v) != 16 || strings.Trim(v, "0123456789abcdef") != "" {
				return fmt.Errorf("invalid model: args[%d] has value %q, want 16 lower-case hex digits (fsmine keeps hashes, not values)", i, v)
			}
			if j > 0 && r.Values[j-1] >= v {
				return fmt.Errorf("invalid model: args[%d]: values are not sorted and unique at values[%d]", i, j)
			}
		}
	}
	return nil
}

// FlattenArgs turns a call's arguments into named values: an object's
// members by name, nested objects as name.member, the elements of an array
// as name[]; strings as their text, numbers as their JSON text. Bools and
// nulls are left out (they are no value a rule could hold to a source),
// and so is anything past MaxArgDepth levels or MaxArgLeaves values;
// values are cut to MaxArgValue bytes. Its error is the JSON decoder's.
// Arguments that are not an object (a bare string) are one value named "".
func FlattenArgs(raw []byte) ([]Arg, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	var out []Arg
	var walk func(name string, v any, depth int)
	walk = func(name string, v any, depth int) {
		if len(out) >= MaxArgLeaves || depth > MaxArgDepth {
			return
		}
		switch x := v.(type) {
		case string:
			out = append(out, Arg{Name: name, Value: clipString(x, MaxArgValue)})
		case json.Number:
			out = append(out, Arg{Name: name, Value: clipString(string(x), MaxArgValue)})
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				n := k
				if name != "" {
					n = name + "." + k
				}
				walk(n, x[k], depth+1)
			}
		case []any:
			for _, e := range x {
				walk(name+"[]", e, depth+1)
			}
		}
	}
	walk("", v, 0)
	return out, nil
}

// clipString cuts s to at most n bytes.
func clipString(s string, n int) string {
	if len(s) > n {
		return strings.Clone(s[:n]) // not the whole value's memory
	}
	return s
}

// argChanges returns the argument rules of new that old has not and those
// of old that new has not, in SortArgRules order.
func argChanges(old, new []ArgRule) (added, removed []ArgRule) {
	k := func(r ArgRule) string {
		return strings.Join([]string{r.Tool, r.Arg, r.Kind, strings.Join(r.Values, ","), strings.Join(r.From, "\x00")}, "\x01")
	}
	in := func(rs []ArgRule) map[string]bool {
		m := make(map[string]bool, len(rs))
		for _, r := range rs {
			m[k(r)] = true
		}
		return m
	}
	o, n := in(old), in(new)
	for _, r := range new {
		if !o[k(r)] {
			added = append(added, r)
		}
	}
	for _, r := range old {
		if !n[k(r)] {
			removed = append(removed, r)
		}
	}
	SortArgRules(added)
	SortArgRules(removed)
	return added, removed
}

// String describes a rule for people, without its value hashes:
// send_email(to) value_without_source from user_msg.
func (r ArgRule) String() string {
	s := r.Tool + "(" + r.Arg + ") " + r.Kind
	switch {
	case len(r.Values) == 1:
		s += " of 1 value"
	case len(r.Values) > 1:
		s += " of " + strconv.Itoa(len(r.Values)) + " values"
	case len(r.From) > 0:
		s += " from " + strings.Join(r.From, " or ")
	}
	return s
}
