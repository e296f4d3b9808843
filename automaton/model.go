// Package automaton owns fsmine's model: a deterministic, counted state
// machine mined from agent trajectories, and its versioned JSON file format
// ("fsmine.automaton/v1"), with what the model means: walking a session
// through it, its constraints and argument rules, and the structural diff.
// Conformance checking is automaton/conform, the run-time guard and its
// policy automaton/guard. It imports the standard library, go-json and
// gonum only, and never prints.
package automaton

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// Schema is the value of a model file's "schema" field that this package
// writes and reads. A file whose schema shares SchemaFamily but names a later
// version is refused with ErrNewerSchema.
const (
	Schema       = "fsmine.automaton/v1"
	SchemaFamily = "fsmine.automaton/"
)

// StartID and EndID are the pseudo-states every model has (LangGraph's
// names): every session begins with a transition out of StartID, whose event
// is empty, and ends with a transition into EndID that carries the session's
// last event.
const (
	StartID = "__start__"
	EndID   = "__end__"
)

// Model is a mined automaton and its provenance. States, Transitions and
// Loops are kept sorted (see Sort); a state, an event and the label of the
// next state pick at most one transition.
type Model struct {
	Schema    string  `json:"schema"`
	Version   int     `json:"version"`
	Parent    *Parent `json:"parent"`
	Digest    string  `json:"digest"`
	Created   string  `json:"created"`
	Generator string  `json:"generator"`
	Source    Source  `json:"source"`
	// Evidence, when not nil, names the files build --evidence wrote
	// beside the model. Provenance: not part of the digest.
	Evidence *Evidence `json:"evidence,omitempty"`
	Params   Params    `json:"params"`
	Initial  string    `json:"initial"`

	States      []State      `json:"states"`
	Transitions []Transition `json:"transitions"`
	Loops       []Loop       `json:"loops"`
	Trunk       []string     `json:"trunk"`
	Variants    int          `json:"variants"`
	TopVariants []Variant    `json:"top_variants"`
	// Constraints are rules over whole sessions (see Constraint); models
	// mined without generalisation have none.
	Constraints []Constraint `json:"constraints,omitempty"`
	// Args is evidence about the arguments of tool calls (see ArgRule),
	// sorted by SortArgRules; models mined without --args have none.
	Args []ArgRule `json:"args,omitempty"`
	// By, when not nil, makes the model conditioned (fsmine build --by):
	// the map above is the shared one and By holds a sub-map per value of
	// a record field.
	By *By `json:"by,omitempty"`

	index *index
	// legacy says the model's digest is of the old kind (see
	// VerifyDigest).
	legacy bool
	// sub says the model is a sub-map of a conditioned model (see For),
	// whose argument rules are the shared map's.
	sub bool
	// checkedSubs are the sub-models validateBy made and checked, by
	// value: Validate keeps them when the model's own are not current, so
	// that they are made once.
	checkedSubs map[string]*Model
}

// Parent names the model a model was derived from.
type Parent struct {
	Version int    `json:"version"`
	Digest  string `json:"digest"`
}

// Evidence names the files that fsmine build --evidence writes beside a
// model, for build --update, by the SHA-256 of their bytes ("sha256:" and
// hex): the sessions (the model's path + ".evidence") and, with --slots, the
// record fields of their visits (+ ".fields"; empty without). The files
// name the model's digest in turn, and are written before the model, so
// that a model beside evidence that is not its own is detected.
type Evidence struct {
	Sessions string `json:"sessions"`
	Fields   string `json:"fields,omitempty"`
}

// Source describes the logs a model was mined from.
type Source struct {
	Files      []SourceFile `json:"files"`
	Sessions   int          `json:"sessions"`
	Events     int          `json:"events"`
	Records    int          `json:"records"`
	Skipped    int          `json:"skipped"`
	Duplicates int          `json:"duplicates"`
	Dropped    int          `json:"dropped"`
	Folded     int          `json:"folded"`
	Detours    int          `json:"detours"`
	StepGaps   int          `json:"step_gaps"`
	// LeftOut counts the events the importers left out as asked (XES and
	// CSV events of another lifecycle transition, LLM calls and wrappers
	// folded into their spans); left out of the file at 0.
	LeftOut int `json:"left_out,omitempty"`
	// Outcome counts the sessions by their outcome under Params.Outcome:
	// nil, and left out of the file, for a model built without one.
	Outcome *Outcome `json:"outcome,omitempty"`
}

// Outcome counts sessions by outcome (see Params.Outcome): Sessions is the
// number with an outcome, Succeeded how many of them succeeded, Unknown the
// sessions without one (whose records do not carry the field), counted
// apart and never guessed.
type Outcome struct {
	Sessions  int `json:"sessions"`
	Succeeded int `json:"succeeded"`
	Unknown   int `json:"unknown"`
}

// Failed returns the number of sessions with an outcome that failed.
func (o *Outcome) Failed() int { return o.Sessions - o.Succeeded }

// SourceFile is one input file: its path as given, the SHA-256 of its bytes
// as read (after gzip, if any, is undone: of the decompressed stream), how
// many records it held, how many of its lines were skipped as bad input or
// dropped as duplicates, and the format it was read as.
type SourceFile struct {
	Path       string `json:"path"`
	SHA256     string `json:"sha256"`
	Records    int    `json:"records"`
	Skipped    int    `json:"skipped"`
	Duplicates int    `json:"duplicates"`
	Format     string `json:"format,omitempty"`
}

// Params records every option that shaped a model, so that a later command
// (check, replay, the guard) reads logs the way the model was built from them.
// Labels is the label rules file as given (raw JSON), or nil.
type Params struct {
	Format string            `json:"format"`
	Fields map[string]string `json:"fields"`
	Labels RawJSON           `json:"labels"`
	Merge  string            `json:"merge"`
	K      int               `json:"k,omitempty"`
	Alpha  float64           `json:"alpha,omitempty"`
	// PriorMove and PriorState are the bayes merge's prior (see
	// mine.Options.BayesMovePrior); 0, and left out, for other merges.
	PriorMove  float64 `json:"prior_move,omitempty"`
	PriorState float64 `json:"prior_state,omitempty"`
	RareCount  int     `json:"rare_count"`
	RareRatio  float64 `json:"rare_ratio"`
	// Generalize is the generalisation setting the model was mined with
	// (see mine.Options.Generalize); empty for none.
	Generalize string `json:"generalize,omitempty"`
	// ConstraintSupport is the fewest sessions a learned constraint had
	// to hold in (see mine.Options.ConstraintSupport); 0, and left out,
	// for the default.
	ConstraintSupport int `json:"constraint_support,omitempty"`
	// Examples is how many example session ids the miner kept per state
	// and per transition (see State.Examples); 0, and left out of the
	// file, for none.
	Examples int `json:"examples,omitempty"`
	// Link, when not empty, is a template of a URL at which the trace
	// tool that wrote the logs shows a session: "{session}" stands for the
	// session id, escaped as a URL path segment. Readers must show only
	// http and https links made from it.
	Link string `json:"link,omitempty"`
	// Slots says the miner recorded, per state, the record fields present
	// on every visit that leaves it (State.Fields; fsmine build --slots).
	// False, and left out of the file, for models mined without.
	Slots bool `json:"slots,omitempty"`
	// Outcome, when not empty, is the outcome expression the miner tested
	// every session with (fsmine build --outcome, such as
	// attrs.reward>=1): Source.Outcome, State.Outcome and
	// Transition.Outcome count the sessions by it. Provenance: not part
	// of the digest.
	Outcome string `json:"outcome,omitempty"`
	// Design, when not empty, marks a model that people designed rather
	// than one mined from logs: the format of the flow it was imported
	// from (fsmine import; see package mine/design). Empty, and left out
	// of the file, for a mined model.
	Design string `json:"design,omitempty"`
	// Import holds the options the importers read the logs with where they
	// are not the defaults (fsmine build --sort, --lifecycle, --classifier,
	// --keep-spans): check, replay and stats read new logs with them, as
	// they read them with Format, Fields and Labels. Nil, and left out of
	// the file, for the defaults.
	Import *Import `json:"import,omitempty"`
}

// Import are options of the importers of event logs and traces (see
// mine.ImportOptions), each left out at its default.
type Import struct {
	// Sort is "file" where a case's XES or CSV events were taken in file
	// order, not by time.
	Sort string `json:"sort,omitempty"`
	// Lifecycle is "complete" or "start" where only the XES or CSV events
	// of that lifecycle:transition were kept.
	Lifecycle string `json:"lifecycle,omitempty"`
	// Classifier names the XES classifier whose keys made an event's node.
	Classifier string `json:"classifier,omitempty"`
	// KeepSpans says every span of a trace was a step.
	KeepSpans bool `json:"keep_spans,omitempty"`
}

// Validate checks that im holds values the importers take; errors name
// the field as import.NAME.
func (im *Import) Validate() error {
	switch im.Sort {
	case "", "time", "file":
	default:
		return fmt.Errorf("import.sort is %q, want time or file", im.Sort)
	}
	switch im.Lifecycle {
	case "", "all", "complete", "start":
	default:
		return fmt.Errorf("import.lifecycle is %q, want complete, start or all", im.Lifecycle)
	}
	if im.Classifier != "" {
		if err := ValidByValue(im.Classifier); err != nil {
			return fmt.Errorf("import.classifier: %w", err)
		}
	}
	return nil
}

// State is a state of the model. Visits counts how often sessions entered it,
// Sessions how many distinct sessions did. DwellMS summarises the time spent
// in the state, from a record's time to the next record's time (or its
// duration_ms when the log has no time); nil when the log gives neither.
type State struct {
	ID       string `json:"id"`
	Label    string `json:"label"`
	Visits   int    `json:"visits"`
	Sessions int    `json:"sessions"`
	DwellMS  *Dwell `json:"dwell_ms,omitempty"`
	// MaxRun, when above 0, caps how many visits of the state's label a
	// session may make in a row on entering it: the longest such run any
	// training session made (see mine.Options.Generalize). 0 is no cap.
	MaxRun int `json:"max_run,omitempty"`
	// Fields, recorded when Params.Slots is set, are the dotted paths of
	// the record fields (core fields left out; arrays are leaves) present,
	// with a value that is not null, "" or [], on the record of every
	// visit that leaves the state, where the record is the one whose step
	// lands in the state, and absent from some record of the log: what a
	// session always carried out of the state (for example the arguments
	// of the tool call the state stands for). Sorted, unique; at most
	// MaxFields. Part of the digest, when not empty.
	Fields []string `json:"fields,omitempty"`
	// Examples are ids of sessions that visited the state, at most
	// Params.Examples of them: the ones whose ids have the smallest hashes
	// (64-bit FNV-1a, then SplitMix64's finaliser; ties by id), so that the
	// choice does not depend on the order the logs were read in; sorted by
	// id. Provenance: not part of
	// the digest.
	Examples []string `json:"examples,omitempty"`
	// Outcome counts the sessions that visited the state by outcome (see
	// Params.Outcome); nil without one.
	Outcome *Outcome `json:"outcome,omitempty"`
}

// MaxFields bounds State.Fields: a model with more field paths on one state
// is invalid.
const MaxFields = 256

// Dwell is a summary of dwell times in milliseconds.
type Dwell struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	Max float64 `json:"max"`
}

// The kinds of generalisation, the values of Transition.Generalized (see
// there and mine.Options.Generalize). A model file whose transition names
// another kind is refused: a reader cannot know what an unknown kind allows.
const (
	GenSkip     = "skip"
	GenSwap     = "swap"
	GenEvent    = "event"
	GenFollow   = "follow"
	GenAnyOrder = "any-order"
	GenLoose    = "loose"
)

// GeneralizedKinds lists the kinds of generalisation a model file may name.
var GeneralizedKinds = []string{GenSkip, GenSwap, GenEvent, GenFollow, GenAnyOrder, GenLoose}

// MaxExamples is the most example session ids a state or a transition of a
// model file may hold (see Params.Examples).
const MaxExamples = 10

// Transition is an edge of the model. Prob is Count over the outflow of From.
// Rare marks a low-frequency branch (see Params.RareCount and RareRatio); a
// rare transition is kept, never deleted. BackEdge marks an edge that closes
// a loop: an edge inside a strongly connected component whose target is no
// farther from StartID than its source.
//
// Generalized, when not empty, marks a transition that no session took: the
// miner added it because the log supports it (see mine.Options.Generalize),
// and names the kind of generalisation ("skip": a stage the log shows to be
// optional is skipped; "swap": two stages the log shows in either order are
// taken in the other; "event": another event of the source's label;
// "follow": what followed a similar label; "any-order": a move of the
// permissive end, which allows every order and leaves the constraints to
// decide; "loose": a move of the permissive end that the log does not
// argue against). Its
// Count, Sessions and Prob are 0 and it is never Rare. Readers that predate
// the field load it as an ordinary transition.
type Transition struct {
	From     string  `json:"from"`
	Event    string  `json:"event"`
	To       string  `json:"to"`
	Count    int     `json:"count"`
	Sessions int     `json:"sessions"`
	Prob     float64 `json:"prob"`
	Rare     bool    `json:"rare"`
	BackEdge bool    `json:"back_edge"`

	Generalized string `json:"generalized,omitempty"`
	// Examples are ids of sessions that took the transition, chosen as
	// State.Examples are; none on a generalised transition.
	Examples []string `json:"examples,omitempty"`
	// Outcome counts the sessions that took the transition by outcome
	// (see Params.Outcome); nil without one.
	Outcome *Outcome `json:"outcome,omitempty"`
}

// Loop is a strongly connected component of the model with at least one
// cycle. States are sorted. Count is the number of back-edge traversals in
// all sessions, Sessions the number of sessions that took a back edge at
// least once. An iteration is one back-edge traversal during one continuous
// stay in the component; MaxIterations and P95Iterations are taken over the
// stays that iterated at least once: the data for retry caps. MaxIterations
// is the cap check and the guard hold a stay to: the most a stay made, or,
// mined with the auto or constraints generalisation, more where the stays
// make a longer one plausible (as State.MaxRun).
type Loop struct {
	States        []string  `json:"states"`
	BackEdges     []EdgeRef `json:"back_edges"`
	Count         int       `json:"count"`
	Sessions      int       `json:"sessions"`
	MaxIterations int       `json:"max_iterations"`
	P95Iterations int       `json:"p95_iterations"`
}

// EdgeRef names a transition by its key.
type EdgeRef struct {
	From  string `json:"from"`
	Event string `json:"event"`
	To    string `json:"to"`
}

// Variant is one distinct path through the model, as state ids from the
// first state after StartID to the last before EndID, and how many sessions
// took it.
type Variant struct {
	Count  int      `json:"count"`
	States []string `json:"states"`
}

// Move is one step of a session as the model sees it: the event that led out
// of the current state and the label of the next state.
type Move struct {
	Event string
	Label string
}

// State returns the state with the given id, or nil.
func (m *Model) State(id string) *State {
	ix := m.idx()
	if i, ok := ix.state[id]; ok {
		return &m.States[i]
	}
	return nil
}

// StandsFor reports whether state s rather than t stands for their label
// where one state must (a step the model has no transition for resumes at
// its label's state): the more visited, then the smaller id. The guard and
// the risk walk resume alike by it.
func StandsFor(s, t *State) bool {
	if s.Visits != t.Visits {
		return s.Visits > t.Visits
	}
	return s.ID < t.ID
}

// Next returns the transition that mv takes out of state from, or nil when
// the model has none.
func (m *Model) Next(from string, mv Move) *Transition {
	if i := m.NextIndex(from, mv); i >= 0 {
		return &m.Transitions[i]
	}
	return nil
}

// NextIndex is Next with the transition's index into m.Transitions, or -1
// when the model has none: for tables kept in the transitions' order.
func (m *Model) NextIndex(from string, mv Move) int {
	if i, ok := m.idx().next[moveKey{from, mv.Event, mv.Label}]; ok {
		return i
	}
	return -1
}

// Out returns the transitions out of state from, most frequent first (ties
// by event, then target). The slice must not be modified.
func (m *Model) Out(from string) []*Transition {
	return m.idx().out[from]
}

// In returns the transitions into state to, most frequent first. The slice
// must not be modified.
func (m *Model) In(to string) []*Transition {
	return m.idx().in[to]
}

// HasLabel reports whether some state of the model carries label.
func (m *Model) HasLabel(label string) bool {
	_, ok := m.idx().labels[label]
	return ok
}

// Reindex rebuilds the lookup tables after States or Transitions changed.
// A model is not safe for concurrent use until it has been indexed once;
// Read, Validate and the miner index the models they return.
func (m *Model) Reindex() {
	m.index = nil
	m.idx()
}

type moveKey struct{ from, event, label string }

type index struct {
	state  map[string]int
	labels map[string]struct{}
	next   map[moveKey]int
	out    map[string][]*Transition
	in     map[string][]*Transition
}

func (m *Model) idx() *index {
	if m.index == nil {
		m.index = m.newIndex()
	}
	return m.index
}

// current reports whether ix holds what newIndex would make of m now: the
// same states, labels and moves, and the same transitions (by address, so
// of the same slice) in the same order.
func (ix *index) current(fresh *index) bool {
	return maps.Equal(ix.state, fresh.state) && maps.Equal(ix.labels, fresh.labels) && maps.Equal(ix.next, fresh.next) &&
		maps.EqualFunc(ix.out, fresh.out, slices.Equal) && maps.EqualFunc(ix.in, fresh.in, slices.Equal)
}

// newIndex makes the lookup tables of m as it stands, leaving m.index be.
func (m *Model) newIndex() *index {
	ix := &index{
		state:  make(map[string]int, len(m.States)),
		labels: make(map[string]struct{}, len(m.States)),
		next:   make(map[moveKey]int, len(m.Transitions)),
		out:    make(map[string][]*Transition),
		in:     make(map[string][]*Transition),
	}
	for i, s := range m.States {
		ix.state[s.ID] = i
		ix.labels[s.Label] = struct{}{}
	}
	for i := range m.Transitions {
		t := &m.Transitions[i]
		label := t.To
		if j, ok := ix.state[t.To]; ok {
			label = m.States[j].Label
		}
		ix.next[moveKey{t.From, t.Event, label}] = i
		ix.out[t.From] = append(ix.out[t.From], t)
		ix.in[t.To] = append(ix.in[t.To], t)
	}
	for _, ts := range ix.out {
		sortByCount(ts)
	}
	for _, ts := range ix.in {
		sortByCount(ts)
	}
	return ix
}

func sortByCount(ts []*Transition) {
	sort.SliceStable(ts, func(i, j int) bool {
		a, b := ts[i], ts[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		if a.Event != b.Event {
			return a.Event < b.Event
		}
		if a.From != b.From {
			return a.From < b.From
		}
		return a.To < b.To
	})
}

// Sort puts States (StartID first, EndID last, the rest by id), Transitions
// (by from, event, to) and Loops (by their first state) in the file's order,
// and reindexes the model.
func (m *Model) Sort() {
	rank := func(id string) int {
		switch id {
		case StartID:
			return 0
		case EndID:
			return 2
		}
		return 1
	}
	sort.Slice(m.States, func(i, j int) bool {
		a, b := m.States[i].ID, m.States[j].ID
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra < rb
		}
		return a < b
	})
	sort.Slice(m.Transitions, func(i, j int) bool {
		return compareInFile(&m.Transitions[i], &m.Transitions[j]) < 0
	})
	sort.Slice(m.Loops, func(i, j int) bool {
		return fmt.Sprint(m.Loops[i].States) < fmt.Sprint(m.Loops[j].States)
	})
	m.Reindex()
}

// compareInFile orders transitions as a model file holds them (see Sort):
// by from (CompareIDs), event, then to, byte by byte. The digest reads the
// transitions in this order, so a reader holds files to it (Validate).
func compareInFile(a, b *Transition) int {
	if c := CompareIDs(a.From, b.From); c != 0 {
		return c
	}
	if c := strings.Compare(a.Event, b.Event); c != 0 {
		return c
	}
	return strings.Compare(a.To, b.To)
}

// Uncounted reports whether m is a design without counts (fsmine import of
// a flow people drew): it has no counts to rank, caption or weigh its moves
// by. A design read back from an export of a mined model keeps its counts.
func (m *Model) Uncounted() bool {
	if m.Params.Design == "" {
		return false
	}
	for _, t := range m.Transitions {
		if t.Count > 0 {
			return false
		}
	}
	return true
}
