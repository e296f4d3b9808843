package mine

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/fsmine/fsmine/automaton"
)

// Merge strategies.
const (
	MergeLabel   = "label"
	MergeAlergia = "alergia"
)

// Merges lists the merge strategies Build knows.
var Merges = []string{MergeLabel, MergeAlergia}

// Options shape the mined model. The zero value is not useful; start from
// DefaultOptions.
type Options struct {
	// Merge is the state-merging strategy: MergeLabel (one state per label)
	// or MergeAlergia (red-blue merging of states of the same label with the
	// Alergia test, so a stage used in two contexts may stay two states).
	Merge string
	// Alpha is Alergia's significance level: a smaller alpha merges more.
	Alpha float64
	// RareCount flags transitions taken fewer times than this; 0 disables.
	RareCount int
	// RareRatio flags transitions whose share of their source's outflow is
	// below this; 0 disables.
	RareRatio float64
	// TopVariants is how many of the most frequent variants the model lists.
	TopVariants int
}

// DefaultOptions are the options fsmine build uses when given none.
func DefaultOptions() Options {
	return Options{Merge: MergeAlergia, Alpha: 0.01, RareRatio: 0.05, TopVariants: 10}
}

// ErrNoSessions is returned by Build for a log without any session.
var ErrNoSessions = errors.New("no sessions in the input")

// Build mines a model from a log: sessions become move sequences, distinct
// sequences (variants) are merged into an automaton by opt.Merge, and every
// session is walked through it to count visits, transitions, dwell times and
// loop iterations. The model's Source and Params are filled from the log and
// options; Version, Parent, Created and Generator are the caller's.
func Build(lg *Log, opt Options) (*automaton.Model, error) {
	if len(lg.Sessions) == 0 {
		return nil, ErrNoSessions
	}
	b := &builder{lg: lg, opt: opt}
	b.startLabel = lg.intern(automaton.StartID)
	b.endLabel = lg.intern(automaton.EndID)
	b.noEvent = lg.intern("")
	b.rankNames()
	b.variants()
	switch opt.Merge {
	case MergeLabel:
		b.d = learnLabel(b.vars, b.startLabel)
	case MergeAlergia:
		if !(opt.Alpha > 0 && opt.Alpha < 1) {
			return nil, fmt.Errorf("alpha %v: want a number between 0 and 1", opt.Alpha)
		}
		b.d = learnAlergia(buildPTA(b.vars, b.startLabel, b.lessMove), opt.Alpha)
	default:
		return nil, fmt.Errorf("merge %q: want one of %s", opt.Merge, strings.Join(Merges, ", "))
	}
	if err := b.walk(); err != nil {
		return nil, err
	}
	return b.model(), nil
}

type builder struct {
	lg                            *Log
	opt                           Options
	startLabel, endLabel, noEvent uint32
	rank                          []int // name id -> rank by text
	vars                          []variant
	sessVar                       []int // session -> variant
	d                             *dfa

	// Filled by walk, indexed by dfa state or transition.
	end      int32
	visits   []int
	sessions []int
	dwell    [][]float64
	trans    map[dkey]*tstat
	paths    [][]int32 // per variant: the states it passes, start and end included
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

// moves returns a session's move sequence, ending with the move into EndID.
func (b *builder) moves(s *Session, buf []move) []move {
	buf = buf[:0]
	ev := b.noEvent
	for _, v := range s.Visits {
		buf = append(buf, mkMove(ev, v.Label))
		ev = v.Event
	}
	return append(buf, mkMove(ev, b.endLabel))
}

// variants collects the distinct move sequences, in order of their text so
// that the learner sees them in an order independent of the input's.
func (b *builder) variants() {
	idx := map[string]int{}
	b.sessVar = make([]int, len(b.lg.Sessions))
	var buf []move
	var key []byte
	for si := range b.lg.Sessions {
		buf = b.moves(&b.lg.Sessions[si], buf)
		key = key[:0]
		for _, m := range buf {
			key = append(key, byte(m>>56), byte(m>>48), byte(m>>40), byte(m>>32), byte(m>>24), byte(m>>16), byte(m>>8), byte(m))
		}
		vi, ok := idx[string(key)]
		if !ok {
			vi = len(b.vars)
			idx[string(key)] = vi
			b.vars = append(b.vars, variant{moves: append([]move(nil), buf...)})
		}
		b.vars[vi].count++
		b.sessVar[si] = vi
	}
	// Sort variants by their moves' ranks and renumber sessions' variants.
	order := make([]int, len(b.vars))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool {
		x, y := b.vars[order[i]].moves, b.vars[order[j]].moves
		for k := 0; k < len(x) && k < len(y); k++ {
			if x[k] != y[k] {
				return b.lessMove(x[k], y[k])
			}
		}
		return len(x) < len(y)
	})
	newIdx := make([]int, len(order))
	sorted := make([]variant, len(order))
	for n, o := range order {
		newIdx[o] = n
		sorted[n] = b.vars[o]
	}
	b.vars = sorted
	for si := range b.sessVar {
		b.sessVar[si] = newIdx[b.sessVar[si]]
	}
}

// walk runs every session through the learned automaton, counting.
func (b *builder) walk() error {
	d := b.d
	n := len(d.label)
	b.visits = make([]int, n)
	b.sessions = make([]int, n)
	b.dwell = make([][]float64, n)
	b.trans = map[dkey]*tstat{}
	b.paths = make([][]int32, len(b.vars))
	b.end = -1
	for vi, v := range b.vars {
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
			cur = nx
			path = append(path, cur)
		}
		if b.end < 0 {
			b.end = cur
		} else if b.end != cur {
			return errors.New("internal error: learned automaton has two end states")
		}
		b.paths[vi] = path
	}
	stamp := make([]int, n)
	for si := range b.lg.Sessions {
		s := &b.lg.Sessions[si]
		vi := b.sessVar[si]
		path := b.paths[vi]
		mvs := b.vars[vi].moves
		for i, st := range path {
			b.visits[st]++
			if stamp[st] != si+1 {
				stamp[st] = si + 1
				b.sessions[st]++
			}
			if i > 0 && i-1 < len(s.Visits) && s.Visits[i-1].HasDwell {
				b.dwell[st] = append(b.dwell[st], s.Visits[i-1].DwellMS)
			}
			if i+1 < len(path) {
				t := b.trans[dkey{st, mvs[i]}]
				t.count++
				if t.seen != si+1 {
					t.seen = si + 1
					t.sessions++
				}
			}
		}
	}
	return nil
}
