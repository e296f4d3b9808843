package check

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/conform"
	"github.com/fsmine/fsmine/internal/text"
	"github.com/fsmine/fsmine/mine"
)

// ReplayReport is fsmine replay's report on one session, its --format json
// object: every step with its verdict, the first deviation explained, and
// the optimal alignment.
type ReplayReport struct {
	m *automaton.Model

	SessionID string   `json:"session_id"`
	Model     ModelRef `json:"model"`
	// Map names the map of a conditioned model that judged the session
	// (see automaton.Model.MapName); empty for a model that is not.
	Map       string     `json:"map,omitempty"`
	Fits      bool       `json:"fits"`
	Deviation *Deviation `json:"deviation"`
	// Explanation says in words what went wrong at the deviation.
	Explanation string `json:"explanation,omitempty"`
	// Expected are the model's moves out of the deviation's state.
	Expected  []ReplayMove      `json:"expected"`
	Records   int               `json:"records"`
	Cost      int               `json:"cost"`
	MaxCost   int               `json:"max_cost"`
	Fitness   float64           `json:"fitness"`
	Bounded   bool              `json:"bounded"`
	Rare      int               `json:"rare"`
	Steps     []ReplayStep      `json:"steps"`
	Alignment []conform.AlignOp `json:"alignment"`
	// Arg is the session's first call whose argument breaks one of the
	// model's argument rules (see Args); nil for none, or a model without
	// rules.
	Arg *mine.ArgFinding `json:"arg,omitempty"`

	deviationRow int
}

// ReplayStep is one row of a replay: the move into a record's label.
type ReplayStep struct {
	Move int `json:"move"`
	// Step is the record's step (or its position when the log has none);
	// End marks the move into __end__, whose record is the session's last.
	Step  int64  `json:"step"`
	End   bool   `json:"end,omitempty"`
	File  string `json:"file"`
	Line  int    `json:"line"`
	State string `json:"state"`
	Event string `json:"event"`
	Label string `json:"label"`
	Next  string `json:"next"`
	// Transition is the model's transition taken, nil when none.
	Transition *ReplayMove `json:"transition"`
	Verdict    string      `json:"verdict"`
	Resync     bool        `json:"resync,omitempty"`
	Iteration  int         `json:"loop_iteration,omitempty"`
	Cap        int         `json:"loop_cap,omitempty"`
	Run        int         `json:"run,omitempty"`
	MaxRun     int         `json:"max_run,omitempty"`
	// Unusual and MaxUnusual are set for an unusual_cap step: the rare and
	// generalised transitions taken, this one included, and the cap.
	Unusual    int `json:"unusual,omitempty"`
	MaxUnusual int `json:"max_unusual,omitempty"`
	// UnusualRun and MaxUnusualRun are set for an unusual_run step: the
	// rare and generalised transitions taken in a row, this one included,
	// and the cap.
	UnusualRun    int `json:"unusual_run,omitempty"`
	MaxUnusualRun int `json:"max_unusual_run,omitempty"`
	// DwellMS is the time spent in State, nil when not known.
	DwellMS *float64 `json:"dwell_ms"`
}

// ReplayMove is a transition of the model as replay shows it.
type ReplayMove struct {
	Event    string  `json:"event"`
	To       string  `json:"to"`
	Count    int     `json:"count"`
	Share    float64 `json:"share"`
	Rare     bool    `json:"rare"`
	BackEdge bool    `json:"back_edge"`
	// Generalized is the kind of generalisation of a move no session took.
	Generalized string `json:"generalized,omitempty"`
	// Examples are sessions the model was mined from that took the move
	// (see fsmine build --examples).
	Examples []automaton.Example `json:"examples,omitempty"`
}

// FindSession returns the session of lg with the given id, nil when there
// is none. lg's sessions are in id order, as mine.Read gives them.
func FindSession(lg *mine.Log, id string) *mine.Session {
	i := sort.Search(len(lg.Sessions), func(i int) bool { return lg.Sessions[i].ID >= id })
	if i == len(lg.Sessions) || lg.Sessions[i].ID != id {
		return nil
	}
	return &lg.Sessions[i]
}

// Replay walks session s of lg through c's model step by step, as fsmine
// replay shows it, and aligns it. Model is left for the caller to name.
func Replay(lg *mine.Log, s *mine.Session, c *conform.Checker) *ReplayReport {
	m := c.Model()
	moves := lg.Moves(s)
	v := c.Check(moves)
	al := c.Align(moves)
	r := &ReplayReport{
		SessionID: s.ID, Fits: v.Fits(), Records: len(s.Visits),
		Cost: al.Cost, MaxCost: al.MaxCost, Fitness: mine.Round6(al.Fitness), Bounded: al.Bounded, Rare: v.Rare,
		Alignment: al.Ops, Expected: []ReplayMove{}, deviationRow: -1, m: m,
	}
	if r.Alignment == nil {
		r.Alignment = []conform.AlignOp{}
	}
	for _, st := range c.Replay(moves) {
		rec := moveRecord(s, st.Move)
		pos := min(st.Move, len(s.Visits)-1)
		row := ReplayStep{
			Move: st.Move, Step: visitStep(rec, pos), End: st.Move == len(s.Visits),
			File: lg.Files[rec.File].Path, Line: lg.InputLine(rec.File, rec.Line),
			State: st.From, Event: moves[st.Move].Event, Label: moves[st.Move].Label, Next: st.To,
			Verdict: st.Verdict, Resync: st.Resync,
		}
		if st.Transition != nil {
			row.Transition = r.move(st.Transition)
			if st.Loop >= 0 {
				row.Iteration, row.Cap = st.Iteration, st.Cap
			}
			row.Run, row.MaxRun = st.Run, st.MaxRun
			row.Unusual, row.MaxUnusual = st.Unusual, st.MaxUnusual
			row.UnusualRun, row.MaxUnusualRun = st.UnusualRun, st.MaxUnusualRun
		}
		if st.Move > 0 {
			if prev := &s.Visits[st.Move-1]; prev.HasDwell {
				d := prev.DwellMS
				row.DwellMS = &d
			}
		}
		r.Steps = append(r.Steps, row)
	}
	if d := v.Deviation; d != nil {
		r.Deviation = deviation(lg, s, &v)
		r.deviationRow = d.Move
		if d.State != "" {
			for _, t := range m.Out(d.State) {
				r.Expected = append(r.Expected, *r.move(t))
			}
		}
		r.Explanation = explainDeviation(m, d)
	}
	return r
}

// move is t as the report shows it.
func (r *ReplayReport) move(t *automaton.Transition) *ReplayMove {
	mv := &ReplayMove{Event: t.Event, To: t.To, Count: t.Count, Share: t.Prob, Rare: t.Rare, BackEdge: t.BackEdge, Generalized: t.Generalized}
	// A generalised transition has no examples: no session took it.
	if t.Generalized == "" {
		mv.Examples = r.m.Examples(t.Examples)
	}
	return mv
}

// explainDeviation says in words what the model has against the move.
func explainDeviation(m *automaton.Model, d *conform.Deviation) string {
	mv := text.Move(d.State, d.Event, d.Label)
	switch d.Kind {
	case conform.KindUnknownState:
		return fmt.Sprintf("%q is no state of the model (%s)", d.Label, mv)
	case conform.KindIllegalTransition:
		return fmt.Sprintf("the model has no move %s; %s", mv, expectedWords(m, d.State))
	case conform.KindIncomplete:
		for _, t := range m.Out(d.State) {
			if t.To == automaton.EndID {
				return fmt.Sprintf("the session ends in %s with event %q; the model ends there only with other events; %s", d.State, d.Event, expectedWords(m, d.State))
			}
		}
		return fmt.Sprintf("the session ends in %s; no session of the model ends there; %s", d.State, expectedWords(m, d.State))
	case conform.KindLoopCap:
		l := m.Loops[d.Loop]
		return fmt.Sprintf("%s is iteration %d of loop {%s} in this stay; the model's cap is %d (max_iterations %d, p95 %d)",
			mv, d.Iterations, strings.Join(l.States, ", "), d.Cap, l.MaxIterations, l.P95Iterations)
	case conform.KindGeneralized:
		if t := m.Next(d.State, automaton.Move{Event: d.Event, Label: d.Label}); t != nil {
			return fmt.Sprintf("%s is a generalised transition (%s): no session the model was mined from took it", mv, t.Generalized)
		}
	case conform.KindRepeatCap:
		return fmt.Sprintf("%s is visit %d of %q in a row; no session the model was mined from made more than %d (max_run)",
			mv, d.Iterations, d.Label, d.Cap)
	case conform.KindUnusualCap, conform.KindUnusualRun:
		what := "a rare transition"
		if t := m.Next(d.State, automaton.Move{Event: d.Event, Label: d.Label}); t != nil && t.Generalized != "" {
			what = "a generalised transition (" + t.Generalized + ")"
		}
		if d.Kind == conform.KindUnusualRun {
			return fmt.Sprintf("%s is %s: %d rare or generalised transitions in a row, where --max-unusual-run allows %d", mv, what, d.Iterations, d.Cap)
		}
		return fmt.Sprintf("%s is %s: %d rare or generalised transitions so far, where --max-unusual allows %d", mv, what, d.Iterations, d.Cap)
	case automaton.KindMissingPrerequisite, automaton.KindOnceOnly, automaton.KindNotBoth, automaton.KindRerun:
		if c := d.Constraint; c != nil {
			what := map[string]string{
				automaton.KindMissingPrerequisite: fmt.Sprintf("the session has not visited %q before", c.A),
				automaton.KindOnceOnly:            "the session visited it before",
				automaton.KindNotBoth:             fmt.Sprintf("the session visited %q before", other(c, d.Label)),
				automaton.KindRerun:               rerunWhy(c),
			}[d.Kind]
			return fmt.Sprintf("%s enters %q, but %s; the model's constraint %q held in all %d sessions it applies to when the model was mined",
				mv, d.Label, what, c.String(), c.Support)
		}
	case conform.KindRare:
		if t := m.Next(d.State, automaton.Move{Event: d.Event, Label: d.Label}); t != nil {
			return fmt.Sprintf("%s is a rare transition: %d times, %s of %s's outflow", mv, t.Count, text.Percent(t.Prob), d.State)
		}
	}
	return mv
}

// other is the label of a not_both constraint that is not label.
func other(c *automaton.Constraint, label string) string {
	if c.A == label {
		return c.B
	}
	return c.A
}

func expectedWords(m *automaton.Model, state string) string {
	n := len(m.Out(state))
	switch n {
	case 0:
		return "the model has no move out of " + state
	case 1:
		return "it expected the one move below"
	}
	return fmt.Sprintf("it expected one of the %d moves below", n)
}

// WriteText writes the report for people, as fsmine replay prints it: a
// verdict line, the steps as a table, the explanation of the first
// deviation and the alignment.
func (r *ReplayReport) WriteText(w io.Writer) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("session  %s  (%d records)\n", r.SessionID, r.Records)
	p("model    %s  v%d %s\n", r.Model.Path, r.Model.Version, text.ShortDigest(r.Model.Digest))
	if r.Map != "" {
		p("map      %s\n", r.Map)
	}
	if d := r.Deviation; d != nil {
		p("verdict  deviates at step %d (%s:%d): %s %s\n", d.Step, d.File, d.Line, d.Kind, placeText(d.Kind, d.State, d.Event, d.Label))
	} else {
		p("verdict  fits\n")
	}
	if a := r.Arg; a != nil {
		p("argument step %d: %s %q argument %q\n", a.Step, a.Kind, a.Tool, a.Arg)
	}
	bounded := ""
	if r.Bounded {
		bounded = " (search bounded: greedy alignment, an upper bound)"
	}
	p("fitness  %.3f  (alignment cost %d of %d)%s\n\n", r.Fitness, r.Cost, r.MaxCost, bounded)

	rows := [][]string{{"", "step", "record", "state", "event", "next", "count", "share", "verdict", "dwell"}}
	for i, s := range r.Steps {
		mark := ""
		if i == r.deviationRow {
			mark = ">"
		}
		step := strconv.FormatInt(s.Step, 10)
		if s.End {
			step = "end"
		}
		// Names are escaped one by one (text.Cell), so that two names
		// never show alike; the table escapes the rest.
		state := text.Cell(s.State)
		if s.State == "" {
			state = "?"
		}
		next := text.Cell(s.Next)
		switch {
		case s.Verdict == conform.StepUnknown:
			next = text.Cell(s.Label) + " (unknown)"
		case s.Next == "":
			next = text.Cell(s.Label) + "?"
		case s.Resync:
			next += " (resync)"
		}
		count, shr := "-", "-"
		if t := s.Transition; t != nil {
			count, shr = strconv.Itoa(t.Count), text.Percent(t.Share)
		}
		verdict := s.Verdict
		if s.MaxRun > 0 {
			verdict += fmt.Sprintf(" (%d/%d)", s.Run, s.MaxRun)
		} else if s.MaxUnusual > 0 {
			verdict += fmt.Sprintf(" (%d/%d)", s.Unusual, s.MaxUnusual)
		} else if s.MaxUnusualRun > 0 {
			verdict += fmt.Sprintf(" (%d/%d)", s.UnusualRun, s.MaxUnusualRun)
		} else if s.Cap > 0 && s.Iteration > 0 {
			verdict += fmt.Sprintf(" (%d/%d)", s.Iteration, s.Cap)
		}
		dwell := "-"
		if s.DwellMS != nil {
			dwell = text.Duration(*s.DwellMS)
		}
		rows = append(rows, []string{mark, step, fmt.Sprintf("%s:%d", text.Line(s.File), s.Line), state, text.Cell(s.Event), next, count, shr, verdict, dwell})
	}
	b.WriteString(text.Table(rows, map[int]bool{1: true, 6: true, 7: true, 9: true}))

	shown := false // whether example sessions were listed
	if d := r.Deviation; d != nil {
		p("\n> step %d: %s\n", d.Step, r.Explanation)
		if d.Kind == conform.KindRare && r.deviationRow >= 0 && r.deviationRow < len(r.Steps) {
			if t := r.Steps[r.deviationRow].Transition; t != nil && len(t.Examples) > 0 {
				p("  sessions that took it when the model was mined: %s\n", examplesText(t.Examples))
				shown = true
			}
		}
		if len(r.Expected) > 0 && !pathKind(d.Kind) {
			p("  the model's moves from %s:\n", d.State)
			er := [][]string{}
			for _, e := range r.Expected {
				note := ""
				switch {
				case e.Generalized != "":
					note = "generalised (" + e.Generalized + ")"
				case e.Rare && e.BackEdge:
					note = "rare, back edge"
				case e.Rare:
					note = "rare"
				case e.BackEdge:
					note = "back edge"
				}
				eg := ""
				if len(e.Examples) > 0 {
					eg = "e.g. " + examplesText(e.Examples)
				}
				er = append(er, []string{"   ", text.Arrow(e.Event, e.To), strconv.Itoa(e.Count), text.Percent(e.Share), note, eg})
				shown = shown || len(e.Examples) > 0
			}
			b.WriteString(text.Table(er, map[int]bool{2: true, 3: true}))
		}
	}
	if shown && automaton.SessionURL(r.m.Params.Link, "x") != "" {
		p("example sessions open at %s\n", cellText(r.m.Params.Link))
	}
	if r.Cost > 0 {
		p("\nalignment (cost %d): ", r.Cost)
		var parts []string
		for _, op := range r.Alignment {
			switch op.Op {
			case conform.OpLog:
				parts = append(parts, fmt.Sprintf("skip the session's %s (%s)", r.stepName(op.Move), text.Arrow(op.Event, op.Label)))
			case conform.OpModel:
				parts = append(parts, fmt.Sprintf("add the model's %s before the session's %s", text.Move(op.From, op.Event, op.To), r.stepName(op.Move)))
			}
		}
		p("%s\n", strings.Join(parts, "; "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// stepName names move i of the session as the table does.
func (r *ReplayReport) stepName(i int) string {
	if i >= len(r.Steps) || r.Steps[i].End {
		return "end"
	}
	return fmt.Sprintf("step %d", r.Steps[i].Step)
}

// examplesText lists example ids for one cell of a text table.
func examplesText(refs []automaton.Example) string {
	ids := make([]string, len(refs))
	for i, r := range refs {
		ids[i] = cellText(r.ID)
	}
	return strings.Join(ids, " ")
}

// cellText is s for one cell of a text table: newlines and tabs, which
// would break the row, written as \n and \t. Other control characters are
// left to the writer the report goes through (see the package comment).
func cellText(s string) string { return cellEscaper.Replace(s) }

var cellEscaper = strings.NewReplacer("\n", `\n`, "\t", `\t`)

// pathKind says whether a deviation of this kind takes a move the model
// has: then the replay does not list the model's moves as expected ones.
func pathKind(kind string) bool {
	switch kind {
	case conform.KindLoopCap, conform.KindRepeatCap, conform.KindUnusualCap, conform.KindUnusualRun, conform.KindRare, conform.KindGeneralized,
		automaton.KindMissingPrerequisite, automaton.KindOnceOnly, automaton.KindNotBoth, automaton.KindRerun:
		return true
	}
	return false
}

// rerunWhy says why a run constraint denies a visit.
func rerunWhy(c *automaton.Constraint) string {
	if c.B == "" {
		return "the session left it before"
	}
	return fmt.Sprintf("the session left it before and has not visited %q since", c.B)
}
