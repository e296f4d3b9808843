// Package check checks sessions read from logs against a model and reports
// on them: fsmine check's summary (fit, alignment fitness, deviations by
// kind and by place, per-session verdicts) and fsmine replay's step-by-step
// walk of one session. Reports are values with a JSON shape (the commands'
// --format json) and a text form for people; the package never prints on
// its own and knows no flags.
//
// Text forms carry ids, labels, events, session ids and file names as the
// logs and the model have them; a caller writing them to a terminal escapes
// control characters on the way (cmd does, with its terminal writer).
package check

import (
	"slices"
	"sort"
	"strings"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/conform"
	"github.com/fsmine/fsmine/internal/text"
	"github.com/fsmine/fsmine/mine"
)

// ModelRef names the model a report was made against.
type ModelRef struct {
	Path    string `json:"path"`
	Version int    `json:"version"`
	Digest  string `json:"digest"`
}

// Verdict is one session's verdict, a line of fsmine check --format jsonl.
type Verdict struct {
	SessionID string     `json:"session_id"`
	Fits      bool       `json:"fits"`
	Moves     int        `json:"moves"`
	Cost      int        `json:"cost"`
	Fitness   float64    `json:"fitness"`
	Rare      int        `json:"rare"`
	General   int        `json:"generalized,omitempty"`
	Bounded   bool       `json:"bounded,omitempty"`
	Deviation *Deviation `json:"deviation"`
	Risk      Risk       `json:"risk"`
	// Map names the map of a conditioned model that judged the session
	// (see Collector.ConditionOn); empty for a model that is not.
	Map string `json:"map,omitempty"`
}

// Risk is a session's surprisal under the model (see conform.Risk), in
// bits rounded to 6 decimals: Total over its moves, PerStep the mean per
// move, End its move into __end__ (the surprisal of ending where it
// ended: high for a session that stops where sessions go on), and Top the
// most surprising move (every session has one: the move into __end__ at
// least).
type Risk struct {
	Total   float64  `json:"total"`
	PerStep float64  `json:"per_step"`
	End     float64  `json:"end"`
	Top     RiskMove `json:"top"`
}

// RiskMove is a session's most surprising move: its index (0 is the move
// out of __start__), the step of the record it enters (or its position, as
// Deviation.Step), the state it leaves ("" when not known after a
// deviation), its event and label, and its cost in bits.
type RiskMove struct {
	Move  int     `json:"move"`
	Step  int64   `json:"step"`
	State string  `json:"state"`
	Event string  `json:"event"`
	Label string  `json:"label"`
	Bits  float64 `json:"bits"`
}

// Deviation is where a session first leaves the model.
type Deviation struct {
	SessionID string `json:"session_id"`
	// Step is the record's step, or its 0-based position in the session
	// when the log has no steps; Move the index of the move (0 is the move
	// out of __start__).
	Step       int64   `json:"step"`
	Move       int     `json:"move"`
	Kind       string  `json:"kind"`
	State      string  `json:"state"`
	Event      string  `json:"event"`
	Label      string  `json:"label"`
	File       string  `json:"file"`
	Line       int     `json:"line"`
	Cost       int     `json:"cost"`
	Fitness    float64 `json:"fitness"`
	Iterations int     `json:"iterations,omitempty"`
	Cap        int     `json:"cap,omitempty"`
	// Constraint is the model's constraint the session breaks, for the
	// constraint kinds (missing_prerequisite, once_only, not_both).
	Constraint *automaton.Constraint `json:"constraint,omitempty"`
	// Map names the map of a conditioned model that judged the session,
	// as Verdict.Map does.
	Map string `json:"map,omitempty"`
}

// Place groups deviations of one kind at one place: the state, the event
// and the label the session moved to.
type Place struct {
	Kind  string `json:"kind"`
	State string `json:"state"`
	Event string `json:"event"`
	Label string `json:"label"`
	Count int    `json:"count"`
}

// Summary is the report of fsmine check, its --format json object. Shares
// and fitness are rounded to 6 decimals (see mine.Round6).
type Summary struct {
	Model   ModelRef `json:"model"`
	Records int      `json:"records"`
	Skipped int      `json:"skipped"`
	// Emptied counts the sessions the label rules left without a step
	// (every record dropped): not checked, as they are no sessions of the
	// log (see mine.Log.Emptied).
	Emptied         int     `json:"emptied"`
	Sessions        int     `json:"sessions"`
	Events          int     `json:"events"`
	Fit             int     `json:"fit"`
	FitShare        float64 `json:"fit_share"`
	LogFitness      float64 `json:"log_fitness"`
	MeanFitness     float64 `json:"mean_fitness"`
	Outside         int     `json:"outside"`
	OutsideShare    float64 `json:"outside_share"`
	RareMoves       int     `json:"rare_moves"`
	RareSessions    int     `json:"rare_sessions"`
	RareIsDeviation bool    `json:"rare_is_deviation"`
	// Generalised transitions taken (see automaton.Transition.Generalized).
	GeneralizedMoves       int  `json:"generalized_moves"`
	GeneralizedSessions    int  `json:"generalized_sessions"`
	GeneralizedIsDeviation bool `json:"generalized_is_deviation"`
	// MaxUnusual is the cap on a session's rare and generalised moves
	// (conform.Options.MaxUnusual), 0 for none.
	MaxUnusual int `json:"max_unusual,omitempty"`
	// MaxUnusualRun is the cap on the rare and generalised moves a session
	// takes in a row (conform.Options.MaxUnusualRun), 0 for none.
	MaxUnusualRun int            `json:"max_unusual_run,omitempty"`
	Bounded       int            `json:"bounded"`
	MinFit        *float64       `json:"min_fit,omitempty"`
	Pass          bool           `json:"pass"`
	ByKind        map[string]int `json:"by_kind"`
	// ByPlace is ordered by count, most first, then by kind (in the order
	// of Kinds), state, event and label.
	ByPlace []Place `json:"by_place"`
	// Deviations are the deviating sessions' first deviations in session
	// id order; empty unless the check kept them (Options.Deviations).
	Deviations []*Deviation `json:"deviations"`
	// Maps counts, for a conditioned model (see Collector.ConditionOn),
	// the sessions each map judged and how many fit, the shared map first;
	// nil, and left out, otherwise.
	Maps []MapCount `json:"maps,omitempty"`
	// MeanRisk is the sessions' mean surprisal in bits (see Risk).
	MeanRisk float64 `json:"mean_risk"`
	// Riskiest are the verdicts of the Options.Rank sessions with the
	// highest risk, highest first (ties by id), RankedBy the part of the
	// risk they are ranked by (Options.RankBy); left out without Rank.
	Riskiest []*Verdict `json:"riskiest,omitempty"`
	RankedBy string     `json:"ranked_by,omitempty"`
	// Args is what the arguments of tool calls broke, for a model with
	// argument rules; left out otherwise.
	Args *ArgReport `json:"args,omitempty"`

	costSum, maxSum int
	fitnessSum      float64
	riskSum         float64
	files           []automaton.SourceFile
	bad             []mine.BadLine
	warnings        []mine.BadLine
	warned          int
}

// SetMinFit sets the bar: the check passes when the share of fitting
// sessions is at least minFit. A minFit of 0 is no bar (MinFit stays nil).
func (s *Summary) SetMinFit(minFit float64) {
	s.MinFit = nil
	if minFit > 0 {
		s.MinFit = &minFit
	}
	s.Pass = s.FitShare >= minFit
}

// Kinds lists the deviation kinds in the order reports show them.
var Kinds = []string{conform.KindUnknownState, conform.KindIllegalTransition, conform.KindLoopCap, conform.KindIncomplete,
	conform.KindRepeatCap, conform.KindUnusualCap, conform.KindUnusualRun, automaton.KindMissingPrerequisite, automaton.KindOnceOnly, automaton.KindNotBoth,
	automaton.KindRerun, conform.KindRare, conform.KindGeneralized}

// kindsAlways are the kinds every report lists, with 0 when none; the
// others only when some session deviates so.
var kindsAlways = Kinds[:4]

// Options say what a check keeps of each session beyond its counters.
type Options struct {
	// Deviations keeps each deviating session's first deviation for
	// Summary.Deviations (fsmine check's json and text reports).
	Deviations bool
	// Verdicts keeps every session's verdict, fitting or not, for the emit
	// function of Collector.Summary (fsmine check --format jsonl).
	Verdicts bool
	// Rank, when above 0, ranks the sessions by risk for review: Summary's
	// Riskiest holds the verdicts of the Rank riskiest, and emit is called
	// with those alone, riskiest first.
	Rank int
	// RankBy is the part of Risk that Rank ranks by: RankTotal (also
	// when empty or none of RankBys), RankPerStep or RankEnd.
	RankBy string
}

// The parts of a session's Risk that Options.RankBy names, as Risk's JSON
// names them.
const (
	RankTotal   = "total"
	RankPerStep = "per_step"
	RankEnd     = "end"
)

// RankBys lists the values of Options.RankBy, the default first.
var RankBys = []string{RankTotal, RankPerStep, RankEnd}

// rankValue is the part of risk r that by names (see Options.RankBy).
func rankValue(r *conform.Risk, moves int, by string) float64 {
	switch by {
	case RankPerStep:
		if moves == 0 {
			return 0
		}
		return r.Bits / float64(moves)
	case RankEnd:
		return r.LastBits
	}
	return r.Bits
}

// Log checks every session of lg with c and sums them up in session id
// order. It calls emit (when not nil) with every session's verdict, in
// that order, and stops at its first error.
func Log(lg *mine.Log, c *conform.Checker, opt Options, emit func(*Verdict) error) (*Summary, error) {
	opt.Verdicts = opt.Verdicts || emit != nil
	r := NewCollector(c, opt)
	for si := range lg.Sessions {
		r.Add(lg, &lg.Sessions[si])
	}
	return r.Summary(lg, emit)
}

// Collector checks sessions one at a time as a read finishes them, in any
// order (see mine.ReadOptions.Each), and sums them up in session id order,
// so that a streaming read and one that holds every session give the same
// report. It is not safe for concurrent use.
type Collector struct {
	c   *conform.Checker
	opt Options
	// results are kept in blocks of resultBlock, so that a long read never
	// copies them to grow; results joins them for Summary's sort.
	blocks  [][]result
	results []result
	buf     []automaton.Move
	top     topK    // the riskiest sessions, with Options.Rank
	by      *byMaps // nil for a model that is not conditioned
}

// resultBlock is how many results a block of Collector holds.
const resultBlock = 4096

// result is what a session leaves behind: its verdict when verdicts are
// kept or it deviates, else only its id and figures.
type result struct {
	id      string
	verdict *Verdict
	place   *Place // nil when the session fits
	fitness float64
	events  int32
	cost    int32
	maxCost int32
	rare    int32
	general int32
	bounded bool
	outside bool
	risk    float64 // bits
	mapName string  // the map that judged it, in a conditioned model
}

// risk is the report's form of a session's risk: v's, the session's moves
// mvs.
func risk(s *mine.Session, v *conform.Verdict, mvs []automaton.Move) Risk {
	r := Risk{Total: mine.Round6(v.Risk.Bits), End: mine.Round6(v.Risk.LastBits)}
	if v.Moves > 0 {
		r.PerStep = mine.Round6(v.Risk.Bits / float64(v.Moves))
	}
	if k := v.Risk.MaxMove; k >= 0 && k < len(mvs) {
		r.Top = RiskMove{Move: k, State: v.Risk.MaxFrom, Event: mvs[k].Event, Label: mvs[k].Label, Bits: mine.Round6(v.Risk.MaxBits)}
		if len(s.Visits) > 0 {
			r.Top.Step = visitStep(moveRecord(s, k), min(k, len(s.Visits)-1))
		}
	}
	return r
}

// NewCollector returns a collector that checks sessions with c. An
// Options.RankBy that is none of RankBys ranks by RankTotal.
func NewCollector(c *conform.Checker, opt Options) *Collector {
	if !slices.Contains(RankBys, opt.RankBy) {
		opt.RankBy = RankTotal
	}
	return &Collector{c: c, opt: opt, top: topK{k: opt.Rank}}
}

// Reset forgets every session added, for a read that starts over.
func (r *Collector) Reset() { r.blocks, r.results, r.top = nil, nil, topK{k: r.opt.Rank} }

// all returns every result added, in one slice.
func (r *Collector) all() []result {
	if len(r.blocks) > 0 {
		n := len(r.results)
		for _, b := range r.blocks {
			n += len(b)
		}
		all := make([]result, 0, n)
		all = append(all, r.results...)
		for _, b := range r.blocks {
			all = append(all, b...)
		}
		r.blocks, r.results = nil, all
	}
	return r.results
}

// Add checks session s of lg.
func (r *Collector) Add(lg *mine.Log, s *mine.Session) {
	r.buf = lg.AppendMoves(r.buf[:0], s)
	c, mapName := r.c, ""
	if r.by != nil {
		c, mapName = r.by.checker(s.ID)
	}
	v := c.Check(r.buf)
	res := result{id: s.ID, fitness: v.Fitness, events: int32(len(s.Visits)), cost: int32(v.Cost), maxCost: int32(v.MaxCost),
		rare: int32(v.Rare), general: int32(v.Generalized), bounded: v.Bounded, outside: v.Outside()}
	res.risk, res.mapName = v.Risk.Bits, mapName
	rank := rankValue(&v.Risk, v.Moves, r.opt.RankBy)
	ranked := r.opt.Rank > 0 && r.top.admits(rank, s.ID)
	var dev *Deviation
	if !v.Fits() {
		d := v.Deviation
		res.place = &Place{Kind: d.Kind, State: d.State, Event: d.Event, Label: d.Label}
		if r.opt.Deviations || r.opt.Verdicts {
			dev = deviation(lg, s, &v)
		}
	}
	if !v.Fits() && ranked && dev == nil {
		dev = deviation(lg, s, &v)
	}
	if dev != nil {
		dev.Map = mapName
	}
	if r.opt.Verdicts || dev != nil || ranked {
		vd := &Verdict{SessionID: s.ID, Fits: v.Fits(), Moves: v.Moves, Cost: v.Cost,
			Fitness: mine.Round6(v.Fitness), Rare: v.Rare, General: v.Generalized, Bounded: v.Bounded, Deviation: dev,
			Risk: risk(s, &v, r.buf), Map: mapName}
		if r.opt.Verdicts || r.opt.Deviations && dev != nil {
			res.verdict = vd
		}
		if ranked {
			r.top.push(vd, rank)
		}
	}
	if k := len(r.blocks); k == 0 || len(r.blocks[k-1]) == resultBlock {
		r.blocks = append(r.blocks, make([]result, 0, resultBlock))
	}
	k := len(r.blocks) - 1
	r.blocks[k] = append(r.blocks[k], res)
}

// deviation is the report's form of v's deviation in session s.
func deviation(lg *mine.Log, s *mine.Session, v *conform.Verdict) *Deviation {
	d := v.Deviation
	rec := moveRecord(s, d.Move)
	dev := &Deviation{
		SessionID: s.ID, Step: visitStep(rec, min(d.Move, len(s.Visits)-1)), Move: d.Move, Kind: d.Kind,
		State: d.State, Event: d.Event, Label: d.Label,
		File: lg.Files[rec.File].Path, Line: lg.InputLine(rec.File, rec.Line),
		Cost: v.Cost, Fitness: mine.Round6(v.Fitness),
	}
	if d.Kind == conform.KindLoopCap || d.Kind == conform.KindRepeatCap || d.Kind == conform.KindUnusualCap || d.Kind == conform.KindUnusualRun {
		dev.Iterations, dev.Cap = d.Iterations, d.Cap
	}
	dev.Constraint = d.Constraint
	return dev
}

// Deviating returns the ids of the sessions added that do not fit the
// model (fsmine check --outside writes their records).
func (r *Collector) Deviating() map[string]bool {
	out := map[string]bool{}
	results := r.all()
	for i := range results {
		if results[i].place != nil {
			out[results[i].id] = true
		}
	}
	return out
}

// Summary sums the sessions added up in id order, calling emit (when not
// nil) with each one's verdict: nil for a fitting session unless
// Options.Verdicts is set. lg is the log read, for its counts of records,
// skipped lines and files. Pass is set as for no bar (see SetMinFit); the
// model and the checker's options are left for the caller to name.
func (r *Collector) Summary(lg *mine.Log, emit func(*Verdict) error) (*Summary, error) {
	r.all()
	sum := &Summary{
		Records:  lg.Records,
		Skipped:  lg.Skipped,
		Emptied:  lg.Emptied,
		Sessions: len(r.results),
		ByKind:   map[string]int{},
		Pass:     true,
		files:    lg.Files,
		bad:      lg.Bad,
		warnings: lg.Warnings,
		warned:   lg.Warned,
	}
	for _, k := range kindsAlways {
		sum.ByKind[k] = 0
	}
	slices.SortFunc(r.results, func(a, b result) int { return strings.Compare(a.id, b.id) })
	places := map[Place]int{}
	for i := range r.results {
		res := &r.results[i]
		sum.Events += int(res.events)
		sum.costSum += int(res.cost)
		sum.maxSum += int(res.maxCost)
		sum.fitnessSum += res.fitness
		sum.riskSum += res.risk
		sum.RareMoves += int(res.rare)
		if res.rare > 0 {
			sum.RareSessions++
		}
		sum.GeneralizedMoves += int(res.general)
		if res.general > 0 {
			sum.GeneralizedSessions++
		}
		if res.bounded {
			sum.Bounded++
		}
		if res.outside {
			sum.Outside++
		}
		if res.place == nil {
			sum.Fit++
		} else {
			sum.ByKind[res.place.Kind]++
			places[*res.place]++
			if r.opt.Deviations {
				sum.Deviations = append(sum.Deviations, res.verdict.Deviation)
			}
		}
		if emit != nil && r.opt.Rank <= 0 {
			if err := emit(res.verdict); err != nil {
				return nil, err
			}
		}
	}
	n := len(r.results)
	if n > 0 {
		sum.MeanRisk = mine.Round6(sum.riskSum / float64(n))
	}
	if r.opt.Rank > 0 {
		sum.Riskiest, sum.RankedBy = r.top.sorted(), r.opt.RankBy
		for _, v := range sum.Riskiest {
			if emit != nil {
				if err := emit(v); err != nil {
					return nil, err
				}
			}
		}
	}
	sum.FitShare = mine.Round6(text.Share(sum.Fit, n))
	sum.OutsideShare = mine.Round6(text.Share(sum.Outside, n))
	if sum.maxSum > 0 {
		sum.LogFitness = mine.Round6(1 - float64(sum.costSum)/float64(sum.maxSum))
	} else {
		sum.LogFitness = 1
	}
	if n > 0 {
		sum.MeanFitness = mine.Round6(sum.fitnessSum / float64(n))
	}
	sum.ByPlace = make([]Place, 0, len(places))
	for p, k := range places {
		p.Count = k
		sum.ByPlace = append(sum.ByPlace, p)
	}
	sort.Slice(sum.ByPlace, func(i, j int) bool {
		a, b := sum.ByPlace[i], sum.ByPlace[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		if a.Kind != b.Kind {
			return kindRank(a.Kind) < kindRank(b.Kind)
		}
		if a.State != b.State {
			return a.State < b.State
		}
		if a.Event != b.Event {
			return a.Event < b.Event
		}
		return a.Label < b.Label
	})
	if sum.Deviations == nil {
		sum.Deviations = []*Deviation{}
	}
	sum.Maps = mapCounts(r.results)
	return sum, nil
}

// topK keeps the verdicts of the k riskiest sessions seen (ties: the
// smaller id), whatever order the sessions come in: a min-heap on risk.
type topK struct {
	k    int
	vs   []*Verdict
	bits []float64
}

// below reports whether session (a, ida) ranks below (b, idb).
func below(a float64, ida string, b float64, idb string) bool {
	if a != b {
		return a < b
	}
	return ida > idb
}

// admits reports whether a session of risk bits and id id would be kept.
func (t *topK) admits(bits float64, id string) bool {
	return len(t.vs) < t.k || below(t.bits[0], t.vs[0].SessionID, bits, id)
}

// push keeps v, of risk bits, letting the lowest go when k are kept; v
// must be admitted.
func (t *topK) push(v *Verdict, bits float64) {
	if len(t.vs) == t.k {
		t.vs[0], t.bits[0] = v, bits
		t.down(0)
		return
	}
	t.vs, t.bits = append(t.vs, v), append(t.bits, bits)
	for i := len(t.vs) - 1; i > 0; {
		p := (i - 1) / 2
		if !below(t.bits[i], t.vs[i].SessionID, t.bits[p], t.vs[p].SessionID) {
			break
		}
		t.swap(i, p)
		i = p
	}
}

func (t *topK) swap(i, j int) {
	t.vs[i], t.vs[j] = t.vs[j], t.vs[i]
	t.bits[i], t.bits[j] = t.bits[j], t.bits[i]
}

func (t *topK) down(i int) {
	for {
		l, m := 2*i+1, i
		if l < len(t.vs) && below(t.bits[l], t.vs[l].SessionID, t.bits[m], t.vs[m].SessionID) {
			m = l
		}
		if r := l + 1; r < len(t.vs) && below(t.bits[r], t.vs[r].SessionID, t.bits[m], t.vs[m].SessionID) {
			m = r
		}
		if m == i {
			return
		}
		t.swap(i, m)
		i = m
	}
}

// sorted returns the verdicts kept, riskiest first.
func (t *topK) sorted() []*Verdict {
	idx := make([]int, len(t.vs))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool {
		return below(t.bits[idx[b]], t.vs[idx[b]].SessionID, t.bits[idx[a]], t.vs[idx[a]].SessionID)
	})
	out := make([]*Verdict, len(idx))
	for j, i := range idx {
		out[j] = t.vs[i]
	}
	return out
}

func kindRank(k string) int {
	if i := slices.Index(Kinds, k); i >= 0 {
		return i
	}
	return len(Kinds)
}

// moveRecord returns the visit that stands for move i of session s: the
// visit the move enters, or for the move into __end__ the last visit.
func moveRecord(s *mine.Session, i int) *mine.Visit {
	if i >= len(s.Visits) {
		i = len(s.Visits) - 1
	}
	return &s.Visits[i]
}

// visitStep is a visit's step as reports show it: the record's step when it
// has one, else the visit's 0-based position in the session.
func visitStep(v *mine.Visit, pos int) int64 {
	if v.Step >= 0 {
		return v.Step
	}
	return int64(pos)
}
