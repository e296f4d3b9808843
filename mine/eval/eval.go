// Package eval measures how well the models fsmine mines generalise, by
// k-fold cross-validation over sessions: the sessions of a log are split
// into folds by a hash of their id (so the split does not depend on input
// order), a model is mined from all folds but one, and the held-out fold is
// replayed through it. Two numbers pull against each other:
//
//   - accepted: the share of held-out sessions that are paths of the model
//     within its loop caps, that is, that a guard built from it would let
//     through. A map that is too narrow denies legitimate sessions.
//   - rejected: the share of perturbed held-out sessions the model refuses,
//     where a perturbation removes one middle step or swaps two adjacent
//     steps of different labels (events stay in place); perturbations that
//     equal some real session of the log are not counted. A map that accepts
//     everything rejects none of them, and is useless as a guard.
//
// Two more kinds are scored in columns of their own and kept out of the
// headline: a step repeated once more than any session of the log did in a
// row (which a model's run caps reject by construction), and a step ending
// with another of the events its label ends with in the log (an outcome
// changed, the next step kept).
//
// Given a truth (the model that generated the log, or a designed flow),
// Run also scores what only a truth can tell: the share of the perturbed
// sessions the truth rejects that the mined model rejects too, and the
// share of the mined model's generalised transitions, as (label, event,
// label), that the truth has.
//
// Run scores every setting on the same folds, and marks the settings on the
// Pareto front of the two and the one it recommends.
package eval

import (
	"cmp"
	"errors"
	"fmt"
	"hash/fnv"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/conform"
	"github.com/fsmine/fsmine/mine"
)

// Perturbation kinds, the keys of Scores.RejectedBy.
const (
	KindRemove = "remove" // one middle step removed
	KindSwap   = "swap"   // two adjacent steps of different labels swapped
	KindRepeat = "repeat" // a step repeated once more than ever seen in a row
	KindEvent  = "event"  // a step ending with another event of its label
)

// Kinds lists the perturbation kinds in report order.
var Kinds = []string{KindRemove, KindSwap, KindRepeat, KindEvent}

// headline says which kinds Scores.Rejected and the recommendation count:
// removal and swap, the two that test what the map holds. A repeat is
// rejected by any model's run caps, and an event change tests outcomes
// only; each has a column of its own.
func headline(kind string) bool { return kind == KindRemove || kind == KindSwap }

// DefaultMinRejected is the share of perturbed sessions a setting must
// reject to be recommended when Options.MinRejected is 0.
const DefaultMinRejected = 0.45

// Setting is one combination of the mining options that eval compares.
type Setting struct {
	Merge string  `json:"merge"`
	Alpha float64 `json:"alpha,omitempty"`
	// PriorMove and PriorState are the bayes merge's prior
	// (mine.Options.BayesMovePrior and BayesStatePrior), used as given
	// (zero values are not the defaults).
	PriorMove  float64 `json:"prior_move,omitempty"`
	PriorState float64 `json:"prior_state,omitempty"`
	Generalize string  `json:"generalize"`
	// ConstraintSupport is mine.Options.ConstraintSupport (0: the
	// default).
	ConstraintSupport int `json:"constraint_support,omitempty"`
	// MaxUnusual caps the rare and generalised transitions a held-out
	// session may take (conform.Options.MaxUnusual, as check --max-unusual
	// checks), 0 for no cap.
	MaxUnusual int `json:"max_unusual,omitempty"`
	// MaxUnusualRun caps the rare and generalised transitions a held-out
	// session may take in a row (conform.Options.MaxUnusualRun, as check
	// --max-unusual-run checks), 0 for no cap.
	MaxUnusualRun int `json:"max_unusual_run,omitempty"`
	// By, when not empty, scores a conditioned model (mine.BuildBy) on
	// the record field By, its values Options.By, a value needing ByMin
	// sessions of the training folds for a sub-map made as ByMode says
	// (automaton.ByPaths when empty): each held-out session, and each of
	// its perturbations, is judged by its value's map.
	By     string `json:"by,omitempty"`
	ByMin  int    `json:"by_min,omitempty"`
	ByMode string `json:"by_mode,omitempty"`
}

// nested measures the recommendation held out (see Options.Nested):
// tests are the folds' held-out sessions.
func nested(lg *mine.Log, opt Options, tests []test) (*Nested, error) {
	if opt.Folds < 3 {
		return nil, fmt.Errorf("eval: nested: %d folds leave %d to choose on; want at least 3 folds", opt.Folds, opt.Folds-1)
	}
	inner := opt
	inner.Folds, inner.Nested, inner.Outcome, inner.Progress = opt.Folds-1, false, nil, nil
	n := &Nested{}
	folds := make([]Scores, opt.Folds)
	for f := range folds {
		train := lg.Subset(func(s *mine.Session) bool { return Fold(s.ID, opt.Folds) != f })
		rep, err := Run(train, inner)
		if err != nil {
			return nil, fmt.Errorf("eval: nested, held-out fold %d: %w", f+1, err)
		}
		s := rep.Results[rep.Recommended].Setting
		m, sc, err := mineFold(train, &tests[f], s, opt.Base, opt.By, false)
		if err != nil {
			return nil, fmt.Errorf("eval: nested, held-out fold %d, %s: %w", f+1, s.mined(), err)
		}
		folds[f] = judge(m, sc, &tests[f], s, opt.By)
		n.Chosen = append(n.Chosen, s.String())
	}
	n.Overall = overall(folds)
	return n, nil
}

// shareModels groups settings by the model they score, in order: settings
// that differ only in how sessions are judged share one model per fold, so
// that a job mines it once and scores each.
func shareModels(settings []Setting) [][]int {
	var groups [][]int
	group := map[Setting]int{}
	for i, s := range settings {
		key := s.mined()
		g, ok := group[key]
		if !ok {
			g = len(groups)
			group[key] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	return groups
}

// mined is s without what only judges sessions (the caps on unusual
// moves): the setting of the model s scores.
func (s Setting) mined() Setting {
	s.MaxUnusual, s.MaxUnusualRun = 0, 0
	return s
}

// options are base with what s sets for mining: the merge and its
// parameters, the generalisation. (The caps judge sessions, and By
// conditions the model; neither is a mining option.)
func (s Setting) options(base mine.Options) mine.Options {
	opt := base
	opt.Merge, opt.Alpha, opt.Generalize, opt.ConstraintSupport = s.Merge, s.Alpha, s.Generalize, s.ConstraintSupport
	if s.Merge == mine.MergeBayes {
		opt.BayesMovePrior, opt.BayesStatePrior = s.PriorMove, s.PriorState
	}
	return opt
}

// String names the setting as the text report prints it.
func (s Setting) String() string {
	var b strings.Builder
	b.WriteString(s.Merge)
	switch s.Merge {
	case mine.MergeAlergia:
		fmt.Fprintf(&b, " alpha=%g", s.Alpha)
	case mine.MergeBayes:
		fmt.Fprintf(&b, " move=%g state=%g", s.PriorMove, s.PriorState)
	}
	g := s.Generalize
	if g == "" {
		g = mine.GeneralizeNone
	}
	b.WriteString(" generalize=" + g)
	if s.ConstraintSupport > 0 && s.ConstraintSupport != mine.MinConstraintSupport {
		fmt.Fprintf(&b, " support=%d", s.ConstraintSupport)
	}
	if s.MaxUnusual > 0 {
		fmt.Fprintf(&b, " max-unusual=%d", s.MaxUnusual)
	}
	if s.MaxUnusualRun > 0 {
		fmt.Fprintf(&b, " max-unusual-run=%d", s.MaxUnusualRun)
	}
	if s.By != "" {
		fmt.Fprintf(&b, " by=%s min=%d", s.By, s.ByMin)
		if s.ByMode != "" && s.ByMode != automaton.ByPaths {
			b.WriteString(" mode=" + s.ByMode)
		}
	}
	return b.String()
}

// Options shape Run.
type Options struct {
	// Folds is the number of folds, at least 2.
	Folds int
	// Settings are the settings to compare, at least one.
	Settings []Setting
	// Base gives the options that Settings do not set (rare flags, ...).
	Base mine.Options
	// MinRejected is the share of perturbed sessions a setting must reject
	// to be recommended; 0 means DefaultMinRejected.
	MinRejected float64
	// Workers bounds the models mined at once; 0 means GOMAXPROCS.
	Workers int
	// Outcome, when not nil, has Run score the sessions' risk against
	// their outcomes too (see Outcome): session id -> succeeded, under the
	// expression OutcomeExpr. Report.Outcome holds the result.
	Outcome     map[string]bool
	OutcomeExpr string
	// Progress, when not nil, is called after each model is mined and
	// scored, with the number done and the total. It may be called from
	// several goroutines, one at a time.
	Progress func(done, total int)
	// By holds each session's value of the field that settings with By
	// condition on (see mine.SessionValues), by session id.
	By map[string]string
	// Truth, when not nil, is the model that is right about the log (see
	// Scores.TruthRejected and Scores.GenPrecision). Run returns an error
	// when it has no label in common with the log.
	Truth *automaton.Model
	// Nested, when set, has Run measure the recommendation itself held
	// out (Report.Nested): for each fold, the setting Run recommends on the
	// other folds (Folds-1 of them, at least 2) is mined on them and scored
	// on it.
	Nested bool

	// Args, when not nil, are the sessions' records with their calls'
	// arguments and the text they brought (mine.ReadArgSessions, read as
	// the log was): for each fold, argument rules are learned from the
	// training sessions' records (mine.LearnArgs), and a held-out session
	// or perturbation is refused also at a call that breaks one. A
	// perturbation moves a visit's records with it (a removed step takes
	// its call and its text), so a call no longer preceded by the text its
	// value came from breaks its rule. Every session of the log must have
	// its records here.
	Args []mine.ArgSession

	// oracle, for tests: each mined model is given the moves its held-out
	// sessions take (see addOracle), a bound no method reaches.
	oracle bool
}

// Scores are the measurements of one model on its held-out fold, or their
// sum over folds.
type Scores struct {
	// Train and Test are the sessions mined and held out.
	Train int `json:"train"`
	Test  int `json:"test"`
	// Accepted is the share of held-out sessions that fit the model.
	Accepted float64 `json:"accepted"`
	// Fitness is the mean alignment fitness of the held-out sessions.
	Fitness float64 `json:"fitness"`
	// Perturbed is the number of perturbed held-out sessions of the
	// headline kinds (removal and swap), Rejected the share of them the
	// model refuses; RejectedBy is that share for each kind (Kinds), and
	// PerturbedBy the number of each kind.
	Perturbed   int                `json:"perturbed"`
	Rejected    float64            `json:"rejected"`
	RejectedBy  map[string]float64 `json:"rejected_by"`
	PerturbedBy map[string]int     `json:"perturbed_by"`
	// RejectedReal is, of the perturbed sessions of the headline kinds the
	// model rejects, the share whose first refused move, (label, event,
	// label), is none of the model's, at any state of its label, and is
	// taken by a held-out session of the fold: on a real log a perturbation
	// is only presumed wrong, and these refusals begin at a move real
	// unseen sessions make. A map given those moves would still refuse
	// some of them at a later move, so it is a bound on the rejection that
	// accepting them gives up.
	RejectedReal float64 `json:"rejected_at_real_move"`
	// With a truth: TruthPerturbed is the number of perturbed sessions of
	// the headline kinds that the truth rejects, TruthRejected the share of
	// them the model rejects too, and TruthRejectedBy that share per kind
	// (repeat left out: the truth's loops have no caps). Generalized
	// transitions are scored as (label, event, label): GenInTruth of them
	// the truth has, GenPrecision = GenInTruth / their number (1 when the
	// model has none).
	TruthPerturbed  int                `json:"truth_perturbed,omitempty"`
	TruthRejected   *float64           `json:"truth_rejected,omitempty"`
	TruthRejectedBy map[string]float64 `json:"truth_rejected_by,omitempty"`
	GenTotal        int                `json:"gen_total,omitempty"`
	GenInTruth      int                `json:"gen_in_truth,omitempty"`
	GenPrecision    *float64           `json:"gen_precision,omitempty"`
	// GenOutside lists the generalised transitions the truth lacks, as
	// "from -event-> to (kind)" by label, each with the number of the
	// models' generalised transitions it stands for (over folds); sorted by
	// count, then text.
	GenOutside []GenMove `json:"gen_outside,omitempty"`
	// States, Transitions, Common (transitions not rare) and Generalized
	// (transitions no session took) measure the model; over folds they are
	// means.
	States      float64 `json:"states"`
	Transitions float64 `json:"transitions"`
	Common      float64 `json:"common"`
	Generalized float64 `json:"generalized"`
	// BuildMS is the wall time of mining the model (over folds, the mean):
	// the one measurement that differs from run to run.
	BuildMS float64 `json:"build_ms"`

	accepted, rejected int
	rejectedReal       int
	fitSum             float64
	byKind, ofKind     map[string]int
	truth              bool
	tByKind, tOfKind   map[string]int
}

// GenMove is a generalised transition outside the truth, by label, with
// its kind (mine.GenSkip, ...), and how many of the models' generalised
// transitions it stands for.
type GenMove struct {
	From  string `json:"from"`
	Event string `json:"event"`
	To    string `json:"to"`
	Kind  string `json:"kind"`
	Count int    `json:"count"`
}

// genMoveKey is a GenMove without its count.
type genMoveKey struct{ from, event, to, kind string }

// addGenOutside returns list with moves added to it (their counts summed by
// move), sorted by count, then move.
func addGenOutside(list []GenMove, moves ...GenMove) []GenMove {
	if len(moves) == 0 {
		return list
	}
	count := make(map[genMoveKey]int, len(list)+len(moves))
	for _, g := range append(list, moves...) {
		count[genMoveKey{g.From, g.Event, g.To, g.Kind}] += g.Count
	}
	out := make([]GenMove, 0, len(count))
	for k, n := range count {
		out = append(out, GenMove{k.from, k.event, k.to, k.kind, n})
	}
	slices.SortFunc(out, func(a, b GenMove) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return cmp.Or(strings.Compare(a.From, b.From), strings.Compare(a.Event, b.Event),
			strings.Compare(a.To, b.To), strings.Compare(a.Kind, b.Kind))
	})
	return out
}

// Result is one setting's scores, per fold and overall.
type Result struct {
	Setting Setting  `json:"setting"`
	Name    string   `json:"name"`
	Folds   []Scores `json:"folds"`
	Overall Scores   `json:"overall"`
	// Pareto says that no other setting accepts and rejects at least as
	// much, and more of one.
	Pareto bool `json:"pareto"`
}

// Report is what Run measured.
type Report struct {
	Sessions int `json:"sessions"`
	// Emptied counts the sessions the label rules left without a step
	// (see mine.Log.Emptied): no part of any fold.
	Emptied int      `json:"emptied,omitempty"`
	Folds   int      `json:"folds"`
	Results []Result `json:"results"`
	// Recommended is the index into Results of the recommended setting:
	// of those that reject at least MinRejected of the perturbed sessions,
	// the one that accepts the most held-out sessions (ties: the one that
	// rejects more, then the smaller model, then the first given); when
	// none does, the one that rejects the most.
	Recommended int     `json:"recommended"`
	MinRejected float64 `json:"min_rejected"`
	// ArgRules, with Options.Args, is the mean number of argument rules
	// learned a fold; every setting was judged with them.
	ArgRules *float64 `json:"arg_rules,omitempty"`
	// Outcome is the risk scores against the sessions' outcomes, when
	// Options.Outcome asked for them.
	Outcome *OutcomeReport `json:"outcome,omitempty"`
	// Nested is the recommendation measured held out, when Options.Nested
	// asked for it.
	Nested *Nested `json:"nested,omitempty"`
}

// Nested is choosing a setting with Run, measured on sessions the choice
// did not see: per fold, the setting recommended on the other folds
// (Chosen, by name), mined on them and scored on the fold; Overall sums
// the folds' scores.
type Nested struct {
	Chosen  []string `json:"chosen"`
	Overall Scores   `json:"overall"`
}

// ErrTooFew is wrapped by the errors Run returns for a log that cannot be
// split into the folds asked for.
var ErrTooFew = errors.New("too few sessions")

// ErrTruth is wrapped by the error Run returns for a truth that cannot be
// scored against the log.
var ErrTruth = errors.New("truth does not fit the log")

// sharesLabel says whether the truth has a state labelled as some step of
// the log.
func sharesLabel(lg *mine.Log, truth *automaton.Model) bool {
	labels := map[string]bool{}
	for _, s := range truth.States {
		if s.ID != automaton.StartID && s.ID != automaton.EndID {
			labels[s.Label] = true
		}
	}
	for i := range lg.Sessions {
		for _, mv := range lg.Moves(&lg.Sessions[i]) {
			if labels[mv.Label] {
				return true
			}
		}
	}
	return false
}

// Fold returns the fold of a session: a hash of its id modulo folds.
func Fold(id string, folds int) int {
	h := fnv.New64a()
	h.Write([]byte(id))
	return int(h.Sum64() % uint64(folds))
}

// Run cross-validates every setting on lg, which must have been read whole
// (not streamed). Its errors wrap ErrTooFew when lg has fewer sessions than
// folds, a single session, or a fold without sessions.
func Run(lg *mine.Log, opt Options) (*Report, error) {
	if lg.Streamed {
		return nil, errors.New("eval: the log was read streaming; read it whole")
	}
	if opt.Folds < 2 {
		return nil, fmt.Errorf("eval: %d folds: want at least 2", opt.Folds)
	}
	if len(opt.Settings) == 0 {
		return nil, errors.New("eval: no settings to compare")
	}
	n := len(lg.Sessions)
	switch {
	case n == 1:
		return nil, fmt.Errorf("%w: the log has a single session; cross-validation needs at least %d", ErrTooFew, opt.Folds)
	case n < opt.Folds:
		return nil, fmt.Errorf("%w: the log has %d sessions, fewer than the %d folds", ErrTooFew, n, opt.Folds)
	}
	fold := make([]int, n)
	size := make([]int, opt.Folds)
	for i := range lg.Sessions {
		fold[i] = Fold(lg.Sessions[i].ID, opt.Folds)
		size[fold[i]]++
	}
	for f, k := range size {
		if k == 0 {
			return nil, fmt.Errorf("%w: fold %d of %d holds no session (the log has %d); use fewer folds", ErrTooFew, f+1, opt.Folds, n)
		}
	}
	if opt.Truth != nil && !sharesLabel(lg, opt.Truth) {
		return nil, fmt.Errorf("%w: the truth has no label in common with the log", ErrTruth)
	}
	minRej := opt.MinRejected
	if minRej == 0 {
		minRej = DefaultMinRejected
	}

	tests := heldOut(lg, fold, opt.Folds, opt.Truth)
	trains := make([]*mine.Log, opt.Folds)
	for f := range trains {
		trains[f] = lg.Subset(func(s *mine.Session) bool { return Fold(s.ID, opt.Folds) != f })
	}
	if opt.Args != nil {
		if err := argTests(lg, fold, opt.Args, tests); err != nil {
			return nil, err
		}
	}

	rep := &Report{Sessions: n, Emptied: lg.Emptied, Folds: opt.Folds, MinRejected: minRej}
	if opt.Args != nil {
		rules := 0
		for _, t := range tests {
			rules += t.nArgRules
		}
		rep.ArgRules = new(float64)
		*rep.ArgRules = round1(float64(rules) / float64(opt.Folds))
	}
	rep.Results = make([]Result, len(opt.Settings))
	for i, s := range opt.Settings {
		rep.Results[i] = Result{Setting: s, Name: s.String(), Folds: make([]Scores, opt.Folds)}
	}

	groups := shareModels(opt.Settings)
	type job struct{ group, fold int }
	jobs := make(chan job)
	errs := make([]error, len(opt.Settings)*opt.Folds)
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	done, total := 0, len(errs)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				first := groups[j.group][0]
				m, sc, err := mineFold(trains[j.fold], &tests[j.fold], opt.Settings[first], opt.Base, opt.By, opt.oracle)
				if err != nil {
					errs[first*opt.Folds+j.fold] = fmt.Errorf("%s, fold %d: %w", opt.Settings[first].mined(), j.fold+1, err)
				} else {
					for _, i := range groups[j.group] {
						rep.Results[i].Folds[j.fold] = judge(m, sc, &tests[j.fold], opt.Settings[i], opt.By)
					}
				}
				if opt.Progress != nil {
					mu.Lock()
					done += len(groups[j.group])
					opt.Progress(done, total)
					mu.Unlock()
				}
			}
		}()
	}
	for g := range groups {
		for f := 0; f < opt.Folds; f++ {
			jobs <- job{g, f}
		}
	}
	close(jobs)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for i := range rep.Results {
		rep.Results[i].Overall = overall(rep.Results[i].Folds)
	}
	rep.pareto()
	rep.recommend()
	if opt.Nested {
		var err error
		if rep.Nested, err = nested(lg, opt, tests); err != nil {
			return nil, err
		}
	}
	if opt.Outcome != nil {
		var err error
		if rep.Outcome, err = Outcome(lg, opt.OutcomeExpr, opt.Outcome, opt); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// argTests gives each fold of tests its sessions' records split by visits
// and the argument rules of its training sessions (see Options.Args).
func argTests(lg *mine.Log, fold []int, args []mine.ArgSession, tests []test) error {
	byID := make(map[string]int, len(args))
	for i, a := range args {
		byID[a.ID] = i
	}
	train := make([][]mine.ArgSession, len(tests))
	for i := range lg.Sessions {
		s := &lg.Sessions[i]
		a, ok := byID[s.ID]
		if !ok {
			return fmt.Errorf("eval: session %q has no records among the arguments read", s.ID)
		}
		blocks, err := lg.ArgBlocks(s, args[a])
		if err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		t := &tests[fold[i]]
		t.blocks = append(t.blocks, blocks)
		for f := range train {
			if f != fold[i] {
				train[f] = append(train[f], args[a])
			}
		}
	}
	for f := range tests {
		rules := mine.LearnArgs(train[f], mine.ArgOptions{})
		tests[f].argRules, tests[f].nArgRules = automaton.NewArgRules(rules), len(rules)
	}
	return nil
}

// test is a held-out fold: its sessions, and what perturbing them needs.
// The perturbations are made anew for each model scored, so that memory
// holds the sessions, not their perturbations (a session of n steps has
// about 3n, of n steps each).
type test struct {
	sessions [][]automaton.Move
	ids      []string            // parallel to sessions
	real     map[string]bool     // the log's sessions, by key
	maxRun   map[string]int      // the longest run of each label in the log
	events   map[string][]string // the events ending each label's visits in the log
	truth    *automaton.Model    // nil without a truth
	truthLbl map[triple]bool     // the truth's transitions as (label, event, label)
	// realMoves are the moves of the held-out sessions as (label, event,
	// label).
	realMoves map[triple]bool
	// With Options.Args: each session's records split by its visits
	// (mine.Log.ArgBlocks), parallel to sessions, and the argument rules
	// learned from the fold's training sessions.
	blocks    [][][]mine.ArgStep
	argRules  *automaton.ArgRules
	nArgRules int
}

type triple struct{ from, event, to string }

func heldOut(lg *mine.Log, fold []int, folds int, truth *automaton.Model) []test {
	real := map[string]bool{}
	moves := make([][]automaton.Move, len(lg.Sessions))
	maxRun := map[string]int{}
	evSet := map[string]map[string]bool{}
	for i := range lg.Sessions {
		moves[i] = lg.Moves(&lg.Sessions[i])
		real[key(moves[i])] = true
		run := 0
		for j, mv := range moves[i] {
			if j > 0 && mv.Label == moves[i][j-1].Label {
				run++
			} else {
				run = 1
			}
			maxRun[mv.Label] = max(maxRun[mv.Label], run)
			if j+1 < len(moves[i]) {
				if evSet[mv.Label] == nil {
					evSet[mv.Label] = map[string]bool{}
				}
				evSet[mv.Label][moves[i][j+1].Event] = true
			}
		}
	}
	events := map[string][]string{}
	for l, es := range evSet {
		for e := range es {
			events[l] = append(events[l], e)
		}
		sort.Strings(events[l])
	}
	var tl map[triple]bool
	if truth != nil {
		tl = labelTriples(truth)
	}
	tests := make([]test, folds)
	for f := range tests {
		tests[f] = test{real: real, maxRun: maxRun, events: events, truth: truth, truthLbl: tl}
	}
	for i := range lg.Sessions {
		t := &tests[fold[i]]
		t.sessions = append(t.sessions, moves[i])
		t.ids = append(t.ids, lg.Sessions[i].ID)
		if t.realMoves == nil {
			t.realMoves = map[triple]bool{}
		}
		for j := range moves[i] {
			t.realMoves[moveAt(moves[i], j)] = true
		}
	}
	return tests
}

// addOracle gives m every move of moves, (label, event, label), that a
// state of the first label lacks: from each such state to the state that
// stands for the second label (automaton.StandsFor), marked generalised
// "oracle" and never back edges (so no loop cap counts them). Given the
// held-out sessions' moves it is the map that accepts every move they take
// and adds no other move: how far adding moves to the mined map can go on
// a fold, for tests.
func addOracle(m *automaton.Model, moves map[triple]bool) {
	rep := map[string]*automaton.State{}
	label := map[string]string{}
	for i := range m.States {
		s := &m.States[i]
		label[s.ID] = s.Label
		if r := rep[s.Label]; r == nil || automaton.StandsFor(s, r) {
			rep[s.Label] = s
		}
	}
	has := map[[3]string]bool{}
	for _, t := range m.Transitions {
		has[[3]string{t.From, t.Event, label[t.To]}] = true
	}
	keys := make([]triple, 0, len(moves))
	for mv := range moves {
		keys = append(keys, mv)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		return a.from < b.from || a.from == b.from && (a.event < b.event || a.event == b.event && a.to < b.to)
	})
	var add []automaton.Transition
	for _, mv := range keys {
		to := rep[mv.to]
		if to == nil {
			continue
		}
		for _, s := range m.States {
			k := [3]string{s.ID, mv.event, mv.to}
			if s.Label == mv.from && !has[k] {
				has[k] = true
				add = append(add, automaton.Transition{From: s.ID, Event: mv.event, To: to.ID, Generalized: "oracle"})
			}
		}
	}
	m.Transitions = append(m.Transitions, add...)
	m.Sort()
}

// moveAt is the move at index i of mvs as (label, event, label).
func moveAt(mvs []automaton.Move, i int) triple {
	from := automaton.StartID
	if i > 0 {
		from = mvs[i-1].Label
	}
	return triple{from, mvs[i].Event, mvs[i].Label}
}

// labelTriples returns a model's transitions as (label, event, label).
func labelTriples(m *automaton.Model) map[triple]bool {
	label := map[string]string{}
	for _, s := range m.States {
		label[s.ID] = s.Label
	}
	out := map[triple]bool{}
	for _, t := range m.Transitions {
		out[triple{label[t.From], t.Event, label[t.To]}] = true
	}
	return out
}

// Perturb returns the distinct perturbations of a session, given as its
// moves (see mine.Log.Moves), by kind (Kinds): every middle visit removed,
// every two adjacent visits of different labels swapped (events stay in
// place), and every run of a label lengthened to one more than maxRun gives
// for the label (a run already that long or longer gives none). The
// perturbations may include the session itself only through maxRun.
func Perturb(mvs []automaton.Move, maxRun map[string]int) map[string][][]automaton.Move {
	return movesOf(perturb(mvs, maxRun, nil))
}

// PerturbEvents is Perturb with the event kind too: each visit ending with
// each other event that events lists for its label.
func PerturbEvents(mvs []automaton.Move, maxRun map[string]int, events map[string][]string) map[string][][]automaton.Move {
	return movesOf(perturb(mvs, maxRun, events))
}

func movesOf(ps map[string][]perturbation) map[string][][]automaton.Move {
	out := make(map[string][][]automaton.Move, len(ps))
	for k, list := range ps {
		for _, p := range list {
			out[k] = append(out[k], p.moves)
		}
	}
	return out
}

// perturbation is a perturbed session: its moves, and where it changed the
// visits (the kind says how), so that the records of the visits can be
// perturbed alike (see perturbArgs).
type perturbation struct {
	moves []automaton.Move
	// at is the visit removed, the first of the two swapped, or the last
	// of the run repeated, extra times more; unused for an event change.
	at, extra int
}

// perturbArgs gives the records of the session blocks splits by visits (see
// mine.Log.ArgBlocks) as p, a perturbation of kind, changes its visits: a
// visit's records go with it, and the records between visits (text the
// label rules drop) stay in place.
func perturbArgs(kind string, p perturbation, blocks [][]mine.ArgStep) []mine.ArgStep {
	var out []mine.ArgStep
	for b := range blocks {
		switch {
		case kind == KindRemove && b == 2*p.at+1:
			continue
		case kind == KindSwap && b == 2*p.at+1:
			out = append(out, blocks[b+2]...)
		case kind == KindSwap && b == 2*p.at+3:
			out = append(out, blocks[b-2]...)
		default:
			out = append(out, blocks[b]...)
		}
		if kind == KindRepeat && b == 2*p.at+1 {
			for range p.extra {
				out = append(out, blocks[b]...)
			}
		}
	}
	return out
}

// perturb is PerturbEvents. Visits 0..n-1 are moves 0..n-1 (the label of a
// move is the visit's label, the event of move i+1 is visit i's event), and
// move n is the move into the end.
func perturb(mvs []automaton.Move, maxRun map[string]int, events map[string][]string) map[string][]perturbation {
	n := len(mvs) - 1 // visits
	type visit struct{ label, event string }
	vs := make([]visit, n)
	for i := 0; i < n; i++ {
		vs[i] = visit{mvs[i].Label, mvs[i+1].Event}
	}
	toMoves := func(vs []visit) []automaton.Move {
		out := make([]automaton.Move, 0, len(vs)+1)
		ev := ""
		for _, v := range vs {
			out = append(out, automaton.Move{Event: ev, Label: v.label})
			ev = v.event
		}
		return append(out, automaton.Move{Event: ev, Label: automaton.EndID})
	}
	out := map[string][]perturbation{}
	seen := map[string]bool{}
	add := func(kind string, vs []visit, at, extra int) {
		p := toMoves(vs)
		k := key(p)
		if !seen[k] {
			seen[k] = true
			out[kind] = append(out[kind], perturbation{p, at, extra})
		}
	}
	for i := 1; i < n-1; i++ {
		p := append(append([]visit{}, vs[:i]...), vs[i+1:]...)
		add(KindRemove, p, i, 0)
	}
	for i := 0; i+1 < n; i++ {
		if vs[i].label == vs[i+1].label {
			continue
		}
		p := append([]visit{}, vs...)
		// Labels change places; each position keeps its event.
		p[i].label, p[i+1].label = vs[i+1].label, vs[i].label
		add(KindSwap, p, i, 0)
	}
	for i := 0; i < n; {
		j := i
		for j+1 < n && vs[j+1].label == vs[i].label {
			j++
		}
		// Lengthen the run vs[i..j] to one more than the longest run of
		// its label in the log, repeating its last visit.
		extra := maxRun[vs[i].label] + 1 - (j - i + 1)
		if extra <= 0 {
			i = j + 1
			continue
		}
		p := append([]visit{}, vs[:j+1]...)
		for k := 0; k < extra; k++ {
			p = append(p, vs[j])
		}
		add(KindRepeat, append(p, vs[j+1:]...), j, extra)
		i = j + 1
	}
	for i := range vs {
		for _, e := range events[vs[i].label] {
			if e == vs[i].event {
				continue
			}
			p := append([]visit{}, vs...)
			p[i].event = e
			add(KindEvent, p, i, 0)
		}
	}
	return out
}

func key(mvs []automaton.Move) string {
	var b strings.Builder
	for _, mv := range mvs {
		b.WriteString(mv.Event)
		b.WriteByte(0)
		b.WriteString(mv.Label)
		b.WriteByte(1)
	}
	return b.String()
}

// mineFold mines the model of setting s on a fold's training sessions and
// returns it with the scores that are the model's own: its size, the time
// to mine it, and with a truth its generalised transitions. Settings that
// differ only in how sessions are judged (their caps, Setting.mined) share
// it: see judge.
func mineFold(train *mine.Log, t *test, s Setting, base mine.Options, values map[string]string, oracle bool) (*automaton.Model, Scores, error) {
	opt := s.options(base)
	start := time.Now()
	var m *automaton.Model
	var err error
	if s.By != "" {
		m, err = mine.BuildBy(train, opt, mine.ByOptions{Field: s.By, MinSessions: s.ByMin, Mode: s.ByMode}, values)
	} else {
		m, err = mine.Build(train, opt)
	}
	if err != nil {
		return nil, Scores{}, err
	}
	sc := Scores{
		Train:   train.NumSessions(),
		Test:    len(t.sessions),
		BuildMS: float64(time.Since(start).Microseconds()) / 1e3,
		States:  float64(len(m.States)), Transitions: float64(len(m.Transitions)),
	}
	for _, tr := range m.Transitions {
		if tr.Generalized != "" {
			sc.Generalized++
		} else if !tr.Rare {
			sc.Common++
		}
	}
	if t.truth != nil {
		sc.truth = true
		label := map[string]string{}
		for _, s := range m.States {
			label[s.ID] = s.Label
		}
		var outside []GenMove
		for _, tr := range m.Transitions {
			if tr.Generalized == "" {
				continue
			}
			sc.GenTotal++
			if t.truthLbl[triple{label[tr.From], tr.Event, label[tr.To]}] {
				sc.GenInTruth++
			} else {
				outside = append(outside, GenMove{label[tr.From], tr.Event, label[tr.To], tr.Generalized, 1})
			}
		}
		sc.GenOutside = addGenOutside(nil, outside...)
	}
	if oracle && s.By == "" {
		addOracle(m, t.realMoves)
	}
	return m, sc, nil
}

// judge scores the held-out fold t against m, the model mineFold mined for
// s, from sc, mineFold's scores: the sessions accepted and the
// perturbations rejected, as s judges them.
func judge(m *automaton.Model, sc Scores, t *test, s Setting, values map[string]string) Scores {
	sc.byKind, sc.ofKind = map[string]int{}, map[string]int{}
	if t.truth != nil {
		sc.tByKind, sc.tOfKind = map[string]int{}, map[string]int{}
	}
	// A checker of its own: jobs run at once, and a checker's walk writes
	// to it.
	var truth *conform.Checker
	if t.truth != nil {
		truth = conform.New(t.truth, conform.Options{})
	}
	// A refusal counts as at a real move when the move is none of the
	// model's at any state of its label and a held-out session takes it.
	has := labelTriples(m)
	checkers := conform.NewCheckers(conform.Options{MaxUnusual: s.MaxUnusual, MaxUnusualRun: s.MaxUnusualRun})
	checkerOf := func(i int) *conform.Checker {
		if s.By != "" {
			return checkers.For(m.For(values[t.ids[i]]))
		}
		return checkers.For(m)
	}
	// With argument rules a session is refused also at a call that breaks
	// one (see Options.Args).
	argsBreak := func(steps []mine.ArgStep) bool {
		i, _ := mine.FirstArgBreak(t.argRules, steps)
		return i >= 0
	}
	args := t.blocks != nil && t.argRules != nil // no rule learned: nothing to judge
	for i, mvs := range t.sessions {
		v := checkerOf(i).Check(mvs)
		if v.Fits() && (!args || !argsBreak(slices.Concat(t.blocks[i]...))) {
			sc.accepted++
		}
		sc.fitSum += v.Fitness
	}
	for i, mvs := range t.sessions {
		c := checkerOf(i)
		for kind, ps := range perturb(mvs, t.maxRun, t.events) {
			for _, pt := range ps {
				p := pt.moves
				if t.real[key(p)] {
					continue
				}
				sc.ofKind[kind]++
				at, verdict := c.Miss(p)
				rejected := at >= 0 || args && argsBreak(perturbArgs(kind, pt, t.blocks[i]))
				if rejected {
					sc.byKind[kind]++
				}
				if headline(kind) {
					sc.Perturbed++
					if rejected {
						sc.rejected++
						// (at < 0: refused by an argument rule alone)
						if at >= 0 && (verdict == conform.StepIllegal || verdict == conform.StepIncomplete) {
							if mv := moveAt(p, min(at, len(p)-1)); !has[mv] && t.realMoves[mv] {
								sc.rejectedReal++
							}
						}
					}
				}
				if t.truth != nil && kind != KindRepeat && !truth.Fits(p) {
					sc.tOfKind[kind]++
					if rejected {
						sc.tByKind[kind]++
					}
				}
			}
		}
	}
	sc.finish()
	return sc
}

// finish turns the counts into shares.
func (sc *Scores) finish() {
	sc.Accepted = share(sc.accepted, sc.Test)
	sc.Fitness = 0
	if sc.Test > 0 {
		sc.Fitness = round(sc.fitSum / float64(sc.Test))
	}
	sc.Rejected = share(sc.rejected, sc.Perturbed)
	sc.RejectedReal = share(sc.rejectedReal, sc.rejected)
	sc.RejectedBy = map[string]float64{}
	sc.PerturbedBy = map[string]int{}
	for _, k := range Kinds {
		sc.RejectedBy[k] = share(sc.byKind[k], sc.ofKind[k])
		sc.PerturbedBy[k] = sc.ofKind[k]
	}
	if !sc.truth {
		return
	}
	sc.TruthRejectedBy = map[string]float64{}
	caught := 0
	sc.TruthPerturbed = 0
	for _, k := range Kinds {
		if k == KindRepeat {
			continue
		}
		sc.TruthRejectedBy[k] = share(sc.tByKind[k], sc.tOfKind[k])
		if headline(k) {
			sc.TruthPerturbed += sc.tOfKind[k]
			caught += sc.tByKind[k]
		}
	}
	tr := share(caught, sc.TruthPerturbed)
	sc.TruthRejected = &tr
	gp := 1.0
	if sc.GenTotal > 0 {
		gp = share(sc.GenInTruth, sc.GenTotal)
	}
	sc.GenPrecision = &gp
}

func overall(folds []Scores) Scores {
	o := Scores{byKind: map[string]int{}, ofKind: map[string]int{}}
	for _, f := range folds {
		o.Train += f.Train
		o.Test += f.Test
		o.accepted += f.accepted
		o.fitSum += f.fitSum
		o.Perturbed += f.Perturbed
		o.rejected += f.rejected
		o.rejectedReal += f.rejectedReal
		for _, k := range Kinds {
			o.byKind[k] += f.byKind[k]
			o.ofKind[k] += f.ofKind[k]
		}
		if f.truth {
			if !o.truth {
				o.truth = true
				o.tByKind, o.tOfKind = map[string]int{}, map[string]int{}
			}
			for _, k := range Kinds {
				o.tByKind[k] += f.tByKind[k]
				o.tOfKind[k] += f.tOfKind[k]
			}
			o.GenTotal += f.GenTotal
			o.GenInTruth += f.GenInTruth
			o.GenOutside = addGenOutside(o.GenOutside, f.GenOutside...)
		}
		o.States += f.States
		o.Transitions += f.Transitions
		o.Common += f.Common
		o.Generalized += f.Generalized
		o.BuildMS += f.BuildMS
	}
	k := float64(len(folds))
	o.Train = int(float64(o.Train)/k + 0.5)
	o.States, o.Transitions, o.Common, o.Generalized = round1(o.States/k), round1(o.Transitions/k), round1(o.Common/k), round1(o.Generalized/k)
	o.BuildMS = round1(o.BuildMS / k)
	o.finish()
	return o
}

func share(k, n int) float64 {
	if n == 0 {
		return 0
	}
	return round(float64(k) / float64(n))
}

func round(x float64) float64  { return float64(int64(x*1e4+0.5)) / 1e4 }
func round1(x float64) float64 { return float64(int64(x*10+0.5)) / 10 }

func (r *Report) pareto() {
	for i := range r.Results {
		a := &r.Results[i].Overall
		r.Results[i].Pareto = true
		for j := range r.Results {
			b := &r.Results[j].Overall
			if b.Accepted >= a.Accepted && b.Rejected >= a.Rejected && (b.Accepted > a.Accepted || b.Rejected > a.Rejected) {
				r.Results[i].Pareto = false
				break
			}
		}
	}
}

func (r *Report) recommend() {
	idx := make([]int, len(r.Results))
	for i := range idx {
		idx[i] = i
	}
	meets := func(i int) bool { return r.Results[i].Overall.Rejected >= r.MinRejected }
	sort.SliceStable(idx, func(x, y int) bool {
		a, b := &r.Results[idx[x]].Overall, &r.Results[idx[y]].Overall
		ma, mb := meets(idx[x]), meets(idx[y])
		if ma != mb {
			return ma
		}
		if !ma {
			return a.Rejected > b.Rejected
		}
		if a.Accepted != b.Accepted {
			return a.Accepted > b.Accepted
		}
		if a.Rejected != b.Rejected {
			return a.Rejected > b.Rejected
		}
		return a.Transitions < b.Transitions
	})
	r.Recommended = idx[0]
}
