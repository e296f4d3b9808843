package mine

import (
	"cmp"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/fsmine/fsmine/automaton"
)

// Merge strategies.
const (
	MergeLabel   = "label"
	MergeAlergia = "alergia"
	MergeBayes   = "bayes"
)

// Merges lists the merge strategies Build knows.
var Merges = []string{MergeLabel, MergeAlergia, MergeBayes}

// The default priors of MergeBayes (Options.BayesMovePrior and
// BayesStatePrior), in units of ln(moves)/2 (see learnBayes). A transition
// charged 1 is the Bayesian information criterion's charge for a
// parameter; a state charged 0.5 lets states that share no move merge
// where their futures differ little. Measured on the returns truth and two
// real logs (docs/build.md): at these the truth's two uses of one stage
// stay two states from 100 sessions on; a transition charged 8 merges them
// at 2,000.
const (
	DefaultBayesMovePrior  = 1
	DefaultBayesStatePrior = 0.5
)

// MaxBayesPrior bounds either prior: past it every merge that saves a
// transition, or a state, is taken whatever the likelihood says.
// MinBayesMovePrior is the least prior of a transition: below it almost no
// merge pays, and each of the many states kept is tried against every
// other of its label (100,000 generated sessions, no state prior: 14 s at
// 0.01, 0.75 s at 0.1, as alergia).
const (
	MaxBayesPrior     = 1000
	MinBayesMovePrior = 0.1
)

// Options shape the mined model. The zero value is not useful; start from
// DefaultOptions.
type Options struct {
	// Merge is the state-merging strategy: MergeLabel (one state per label),
	// MergeAlergia (red-blue merging of states of the same label with the
	// Alergia test, so a stage used in two contexts may stay two states) or
	// MergeBayes (the same, each merge chosen by posterior: it keeps apart
	// more than Alergia where states share few moves).
	Merge string
	// Alpha is Alergia's significance level: a smaller alpha merges more.
	Alpha float64
	// BayesMovePrior and BayesStatePrior are MergeBayes's prior: what a
	// transition and a state cost, in units of ln(moves)/2 (see
	// learnBayes); higher merges more. See CheckBayesPriors for their
	// range.
	BayesMovePrior, BayesStatePrior float64
	// RareCount flags transitions taken fewer times than this; 0 disables.
	RareCount int
	// RareRatio flags transitions whose share of their source's outflow is
	// below this; 0 disables.
	RareRatio float64
	// TopVariants is how many of the most frequent variants the model lists.
	TopVariants int
	// Generalize says which generalisations the miner may add beyond the
	// paths the sessions took, each only where a test on the log supports
	// it: GeneralizeNone, GeneralizeAuto, GeneralizeConstraints or
	// GeneralizeLoose or GeneralizeAnyOrder (see generalize.go and
	// anyorder.go).
	Generalize string
	// Examples is how many example session ids the model keeps per state
	// and per transition, from 0 (none) to MaxExamples (see examples.go).
	Examples int
	// ConstraintSupport is the fewest sessions a constraint over whole
	// sessions must hold in to be learned (see constraints.go), and under
	// any-order and loose the fewest a label needs for its absence at the
	// start of sessions to count (see anyorder.go); 0 means
	// MinConstraintSupport.
	ConstraintSupport int
}

// Generalisation settings.
const (
	GeneralizeNone = "none"
	GeneralizeAuto = "auto"
	// GeneralizeConstraints learns the constraints and run caps of auto
	// but adds no move: the narrowest map that still enforces what the
	// log shows over whole sessions.
	GeneralizeConstraints = "constraints"
	// GeneralizeAnyOrder is the permissive end: every label may follow
	// every label, and only the constraints, the run caps and the events
	// of each label decide (see anyorder.go). Its map says what a session
	// must and must not do, not the order it does it in.
	GeneralizeAnyOrder = "any-order"
	// GeneralizeLoose is the any-order end less the moves the log argues
	// against: a label's visits that ended with an event often enough,
	// and never went on to a label common elsewhere, keep that absence
	// (see anyorder.go).
	GeneralizeLoose = "loose"
)

// Generalizes lists the generalisation settings Build knows.
var Generalizes = []string{GeneralizeNone, GeneralizeAuto, GeneralizeConstraints, GeneralizeLoose, GeneralizeAnyOrder}

// DefaultOptions are the options fsmine build uses when given none.
func DefaultOptions() Options {
	return Options{Merge: MergeAlergia, Alpha: 0.01, BayesMovePrior: DefaultBayesMovePrior, BayesStatePrior: DefaultBayesStatePrior, RareRatio: 0.05, TopVariants: 10, Generalize: GeneralizeAuto, Examples: DefaultExamples}
}

// ErrNoSessions is returned by Build for a log without any session.
var ErrNoSessions = errors.New("no sessions in the input")

// CheckBayesPriors says whether the options' bayes priors are in range:
// the move's from MinBayesMovePrior, the state's from 0, both at most
// MaxBayesPrior.
func (opt Options) CheckBayesPriors() error {
	for _, x := range []struct {
		name   string
		v, min float64
	}{{"move", opt.BayesMovePrior, MinBayesMovePrior}, {"state", opt.BayesStatePrior, 0}} {
		if !(x.v >= x.min && x.v <= MaxBayesPrior) {
			return fmt.Errorf("prior of a %s %v: want a number from %g to %d", x.name, x.v, x.min, MaxBayesPrior)
		}
	}
	return nil
}

// Build mines a model from a log: sessions become move sequences, distinct
// sequences (variants) are merged into an automaton by opt.Merge, and every
// session is walked through it to count visits, transitions, dwell times and
// loop iterations. The model's Source and Params are filled from the log and
// options; Version, Parent, Created and Generator are the caller's.
func Build(lg *Log, opt Options) (*automaton.Model, error) {
	if opt.ConstraintSupport < 0 {
		return nil, fmt.Errorf("constraint support %d: want 1 or more (0: MinConstraintSupport)", opt.ConstraintSupport)
	}
	if opt.Examples < 0 || opt.Examples > MaxExamples {
		return nil, fmt.Errorf("examples %d: want 0 to %d", opt.Examples, MaxExamples)
	}
	b := &builder{lg: lg, opt: opt}
	b.startLabel = lg.intern(automaton.StartID)
	b.variants()
	if b.tally.sessions == 0 {
		return nil, ErrNoSessions
	}
	switch opt.Merge {
	case MergeLabel:
		b.d = learnLabel(b.vars, b.startLabel)
	case MergeAlergia:
		if !(opt.Alpha > 0 && opt.Alpha < 1) {
			return nil, fmt.Errorf("alpha %v: want a number between 0 and 1", opt.Alpha)
		}
		b.d = learnAlergia(buildPTA(b.vars, b.startLabel, b.lessMove), opt.Alpha)
	case MergeBayes:
		if err := opt.CheckBayesPriors(); err != nil {
			return nil, err
		}
		b.d = learnBayes(buildPTA(b.vars, b.startLabel, b.lessMove), opt.BayesMovePrior, opt.BayesStatePrior)
	default:
		return nil, fmt.Errorf("merge %q: want one of %s", opt.Merge, strings.Join(Merges, ", "))
	}
	if err := b.walk(); err != nil {
		return nil, err
	}
	switch opt.Generalize {
	case "", GeneralizeNone:
	case GeneralizeAuto, GeneralizeConstraints, GeneralizeLoose, GeneralizeAnyOrder:
		if err := b.generalize(); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("generalize %q: want one of %s", opt.Generalize, strings.Join(Generalizes, ", "))
	}
	return b.model(), nil
}

type builder struct {
	lg         *Log
	opt        Options
	startLabel uint32
	rank       []int // name id -> rank by text
	tally      *tally
	vars       []variant // the tally's, in order of their moves' ranks
	d          *dfa

	// Filled by walk, indexed by dfa state or transition.
	end      int32
	visits   []int
	sessions []int
	dwell    []dwellHist // each state's, the sum of its prefixes'
	// dwellDone waits until dwell is summed (see sumDwell).
	dwellDone func()
	trans     map[dkey]*tstat
	paths     [][]int32              // per variant: the states it passes, start and end included
	gen       map[dkey]genEdge       // generalised transitions (see generalize.go)
	maxRun    map[uint32]int         // per label: most visits in a row, when generalising
	detour    map[uint32]bool        // name ids of detour events
	cons      []automaton.Constraint // learned when generalising (see constraints.go)
	labelSess map[uint32]int         // per label: the sessions visiting it (see labelSessions)
	stateEx   [][]example            // per state: example sessions (Options.Examples)
	transEx   map[dkey][]example
}

type tstat struct {
	to       int32
	count    int
	sessions int
	seen     int // last session counted + 1
}

func (b *builder) rankNames() {
	ids := make([]int, len(b.lg.names))
	for i := range ids {
		ids[i] = i
	}
	sort.Slice(ids, func(i, j int) bool { return b.lg.names[ids[i]] < b.lg.names[ids[j]] })
	b.rank = make([]int, len(ids))
	for r, id := range ids {
		b.rank[id] = r
	}
}

func (b *builder) lessMove(x, y move) bool {
	if x.label() != y.label() {
		return b.rank[x.label()] < b.rank[y.label()]
	}
	return b.rank[x.event()] < b.rank[y.event()]
}

// variants takes the log's variants (tallying its sessions if it was read
// whole) in order of their moves' ranks, so that the learner sees them in an
// order independent of the input's.
func (b *builder) variants() {
	b.tally = b.lg.tally
	if b.tally == nil {
		b.tally = b.lg.tallySessions(b.opt.Examples)
	}
	b.rankNames()
	b.vars = b.tally.variants()
	sort.Slice(b.vars, func(i, j int) bool {
		x, y := b.vars[i].moves, b.vars[j].moves
		for k := 0; k < len(x) && k < len(y); k++ {
			if x[k] != y[k] {
				return b.lessMove(x[k], y[k])
			}
		}
		return len(x) < len(y)
	})
}

// sumDwell adds up the dwell times of each state's prefixes (the visits a
// prefix stands for are visits of the state it leads to) into b.dwell, on
// goroutines of its own that b.dwellDone waits for. It is the longest part
// of a build after the read (0.04 s of 1M events), so it runs beside the
// rest of the build, on as many goroutines as there are cores, each adding
// up the states of about an equal share of the bins. It only reads the
// tally.
func (b *builder) sumDwell(state []int32) {
	t := b.tally
	t.settle()
	workers := min(runtime.GOMAXPROCS(0), len(b.dwell))
	// Largest states first, each to the least loaded goroutine.
	bins := make([]int, len(b.dwell))
	for n := 1; n < len(t.nodes); n++ {
		bins[state[n]] += len(t.nodes[n].dwell.bins) + t.nodes[n].dwell.used
	}
	order := make([]int, len(bins))
	for s := range order {
		order[s] = s
	}
	slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(bins[y], bins[x]) })
	load := make([]int, workers)
	owner := make([]int, len(bins))
	for _, s := range order {
		w := slices.Index(load, slices.Min(load))
		owner[s] = w
		load[w] += bins[s]
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 1; n < len(t.nodes); n++ {
				if owner[state[n]] == w {
					b.dwell[state[n]].addAll(&t.nodes[n].dwell)
				}
			}
		}()
	}
	b.dwellDone = wg.Wait
}

// walk runs every variant through the learned automaton, counting: what
// holds for a variant holds for each of the sessions that took it.
func (b *builder) walk() error {
	d := b.d
	n := len(d.label)
	b.visits = make([]int, n)
	b.sessions = make([]int, n)
	b.dwell = make([]dwellHist, n)
	b.trans = map[dkey]*tstat{}
	b.paths = make([][]int32, len(b.vars))
	b.end = -1
	stamp := make([]int, n) // the last variant + 1 that passed the state
	for vi := range b.vars {
		v := &b.vars[vi]
		path := make([]int32, 1, len(v.moves)+1)
		cur := int32(0)
		for _, mv := range v.moves {
			nx, ok := d.next[dkey{cur, mv}]
			if !ok {
				return fmt.Errorf("internal error: learned automaton rejects a training variant at %s", b.lg.names[mv.label()])
			}
			k := dkey{cur, mv}
			t := b.trans[k]
			if t == nil {
				t = &tstat{to: nx}
				b.trans[k] = t
			}
			t.count += v.count
			if t.seen != vi+1 {
				t.seen = vi + 1
				t.sessions += v.count
			}
			cur = nx
			path = append(path, cur)
		}
		if b.end < 0 {
			b.end = cur
		} else if b.end != cur {
			return errors.New("internal error: learned automaton has two end states")
		}
		b.paths[vi] = path
		for _, st := range path {
			b.visits[st] += v.count
			if stamp[st] != vi+1 {
				stamp[st] = vi + 1
				b.sessions[st] += v.count
			}
		}
	}
	t := b.tally
	state := make([]int32, len(t.nodes)) // the state each prefix leads to
	for n := 1; n < len(t.nodes); n++ {
		tn := &t.nodes[n]
		state[n] = d.next[dkey{state[tn.parent], tn.mv}]
	}
	b.sumDwell(state)
	if b.opt.Examples > 0 {
		b.stateEx, b.transEx = t.examples(state, n, b.opt.Examples)
	}
	return nil
}
