package mine

// Evidence for the arguments of tool calls. A record of a call carries its
// arguments in attrs.args (an object: name -> value, as the tau importer
// writes them), and a record that brings text into the session carries it
// in attrs.seen (a string or a list of strings: the user's words, the
// tool's answer; the tau importer writes them with ImportOptions.Seen). An
// argument earns a rule from the sessions of a log when its values are few
// and each recurs (unseen_value), or when every value it took had appeared
// earlier in its session (value_without_source); see LearnArgs.

import (
	"bytes"
	"cmp"
	"fmt"
	"github.com/fsmine/fsmine/mine/formats"
	"slices"
	"sort"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/fsmine/fsmine/automaton"
)

// ArgSession is the calls of one session and the text that entered it, in
// step order.
type ArgSession struct {
	ID    string
	Steps []ArgStep
}

// ArgStep is one record of an ArgSession: the label of its step, the
// arguments of its call (none for a step that is no call) and the text it
// brought into the session, a source for later steps. A record the label
// rules drop is no step of the map, but the text it brought entered the
// session all the same (a user's turn with the email a later call uses):
// it is kept for that text alone, labelled with its node, its call not
// judged.
type ArgStep struct {
	Label string
	Args  []automaton.Arg
	Seen  []string

	step     int64
	ts       int64
	hasStep  bool
	fileLine int
	file     int
	event    string
	// flags are as Read keeps them (hashFlags): whether the rules drop,
	// fold or detour the record, and 24 bits of its line's hash, to find
	// duplicates as Read does.
	flags uint32
	visit int // the visit it belongs to, in order (see sortArgSteps)
}

// dropped says whether the label rules drop the record (kept for its text).
func (s *ArgStep) dropped() bool { return s.flags&rsDrop != 0 }

// Bounds on what one record gives the argument rules.
const maxSeenText = formats.MaxSeenText // bytes of attrs.seen a record

// ReadArgSessions reads the inputs again, as Read read them (opt must be the
// options Read was given), and gives every session's calls and text, in
// the order of the first record of each session. Records the label rules
// drop are kept only for their text (see ArgStep); records they fold into
// the visit before them are calls like any other. A record whose attrs.args or attrs.seen is
// not of the documented shape is an error naming the input and line. With
// opt.Session, that session alone is given (or none), but the records of
// every session are checked, so that a bad one is the same error.
func ReadArgSessions(inputs []Input, opt ReadOptions) ([]ArgSession, error) {
	want, whole, err := argTokens(inputs, opt)
	if err != nil {
		return nil, err
	}
	index := map[string]int{}
	var out []ArgSession
	// What orders each session's records, as Read orders them (see
	// sortArgSteps): over all its records, those left out here too.
	type order struct{ allStep, allTS, visits bool }
	var orders []order
	var bad error
	var probe argProbe
	err = rereadRecords(inputs, opt, func(fi, line, at int, l []byte, r *rec) bool {
		if opt.Session != "" && r.session != opt.Session {
			// Another session's record: checked as the session's own
			// are below, and not kept.
			if mayHaveKey(l, "seen") || !r.drop && mayHaveKey(l, "args") {
				if _, _, err := argFields(l, &probe); err != nil {
					bad = fmt.Errorf("%s:%d: %v", inputs[fi].Name, at, err)
					return false
				}
			}
			return true
		}
		si, ok := index[r.session]
		if !ok {
			si = len(out)
			index[r.session] = si
			out = append(out, ArgSession{ID: r.session})
			orders = append(orders, order{true, true, false})
		}
		o := &orders[si]
		o.allStep, o.allTS, o.visits = o.allStep && r.hasStep, o.allTS && r.hasTS, o.visits || !r.drop
		hasSeen := mayHaveKey(l, "seen")
		if r.drop && !hasSeen {
			return true
		}
		st := ArgStep{Label: r.label, step: r.step, ts: r.ts, hasStep: r.hasStep, fileLine: line, file: fi, event: r.event, flags: hashFlags(r)}
		if r.drop {
			st.Label = r.node
		}
		if hasSeen || mayHaveKey(l, "args") {
			var err error
			if st.Args, st.Seen, err = argFields(l, &probe); err != nil {
				bad = fmt.Errorf("%s:%d: %v", inputs[fi].Name, at, err)
				return false
			}
			if !whole[r.session] {
				st.Seen = keepTokens(st.Seen, want[r.session])
			}
			if r.drop {
				if len(st.Seen) == 0 {
					return true // no text: nothing to keep it for
				}
				st.Args = nil // no step of the map: its call is not judged
			}
		}
		out[si].Steps = append(out[si].Steps, st)
		return true
	})
	if err == nil {
		err = bad
	}
	if err != nil {
		return nil, err
	}
	// A session whose every record the rules drop is no session of the
	// log.
	kept := out[:0]
	for i := range out {
		if !orders[i].visits {
			continue
		}
		out[i].Steps = sortArgSteps(out[i].Steps, orders[i].allStep, orders[i].allTS)
		kept = append(kept, out[i])
	}
	clear(out[len(kept):])
	out = kept
	return out, nil
}

// argProbe is what a record's line is decoded into for its arguments and
// text.
type argProbe struct {
	Attrs struct {
		Args json.RawMessage `json:"args"`
		Seen json.RawMessage `json:"seen"`
	} `json:"attrs"`
}

// argFields decodes a record's line for its attrs.args, flattened, and its
// attrs.seen texts, in probe; the error says which is not of the
// documented shape.
func argFields(l []byte, probe *argProbe) (args []automaton.Arg, seen []string, err error) {
	probe.Attrs.Args, probe.Attrs.Seen = nil, nil
	if err := json.Unmarshal(l, probe); err != nil {
		return nil, nil, err
	}
	if args, err = automaton.FlattenArgs(probe.Attrs.Args); err != nil {
		return nil, nil, fmt.Errorf("attrs.args: %v", err)
	}
	if seen, err = seenTexts(probe.Attrs.Seen); err != nil {
		return nil, nil, fmt.Errorf("attrs.seen: %v", err)
	}
	return args, seen, nil
}

// argTokens reads the inputs for the tokens of each session's call
// arguments (see automaton.Tokens), by session: all of a session's text
// that the rules can look at. A record whose arguments or text cannot be
// read is passed over; ReadArgSessions reports it. whole holds the
// sessions whose text has more than automaton.MaxSeenTokens tokens: the
// watch of a session forgets tokens past that many distinct ones (as the
// guard's does), so which text was held decides, and those sessions keep
// their text whole. With opt.Session, that session's alone.
func argTokens(inputs []Input, opt ReadOptions) (want map[string]map[string]struct{}, whole map[string]bool, err error) {
	var probe struct {
		Attrs struct {
			Args json.RawMessage `json:"args"`
			Seen json.RawMessage `json:"seen"`
		} `json:"attrs"`
	}
	want, whole = map[string]map[string]struct{}{}, map[string]bool{}
	tokens := map[string]int{}
	err = rereadRecords(inputs, opt, func(_, _, _ int, l []byte, r *rec) bool {
		if opt.Session != "" && r.session != opt.Session {
			return true
		}
		// Parsed as ReadArgSessions parses them (the decoder matches
		// keys in any case: "Args" is args).
		hasSeen := mayHaveKey(l, "seen")
		if !hasSeen && !mayHaveKey(l, "args") {
			return true
		}
		probe.Attrs.Args, probe.Attrs.Seen = nil, nil
		if json.Unmarshal(l, &probe) != nil {
			return true
		}
		if texts, err := seenTexts(probe.Attrs.Seen); err == nil && !whole[r.session] {
			n := tokens[r.session]
			for _, text := range texts {
				automaton.Tokens(text, func(string) { n++ })
			}
			if n > automaton.MaxSeenTokens {
				whole[r.session] = true
				delete(tokens, r.session)
			} else {
				tokens[r.session] = n
			}
		}
		if r.drop {
			return true
		}
		args, err := automaton.FlattenArgs(probe.Attrs.Args)
		if err != nil || len(args) == 0 {
			return true
		}
		set := want[r.session]
		if set == nil {
			set = map[string]struct{}{}
			want[r.session] = set
		}
		for _, a := range args {
			automaton.Tokens(clip(a.Value, automaton.MaxArgValue), func(tok string) {
				if _, ok := set[tok]; !ok {
					set[strings.Clone(tok)] = struct{}{} // not the value's memory
				}
			})
		}
		return true
	})
	return want, whole, err
}

// mayHaveKey says whether line may have the member key (lower-case
// ASCII), as the decoder matches names: in any case (ſ folds to s), or
// escaped, so that a line is parsed whenever the decoder would find it.
// Every run between two quotes is tried; one longer than the longest
// spelling of key (6 bytes a letter, \u0061) is not key.
func mayHaveKey(line []byte, key string) bool {
	for i := 0; ; {
		j := bytes.IndexByte(line[i:], '"')
		if j < 0 {
			return false
		}
		i += j + 1
		k := bytes.IndexByte(line[i:], '"')
		if k < 0 {
			return false
		}
		seg := line[i : i+k]
		if len(seg) > 6*len(key) {
			continue
		}
		if bytes.IndexByte(seg, '\\') >= 0 {
			// Only \u spells a letter; a name that is key has no quote
			// in it, so it is always a run of its own.
			var name string
			if bytes.Contains(seg, []byte(`\u`)) && json.Unmarshal(line[i-1:i+k+1], &name) == nil && strings.EqualFold(name, key) {
				return true
			}
			continue
		}
		if bytes.EqualFold(seg, []byte(key)) {
			return true
		}
	}
}

// keepTokens cuts a record's texts to the runs of the tokens in want, each
// once a record, apart by spaces: they read as the same tokens, and a value
// that is none of the session's arguments is looked for nowhere. So a
// session holds what its calls may copy, not all the text that entered it
// (a chat turn of 50 KB for an address). A record left without text keeps
// an empty one: that it brought text under its label counts (see
// automaton.ArgWatch.See).
func keepTokens(texts []string, want map[string]struct{}) []string {
	if len(texts) == 0 {
		return nil
	}
	var b strings.Builder
	kept := map[string]bool{}
	for _, text := range texts {
		automaton.TokenSpans(text, func(run, tok string) {
			if _, ok := want[tok]; !ok || kept[tok] {
				return
			}
			kept[tok] = true
			b.WriteString(run)
			b.WriteByte(' ')
		})
	}
	return []string{b.String()}
}

// sortArgSteps orders one session's records as Read orders a session's
// (shard.visits), and drops the duplicates Read drops: by step when every
// record of it has one, else by time when every record has one, else, as
// for ties, by position in the input, which is the order steps are in.
// Each record's visit is then the visit of Read's that it is, or is folded
// or collapsed into (see argVisits): the step a finding names when records
// have no step number, as replay numbers its rows.
func sortArgSteps(steps []ArgStep, allStep, allTS bool) []ArgStep {
	slices.SortStableFunc(steps, func(x, y ArgStep) int {
		if allStep && x.step != y.step {
			return cmp.Compare(x.step, y.step)
		}
		if allTS && x.ts != y.ts {
			return cmp.Compare(x.ts, y.ts)
		}
		return 0
	})
	if allStep || allTS {
		// Exact duplicates, as Read finds them (shard.visits): within a
		// run of equal keys, the same hash and flags, step, time, label
		// and event.
		type dupKey struct {
			flags        uint32
			step, ts     int64
			label, event string
		}
		steps = dropDuplicates(steps, func(a, b *ArgStep) bool {
			return (allStep && a.step == b.step) || (!allStep && a.ts == b.ts)
		}, func(s *ArgStep) dupKey { return dupKey{s.flags, s.step, s.ts, s.Label, s.event} }, nil)
	}
	argVisits(steps)
	return steps
}

// argVisits numbers the visits of a session's ordered records as Read
// forms them (shard.visits): each record that is a step of the map is a
// visit; a run of detour records between two visits of one label is none
// (collapseDetours), and the visit after it is not folded into; a record
// the rules fold joins the visit before it when that visit's records are
// folded too and of its label (fold). A dropped record, or a collapsed
// one, belongs to the visit before it (the first, if none).
func argVisits(steps []ArgStep) {
	var idx []int // the steps of the map, in order
	for i := range steps {
		if !steps[i].dropped() {
			idx = append(idx, i)
		}
	}
	// collapsed[k]: idx[k] is a detour record collapsed into the visit
	// before it; exit[k]: the visit at idx[k] was left through a detour.
	collapsed := make([]bool, len(idx))
	exit := make([]bool, len(idx))
	top := -1 // k of the last record not collapsed
	for k := 0; k < len(idx); k++ {
		if steps[idx[k]].flags&rsDetour == 0 || top < 0 {
			top = k
			continue
		}
		j := k // the run of detour records is idx[k:j]
		for j < len(idx) && steps[idx[j]].flags&rsDetour != 0 {
			j++
		}
		// As Read tries each record of the run in turn: the rest of the
		// run collapses when the record after it has the label of the
		// last one kept, which may be a record of the run.
		for ; k < j; k++ {
			if j < len(idx) && steps[idx[j]].Label == steps[idx[top]].Label {
				for x := k; x < j; x++ {
					collapsed[x] = true
				}
				exit[top] = true
				break
			}
			top = k
		}
		k = j - 1
	}
	visit := -1
	last := -1 // k of the first record of the last visit formed
	at := make([]int, len(idx))
	for k, i := range idx {
		if collapsed[k] {
			at[k] = max(visit, 0)
			continue
		}
		st := &steps[i]
		if last >= 0 && st.flags&rsFold != 0 && steps[idx[last]].flags&rsFold != 0 && !exit[last] && steps[idx[last]].Label == st.Label {
			exit[last] = exit[k] // the visit is left as its last record is
		} else {
			visit++
			last = k
		}
		at[k] = visit
	}
	k := 0
	visit = 0
	for i := range steps {
		if k < len(idx) && idx[k] == i {
			visit = at[k]
			k++
		}
		steps[i].visit = max(visit, 0)
	}
}

// seenTexts reads attrs.seen: a string or a list of strings, at most
// maxSeenText bytes in all (the rest is cut).
func seenTexts(raw json.RawMessage) ([]string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var list []string
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		list = []string{s}
	} else if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("want a string or a list of strings")
	}
	left := maxSeenText
	out := list[:0]
	for _, s := range list {
		if left <= 0 {
			break
		}
		s = clip(s, left)
		left -= len(s)
		out = append(out, s)
	}
	return out, nil
}

// clip cuts s to at most n bytes.
func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// ArgOptions say how much evidence an argument rule needs.
type ArgOptions struct {
	// MinSessions is the fewest sessions that must have called the tool
	// with the argument; 0 means DefaultArgMinSessions.
	MinSessions int
	// MaxValues is the most distinct values an unseen_value rule holds;
	// 0 means DefaultArgMaxValues.
	MaxValues int
}

// Defaults of ArgOptions.
const (
	DefaultArgMinSessions = 10
	DefaultArgMaxValues   = 8
)

// LearnArgs learns argument rules from sessions, sorted by
// automaton.SortArgRules. For each tool (a step's label) and argument
// called in at least MinSessions sessions:
//
//   - unseen_value when it took at most MaxValues distinct values, no more
//     than a value for every four sessions, and each in at least two
//     sessions: by the Good-Turing estimate (the share of sessions whose
//     value no other session had) the chance that a new session brings a
//     value never seen is then 0 at this sample size; a value seen once
//     would say new values keep coming. The four sessions a value keep
//     logs that run each task twice (two models, two trials) from making a
//     rule of values that belong to the tasks (a customer's email);
//   - value_without_source when every value it took, in every call, had
//     appeared earlier in its session (every token of it: see
//     automaton.Tokens) in the text of an earlier step (attrs.seen).
//
// Memory per argument is bounded: beyond MaxValues distinct values only
// that there are more is kept.
func LearnArgs(sessions []ArgSession, opt ArgOptions) []automaton.ArgRule {
	if opt.MinSessions <= 0 {
		opt.MinSessions = DefaultArgMinSessions
	}
	if opt.MaxValues <= 0 {
		opt.MaxValues = DefaultArgMaxValues
	}
	type tally struct {
		steps, sessions int
		last            int // the session last counted
		values          map[string]map[int]bool
		many            bool // more than MaxValues distinct values
		unsourced       bool
		// from counts the calls by the labels whose text alone held
		// their value ("" for a value that needed two labels' texts,
		// or had no tokens)
		from map[string]int
	}
	tallies := map[[2]string]*tally{}
	for si, s := range sessions {
		seen := map[string][]string{} // token -> labels whose text had it
		for _, st := range s.Steps {
			for _, a := range st.Args {
				k := [2]string{st.Label, a.Name}
				t := tallies[k]
				if t == nil {
					t = &tally{last: -1, values: map[string]map[int]bool{}, from: map[string]int{}}
					tallies[k] = t
				}
				t.steps++
				if t.last != si {
					t.sessions++
					t.last = si
				}
				if !t.many {
					h := automaton.ArgHash(st.Label, a.Name, a.Value)
					if t.values[h] == nil {
						if len(t.values) == opt.MaxValues {
							t.many, t.values = true, nil
						} else {
							t.values[h] = map[int]bool{}
						}
					}
					if !t.many {
						t.values[h][si] = true
					}
				}
				if !t.unsourced {
					labels, ok := sourceLabels(seen, a.Value)
					if !ok {
						t.unsourced = true
					}
					if len(labels) == 0 {
						t.from[""]++
					}
					for _, l := range labels {
						t.from[l]++
					}
				}
			}
			for _, text := range st.Seen {
				automaton.Tokens(text, func(tok string) {
					ls, ok := seen[tok]
					if !ok && len(seen) >= automaton.MaxSeenTokens {
						return
					}
					if len(ls) == 0 || ls[len(ls)-1] != st.Label && !slices.Contains(ls, st.Label) {
						seen[tok] = append(ls, st.Label)
					}
				})
			}
		}
	}
	var out []automaton.ArgRule
	for k, t := range tallies {
		if t.sessions < opt.MinSessions {
			continue
		}
		if !t.many && len(t.values)*4 <= t.sessions {
			recur := true
			hashes := make([]string, 0, len(t.values))
			for h, ss := range t.values {
				recur = recur && len(ss) >= 2
				hashes = append(hashes, h)
			}
			if recur {
				sort.Strings(hashes)
				out = append(out, automaton.ArgRule{Tool: k[0], Arg: k[1], Kind: automaton.KindUnseenValue, Steps: t.steps, Sessions: t.sessions, Values: hashes})
			}
		}
		if !t.unsourced {
			out = append(out, automaton.ArgRule{Tool: k[0], Arg: k[1], Kind: automaton.KindValueWithoutSource, Steps: t.steps, Sessions: t.sessions, From: fromLabels(t.from, t.steps, t.sessions >= 2*opt.MinSessions)})
		}
	}
	automaton.SortArgRules(out)
	return out
}

// sourceLabels gives the labels whose text alone held every token of
// value, sorted, and whether the texts of the session so far held them
// all. A value without tokens is sourced, by no label in particular.
func sourceLabels(seen map[string][]string, value string) ([]string, bool) {
	var labels []string
	ok, first := true, true
	automaton.Tokens(clip(value, automaton.MaxArgValue), func(tok string) {
		ls, in := seen[tok]
		if !in {
			ok = false
			return
		}
		if first {
			labels, first = slices.Clone(ls), false
			return
		}
		labels = slices.DeleteFunc(labels, func(l string) bool { return !slices.Contains(ls, l) })
	})
	if !ok {
		return nil, false
	}
	sort.Strings(labels)
	return labels, true
}

// fromLabels picks the labels a source rule's values come from: those
// whose text alone held the value of every call, sorted; else nil (any
// step's text): when a value needed two labels' texts, had no tokens, or
// the calls took their values from different kinds of step; and unless
// enough (LearnArgs asks twice MinSessions sessions: a rule that narrows
// where values come from needs more evidence than one that does not).
func fromLabels(from map[string]int, calls int, enough bool) []string {
	if from[""] > 0 || !enough {
		return nil
	}
	var labels []string
	for l, n := range from {
		if n == calls {
			labels = append(labels, l)
		}
	}
	sort.Strings(labels)
	return labels
}

// ArgFinding is a call whose argument breaks a rule: the session, the
// record's step (its index among the session's records when records have
// no step), and the deviation.
type ArgFinding struct {
	Session string `json:"session_id"`
	Step    int64  `json:"step"`
	automaton.ArgDeviation
}

// CheckArgs judges every call of sessions by rules and gives the first
// finding of each session that has one, in the order of sessions.
func CheckArgs(sessions []ArgSession, rules []automaton.ArgRule) []ArgFinding {
	ar := automaton.NewArgRules(rules)
	if ar == nil {
		return nil
	}
	var out []ArgFinding
	for _, s := range sessions {
		if i, d := FirstArgBreak(ar, s.Steps); d != nil {
			at := int64(s.Steps[i].visit)
			if st := s.Steps[i]; st.hasStep {
				at = st.step
			}
			out = append(out, ArgFinding{Session: s.ID, Step: at, ArgDeviation: *d})
		}
	}
	return out
}

// FirstArgBreak judges steps, one session's records in order, by ar (from
// automaton.NewArgRules; nil judges nothing) and gives the first call that
// breaks a rule, its index and deviation; -1 and nil when none does.
func FirstArgBreak(ar *automaton.ArgRules, steps []ArgStep) (int, *automaton.ArgDeviation) {
	if ar == nil {
		return -1, nil
	}
	w := automaton.NewArgWatch()
	for i, st := range steps {
		if d := w.Call(ar, st.Label, st.Args); d != nil {
			return i, d
		}
		for _, text := range st.Seen {
			w.See(st.Label, text)
		}
	}
	return -1, nil
}

// String names a finding for a human: session, step, kind, tool and arg.
func (f ArgFinding) String() string {
	return strconv.Quote(f.Session) + " step " + strconv.FormatInt(f.Step, 10) + ": " + f.Kind + " " + f.Tool + "(" + f.Arg + ")"
}

// ArgBlocks splits a, the records of session s of lg (read by
// ReadArgSessions with the options lg was read with), by s's visits: for
// n visits, 2n+1 blocks, where blocks[2k+1] holds the records of visit k
// (its first record, the records folded into it, detours collapsed into
// it, and records the rules drop that come before its last record) and
// blocks[2k] the dropped records before visit k (blocks[2n], after the
// last). A session perturbed by visits takes its records along: eval
// removes a visit's block, or swaps two, and the text between them stays
// in place. It fails when a visit's first record is not among a's.
func (lg *Log) ArgBlocks(s *Session, a ArgSession) ([][]ArgStep, error) {
	n := len(s.Visits)
	blocks := make([][]ArgStep, 2*n+1)
	k := -1 // the visit of the records so far
	var pending []ArgStep
	for _, st := range a.Steps {
		if st.dropped() {
			pending = append(pending, st)
			continue
		}
		if k+1 < n {
			if v := s.Visits[k+1]; int(v.File) == st.file && int(v.Line) == st.fileLine {
				k++
				blocks[2*k] = pending
				pending = nil
			}
		}
		if k < 0 {
			return nil, fmt.Errorf("session %q: the record at %s:%d is not where the log's first visit of the session is (the records were read in another order)", s.ID, lg.Files[st.file].Path, lg.InputLine(uint32(st.file), uint32(st.fileLine)))
		}
		blocks[2*k+1] = append(append(blocks[2*k+1], pending...), st)
		pending = nil
	}
	if k+1 != n {
		return nil, fmt.Errorf("session %q: visit %d (%s:%d) has no record among its arguments", s.ID, k+1, lg.Files[s.Visits[k+1].File].Path, lg.InputLine(s.Visits[k+1].File, s.Visits[k+1].Line))
	}
	blocks[2*n] = pending
	return blocks, nil
}
