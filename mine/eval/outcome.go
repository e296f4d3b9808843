package eval

// Outcome evaluation: how well a session's risk (its surprisal under a
// model, see conform.Risk) tells the sessions that failed from those that
// succeeded, on sessions the model was not mined from.
//
// The folds are Run's. For each fold, models are mined from the other
// folds' sessions (those that succeeded, those that failed, and all of
// them) and each held-out session gets every score of Scores. The ROC AUC
// of a score is the chance that a failed session scores above a succeeded
// one (ties count half: the Mann-Whitney statistic). A score flags a
// session above a threshold chosen without the held-out fold: the other
// folds are cross-validated among themselves the same way (an inner
// cross-validation), and the threshold is the one that best separates
// their out-of-fold scores (Youden's J, the largest true-positive rate less
// false-positive rate). Which score to trust is chosen the same way, per
// fold: the one with the highest AUC on the inner cross-validation.
//
// With a field to condition on (Options.By and a setting with By), each
// session is also judged by the conditioned model (mine.BuildBy): the map
// of the training sessions that share its value (a request: the task a
// session was given), the shared map where the value has none. Sessions
// that take the path their task's successes took are expected; those that
// wander from it, though each move is common elsewhere, are not.

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/conform"
	"github.com/fsmine/fsmine/internal/text"
	"github.com/fsmine/fsmine/mine"
)

// Scores of a session that OutcomeReport compares, in report order. The
// risk scores are surprisals in bits; "per move" divides by the session's
// moves; "ratio" is the log-likelihood ratio of failure: the surprisal
// under the map of succeeded sessions less that under the map of failed
// ones. Length, the number of moves, is the baseline. The "|by" scores
// are surprisals under a conditioned model (see Outcome), scored only when
// there is a field to condition on.
const (
	ScoreRisk           = "risk"              // under a model of the succeeded sessions
	ScoreRiskPerMove    = "risk/move"         // the same, per move
	ScoreRiskAll        = "risk_all"          // under a model of all sessions
	ScoreRiskAllPerMove = "risk_all/move"     // the same, per move
	ScoreRatio          = "ratio"             // risk less the surprisal under a model of the failed sessions
	ScoreRatioPerMove   = "ratio/move"        // the same, per move
	ScoreEnd            = "end"               // the move into __end__ alone, under a model of all sessions
	ScoreRiskBy         = "risk|by"           // under a conditioned model of the succeeded sessions
	ScoreRiskAllBy      = "risk_all|by"       // under a conditioned model of all sessions
	ScoreLength         = "length"            // the session's moves: the baseline
	ScoreSelected       = "selected by inner" // per fold, the score of the best inner AUC
)

// OutcomeScoreNames lists the scores in report order; the conditioned
// ones (OutcomeByScoreNames) come before ScoreLength when scored.
var OutcomeScoreNames = []string{ScoreRisk, ScoreRiskPerMove, ScoreRiskAll, ScoreRiskAllPerMove, ScoreRatio, ScoreRatioPerMove, ScoreEnd, ScoreLength}

// OutcomeByScoreNames lists the scores of a conditioned model, in report
// order.
var OutcomeByScoreNames = []string{ScoreRiskBy, ScoreRiskAllBy}

// ErrOneOutcome is wrapped by the error Outcome returns when every session
// with an outcome succeeded, or every one failed: there is nothing to tell
// apart.
var ErrOneOutcome = errors.New("one outcome")

// OutcomeReport is what Outcome measured.
type OutcomeReport struct {
	// Expr is the outcome expression; Sessions the sessions with an
	// outcome, Failed how many of them failed, Unknown the sessions of the
	// log without one (left out).
	Expr     string `json:"expr"`
	Sessions int    `json:"sessions"`
	Failed   int    `json:"failed"`
	Unknown  int    `json:"unknown"`
	// Emptied are the sessions with an outcome that label rules left
	// without a step (every record dropped), EmptiedFailed how many of
	// them failed: left out, as no model can score them.
	Emptied       int `json:"emptied"`
	EmptiedFailed int `json:"emptied_failed"`
	// Setting is the mining setting of every model; By the field the
	// conditioned models are conditioned on, with ByMin and ByMode as
	// Setting's (empty when there are none).
	Setting string `json:"setting"`
	By      string `json:"by,omitempty"`
	ByMin   int    `json:"by_min,omitempty"`
	ByMode  string `json:"by_mode,omitempty"`
	// Scores are per score (OutcomeScoreNames with the conditioned ones
	// when scored, then ScoreSelected).
	Scores []OutcomeResult `json:"scores"`
}

// OutcomeResult is one score's figures, per fold and overall.
type OutcomeResult struct {
	Name    string         `json:"name"`
	Folds   []OutcomeFold  `json:"folds"`
	Overall OutcomeOverall `json:"overall"`
}

// OutcomeFold is a score on one held-out fold. AUC is nil when the fold
// holds no failed or no succeeded session. Threshold is the one chosen on
// the other folds (nil when their inner cross-validation scored no failed
// or no succeeded session, and then no session is flagged); Flagged is the share of the fold's failed sessions
// scoring above it, Passed the share of its succeeded ones not above it.
// Chosen names the score ScoreSelected took for the fold.
type OutcomeFold struct {
	Test      int      `json:"test"`
	Failed    int      `json:"failed"`
	AUC       *float64 `json:"auc"`
	InnerAUC  *float64 `json:"inner_auc"`
	Threshold *float64 `json:"threshold"`
	Flagged   float64  `json:"flagged"`
	Passed    float64  `json:"passed"`
	Chosen    string   `json:"chosen,omitempty"`

	flagged, passed int
}

// OutcomeOverall sums a score up over folds: AUC is the mean of the folds'
// (nil when none has one), Pooled the AUC of every held-out score together
// (nil for ScoreSelected, whose folds' scores are not on one scale), and
// Flagged and Passed are over every held-out session.
type OutcomeOverall struct {
	AUC     *float64 `json:"auc"`
	Pooled  *float64 `json:"pooled_auc"`
	Flagged float64  `json:"flagged"`
	Passed  float64  `json:"passed"`
}

// Outcome cross-validates the risk scores of lg's sessions against their
// outcomes (succeeded: session id -> true; sessions not in the map are left
// out) on opt.Folds folds, mining every model with opt.Settings[0] over
// opt.Base. When opt.By holds values and a setting of opt.Settings has By,
// the first such setting's field, ByMin and ByMode condition the models of
// the "|by" scores. Its errors wrap ErrTooFew as Run's do, and
// ErrOneOutcome when the sessions with an outcome all succeeded or all
// failed.
func Outcome(lg *mine.Log, expr string, succeeded map[string]bool, opt Options) (*OutcomeReport, error) {
	if lg.Streamed {
		return nil, errors.New("eval: the log was read streaming; read it whole")
	}
	if opt.Folds < 2 {
		return nil, fmt.Errorf("eval: %d folds: want at least 2", opt.Folds)
	}
	setting, bopt := outcomeSetting(opt)

	rep := &OutcomeReport{Expr: expr, Setting: setting.String()}
	by := conditioning(opt)
	names := OutcomeScoreNames
	if by != nil {
		rep.By, rep.ByMin, rep.ByMode = by.opt.Field, by.opt.MinSessions, by.opt.Mode
		names = slices.Insert(slices.Clone(names), len(names)-1, OutcomeByScoreNames...)
	}
	inLog := make(map[string]bool, len(lg.Sessions))
	for i := range lg.Sessions {
		inLog[lg.Sessions[i].ID] = true
	}
	for id, ok := range succeeded {
		if !inLog[id] {
			rep.Emptied++
			if !ok {
				rep.EmptiedFailed++
			}
		}
	}
	var ss []sample
	for i := range lg.Sessions {
		s := &lg.Sessions[i]
		ok, known := succeeded[s.ID]
		if !known {
			rep.Unknown++
			continue
		}
		ss = append(ss, sample{si: i, failed: !ok, fold: Fold(s.ID, opt.Folds), inner: innerFold(s.ID, opt.Folds), moves: lg.Moves(s)})
		if !ok {
			rep.Failed++
		}
	}
	rep.Sessions = len(ss)
	switch {
	case rep.Sessions == 0:
		return nil, fmt.Errorf("%w: no session has an outcome under %s", ErrOneOutcome, expr)
	case rep.Failed == 0:
		return nil, fmt.Errorf("%w: every one of the %d sessions with an outcome succeeded under %s: no failure to tell apart", ErrOneOutcome, rep.Sessions, expr)
	case rep.Failed == rep.Sessions:
		return nil, fmt.Errorf("%w: every one of the %d sessions with an outcome failed under %s: no success to tell apart", ErrOneOutcome, rep.Sessions, expr)
	case rep.Sessions < opt.Folds:
		return nil, fmt.Errorf("%w: %d sessions have an outcome, fewer than the %d folds", ErrTooFew, rep.Sessions, opt.Folds)
	}
	for f := 0; f < opt.Folds; f++ {
		if !slices.ContainsFunc(ss, func(s sample) bool { return s.fold == f }) {
			return nil, fmt.Errorf("%w: fold %d of %d holds no session with an outcome; use fewer folds", ErrTooFew, f+1, opt.Folds)
		}
	}

	nscores := len(names)
	rep.Scores = make([]OutcomeResult, nscores+1)
	for k := range rep.Scores {
		name := ScoreSelected
		if k < nscores {
			name = names[k]
		}
		rep.Scores[k] = OutcomeResult{Name: name, Folds: make([]OutcomeFold, opt.Folds)}
	}
	pooled := make([][]scored, nscores)
	for f := 0; f < opt.Folds; f++ {
		var train, test []*sample
		for i := range ss {
			if ss[i].fold == f {
				test = append(test, &ss[i])
			} else {
				train = append(train, &ss[i])
			}
		}
		outer, err := scoreSamples(lg, train, test, bopt, by)
		if err != nil {
			return nil, fmt.Errorf("fold %d: %w", f+1, err)
		}
		inner, err := innerScores(lg, train, opt.Folds, bopt, by)
		if err != nil {
			return nil, fmt.Errorf("fold %d, %w", f+1, err)
		}
		best, bestAUC := -1, -1.0
		for k := 0; k < nscores; k++ {
			in := make([]scored, 0, len(train))
			for i, s := range train {
				if v := inner[i][k]; !math.IsNaN(v) {
					in = append(in, scored{v, s.failed})
				}
			}
			out := make([]scored, 0, len(test))
			for i, s := range test {
				if v := outer[i][k]; !math.IsNaN(v) {
					out = append(out, scored{v, s.failed})
				}
			}
			fo := evalFold(in, out)
			fo.Test, fo.Failed = len(test), countFailed(test)
			rep.Scores[k].Folds[f] = fo
			pooled[k] = append(pooled[k], out...)
			if names[k] != ScoreLength && fo.InnerAUC != nil && *fo.InnerAUC > bestAUC {
				best, bestAUC = k, *fo.InnerAUC
			}
		}
		if best >= 0 {
			sel := rep.Scores[best].Folds[f]
			sel.Chosen = names[best]
			rep.Scores[nscores].Folds[f] = sel
		}
	}
	for k := range rep.Scores {
		r := &rep.Scores[k]
		var aucs []float64
		flagged, passed, failed, test := 0, 0, 0, 0
		for _, fo := range r.Folds {
			if fo.AUC != nil {
				aucs = append(aucs, *fo.AUC)
			}
			flagged += fo.flagged
			passed += fo.passed
			failed += fo.Failed
			test += fo.Test
		}
		if len(aucs) > 0 {
			r.Overall.AUC = ptr(round(mean(aucs)))
		}
		r.Overall.Flagged = share(flagged, failed)
		r.Overall.Passed = share(passed, test-failed)
		if k < nscores {
			if a, ok := auc(pooled[k]); ok {
				r.Overall.Pooled = ptr(round(a))
			}
		}
	}
	return rep, nil
}

// innerScores is the inner cross-validation: the sessions of train split
// into folds folds again, by another hash of their ids (innerFold), each
// held out of the rest in turn; it returns the scores of each session of
// train (see scoreSamples) when held out.
func innerScores(lg *mine.Log, train []*sample, folds int, bopt mine.Options, by *byModels) ([][]float64, error) {
	inner := make([][]float64, len(train))
	for g := 0; g < folds; g++ {
		var itrain, itest []*sample
		var at []int
		for i, s := range train {
			if s.inner == g {
				itest = append(itest, s)
				at = append(at, i)
			} else {
				itrain = append(itrain, s)
			}
		}
		sc, err := scoreSamples(lg, itrain, itest, bopt, by)
		if err != nil {
			return nil, fmt.Errorf("inner fold %d: %w", g+1, err)
		}
		for j, i := range at {
			inner[i] = sc[j]
		}
	}
	return inner, nil
}

// innerFold is a session's fold in the inner cross-validation: its id's
// FNV-1a hash mixed by SplitMix64's finaliser, so that it does not follow
// Fold (whose low bits a prefix to the id would leave in step).
func innerFold(id string, folds int) int {
	h := fnv.New64a()
	h.Write([]byte(id))
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return int(x % uint64(folds))
}

// sample is a session with an outcome.
type sample struct {
	si     int // index into the log's sessions
	failed bool
	fold   int
	inner  int // the session's fold in an inner cross-validation
	moves  []automaton.Move
}

// scored is one session's score and outcome.
type scored struct {
	v      float64
	failed bool
}

func countFailed(ss []*sample) int {
	n := 0
	for _, s := range ss {
		if s.failed {
			n++
		}
	}
	return n
}

// byModels is what conditions the models of the "|by" scores.
type byModels struct {
	opt    mine.ByOptions
	values map[string]string // session id -> value
}

// outcomeSetting is the setting whose models Outcome scores risk under,
// the first of opt.Settings (the base options' without any), and the
// mining options for it. The caps on unusual moves judge sessions, not
// risk: it is left out.
func outcomeSetting(opt Options) (Setting, mine.Options) {
	setting := Setting{Merge: opt.Base.Merge, Alpha: opt.Base.Alpha, Generalize: opt.Base.Generalize}
	if opt.Base.Merge == mine.MergeBayes {
		setting.PriorMove, setting.PriorState = opt.Base.BayesMovePrior, opt.Base.BayesStatePrior
	}
	if len(opt.Settings) > 0 {
		setting = opt.Settings[0].mined()
	}
	bopt := setting.options(opt.Base)
	bopt.Examples = 0
	return setting, bopt
}

// conditioning returns the conditioning of the first setting of opt with
// By, or nil when there is none or no values.
func conditioning(opt Options) *byModels {
	if len(opt.By) == 0 {
		return nil
	}
	for _, s := range opt.Settings {
		if s.By != "" {
			return &byModels{opt: mine.ByOptions{Field: s.By, MinSessions: s.ByMin, Mode: s.ByMode}, values: opt.By}
		}
	}
	return nil
}

// scoreSamples mines models from train (its succeeded sessions, its failed
// ones, all of them; and, when by is not nil, conditioned models of its
// succeeded sessions and of all of them) and returns every score of
// OutcomeScoreNames for each session of test, the conditioned ones before
// the length when by is not nil (NaN where a model could not be mined: no
// session of the kind in train).
func scoreSamples(lg *mine.Log, train, test []*sample, bopt mine.Options, by *byModels) ([][]float64, error) {
	in := func(keep func(s *sample) bool) map[int]bool {
		out := map[int]bool{}
		for _, s := range train {
			if keep(s) {
				out[s.si] = true
			}
		}
		return out
	}
	succeeded, failed := in(func(s *sample) bool { return !s.failed }), in(func(s *sample) bool { return s.failed })
	every := in(func(*sample) bool { return true })
	ok, okBy, err := checkersOf(lg, succeeded, bopt, by)
	if err != nil {
		return nil, err
	}
	bad, _, err := checkersOf(lg, failed, bopt, nil)
	if err != nil {
		return nil, err
	}
	all, allBy, err := checkersOf(lg, every, bopt, by)
	if err != nil {
		return nil, err
	}
	nan := math.NaN()
	risk := func(c func(id string) *conform.Checker, s *sample) conform.Risk {
		if c == nil {
			return conform.Risk{Bits: nan, LastBits: nan}
		}
		return c(lg.Sessions[s.si].ID).Check(s.moves).Risk
	}
	bits := func(c func(id string) *conform.Checker, s *sample) float64 { return risk(c, s).Bits }
	out := make([][]float64, len(test))
	for i, s := range test {
		n := float64(len(s.moves))
		ar := risk(all, s)
		r, ra, rb := bits(ok, s), ar.Bits, bits(bad, s)
		out[i] = []float64{r, r / n, ra, ra / n, r - rb, (r - rb) / n, ar.LastBits}
		if by != nil {
			out[i] = append(out[i], bits(okBy, s), bits(allBy, s))
		}
		out[i] = append(out[i], n)
	}
	return out, nil
}

// checkersOf mines a model from the sessions of lg in keep (indices into
// lg.Sessions) and returns the checker of that model and, when by is not
// nil, of the model conditioned as by says, which judges a session by its
// id; nils when keep is empty. The conditioned model's shared map is the
// model itself, so it is mined once.
func checkersOf(lg *mine.Log, keep map[int]bool, bopt mine.Options, by *byModels) (shared, byID func(id string) *conform.Checker, err error) {
	if len(keep) == 0 {
		return nil, nil, nil
	}
	sub := lg.Subset(func(s *mine.Session) bool { return keep[sessionIndex(lg, s)] })
	var m *automaton.Model
	if by != nil {
		m, err = mine.BuildBy(sub, bopt, by.opt, by.values)
	} else {
		m, err = mine.Build(sub, bopt)
	}
	if err != nil {
		return nil, nil, err
	}
	// Only the risk is wanted: an alignment of one node is enough.
	checkers := conform.NewCheckers(conform.Options{MaxAlignStates: 1})
	shared = func(string) *conform.Checker { return checkers.For(m) }
	if by != nil {
		byID = func(id string) *conform.Checker { return checkers.For(m.For(by.values[id])) }
	}
	return shared, byID, nil
}

// sessionIndex returns the index of s in lg.Sessions; s must point into it.
func sessionIndex(lg *mine.Log, s *mine.Session) int {
	// Subset passes pointers into lg.Sessions, sorted by id.
	return sort.Search(len(lg.Sessions), func(i int) bool { return lg.Sessions[i].ID >= s.ID })
}

// evalFold scores a fold: the threshold and the inner AUC from in, the
// AUC and the shares at the threshold on out.
func evalFold(in, out []scored) OutcomeFold {
	var fo OutcomeFold
	if a, ok := auc(in); ok {
		fo.InnerAUC = ptr(round(a))
	}
	if a, ok := auc(out); ok {
		fo.AUC = ptr(round(a))
	}
	th := youden(in)
	failed := 0
	for _, s := range out {
		switch {
		case s.failed:
			failed++
			if s.v > th {
				fo.flagged++
			}
		case s.v <= th:
			fo.passed++
		}
	}
	fo.Flagged = share(fo.flagged, failed)
	fo.Passed = share(fo.passed, len(out)-failed)
	if !math.IsInf(th, 0) {
		fo.Threshold = ptr(math.Round(th*1e4) / 1e4)
	}
	return fo
}

// auc is the ROC AUC of scores for failure (the Mann-Whitney U over the
// product of the counts; ties count half), and false when there are no
// failures or no successes.
func auc(ss []scored) (float64, bool) {
	s := slices.Clone(ss)
	slices.SortFunc(s, func(a, b scored) int {
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
	var nf, np float64
	var rankSum float64 // of the failures, ranks from 1, ties averaged
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j].v == s[i].v {
			j++
		}
		r := float64(i+1+j) / 2
		for k := i; k < j; k++ {
			if s[k].failed {
				rankSum += r
				nf++
			} else {
				np++
			}
		}
		i = j
	}
	if nf == 0 || np == 0 {
		return 0, false
	}
	return (rankSum - nf*(nf+1)/2) / (nf * np), true
}

// youden returns the threshold t that maximises the share of failures
// scoring above t less the share of successes scoring above it, over the
// midpoints between consecutive distinct scores (ties: the lowest); +Inf
// when ss has no failure or no success.
func youden(ss []scored) float64 {
	s := slices.Clone(ss)
	slices.SortFunc(s, func(a, b scored) int {
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
	nf := 0
	for _, x := range s {
		if x.failed {
			nf++
		}
	}
	np := len(s) - nf
	if nf == 0 || np == 0 {
		return math.Inf(1)
	}
	// Above a threshold below every score: all flagged, J = 0.
	best, bestJ := s[0].v-1, 0.0
	fBelow, pBelow := 0, 0
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j].v == s[i].v {
			if s[j].failed {
				fBelow++
			} else {
				pBelow++
			}
			j++
		}
		if j == len(s) {
			break
		}
		jv := float64(nf-fBelow)/float64(nf) - float64(np-pBelow)/float64(np)
		if jv > bestJ {
			best, bestJ = (s[i].v+s[j].v)/2, jv
		}
		i = j
	}
	return best
}

func mean(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t / float64(len(xs))
}

func ptr(x float64) *float64 { return &x }

// WriteText writes the outcome report as fsmine eval prints it: per score,
// the AUC for failure (mean over folds, and pooled), the shares of failed
// sessions flagged and succeeded ones passed at the thresholds chosen
// without the held-out folds, then each fold's AUC.
func (rep *OutcomeReport) WriteText(w io.Writer) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("outcome %s: %d sessions, %d failed (%s)", rep.Expr, rep.Sessions, rep.Failed, text.Percent(share(rep.Failed, rep.Sessions)))
	if rep.Unknown > 0 {
		p(", %s without the field left out", text.Count(rep.Unknown, "session"))
	}
	if rep.Emptied > 0 {
		p(", %s with no step after the label rules left out (%d failed)", text.Count(rep.Emptied, "session"), rep.EmptiedFailed)
	}
	p("\nmodels mined with %s; risk is surprisal in bits (see fsmine check)\n", rep.Setting)
	if rep.By != "" {
		mode := rep.ByMode
		if mode == "" {
			mode = automaton.ByPaths
		}
		p("|by: under the map of the session's own %s, mined from the training sessions with its value (mode %s, at least %s), the shared map otherwise\n", rep.By, mode, text.Count(rep.ByMin, "session"))
	}
	p("\n")
	p("  %-18s %7s %7s %8s %7s   %s\n", "score", "auc", "pooled", "flagged", "passed", "auc per fold")
	opt := func(x *float64) string {
		if x == nil {
			return "-"
		}
		return fmt.Sprintf("%.3f", *x)
	}
	for _, r := range rep.Scores {
		o := r.Overall
		p("  %-18s %7s %7s %8.3f %7.3f  ", r.Name, opt(o.AUC), opt(o.Pooled), o.Flagged, o.Passed)
		for _, f := range r.Folds {
			p(" %s", opt(f.AUC))
		}
		p("\n")
	}
	var chosen []string
	for _, f := range rep.Scores[len(rep.Scores)-1].Folds {
		chosen = append(chosen, f.Chosen)
	}
	p("\nauc: of a failed and a succeeded held-out session, the chance the failed one scores higher (mean over folds; pooled: all folds' scores together)\n")
	p("flagged / passed: failed sessions above the threshold / succeeded ones not, the threshold chosen on the other folds (inner cross-validation, Youden's J)\n")
	p("selected by inner, per fold: %s\n", strings.Join(chosen, ", "))
	_, err := io.WriteString(w, b.String())
	return err
}
