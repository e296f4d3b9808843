// Package gen samples synthetic agent logs from a model: sessions are
// random walks from automaton.StartID to automaton.EndID that follow the
// transitions' probabilities, written as fsmine's JSONL records (one step a
// line) with timestamps, durations, tokens, LLM and prompt version faked as
// a real agent log has them. It is the bundled sample's source, the ground
// truth for measuring the miner (sample, mine, compare) and load for
// benchmarks; ReturnsTruth and AgentTruth are built-in models to sample.
//
// The same model and Options give the same bytes on every run, on every
// platform: every random draw comes from seeded PCG streams through
// functions fixed here, not from math/rand's distributions. The package
// never prints and reads no files.
package gen

import (
	"container/heap"
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/fsmine/fsmine/automaton"
)

// Detours (Options.Drift): the record that derails ends with DerailEvent;
// one to three records labelled DetourLabel, each ending with DetourEvent,
// follow; then the session returns to the stage it left.
const (
	DetourLabel = "smalltalk"
	DetourEvent = "answered"
	DerailEvent = "off_topic"
)

// MaxMoves caps a sampled session: a model whose loops never exit still
// yields finite sessions, cut off after MaxMoves records as abandoned logs
// are.
const MaxMoves = 1000

// DefaultStart is fsmine gen's time of the first session: a fixed time, so
// that the output does not depend on the clock.
var DefaultStart = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

// How gen fakes what a real agent log has besides the path: every number
// here shapes the output bytes, so changing one changes the bundled sample.
const (
	genMeanArrivalMS = 10_000 // mean gap between session starts (Poisson arrivals)
	genP8Share       = 0.3    // share of sessions on the newer prompt version
)

// stageProfile is what gen knows of a stage beyond the model: whether the
// stage waits on the customer (then most of its dwell is the customer's
// time, not the agent's duration), the LLM it calls and the median size of
// its completions.
type stageProfile struct {
	userFacing bool
	llm        string
	completion float64
	dwell      automaton.Dwell // used when the model's state has no dwell_ms
}

// stageProfiles holds the stages of the built-in truth model and the
// detour stage; other labels get defaultProfile.
var stageProfiles = map[string]stageProfile{
	"greet":                 {true, "gpt-4o-mini", 45, automaton.Dwell{P50: 2500, P95: 9000, Max: 60000}},
	"identify_customer":     {true, "gpt-4o-mini", 40, automaton.Dwell{P50: 6000, P95: 25000, Max: 180000}},
	"verify_identity":       {true, "gpt-4o-mini", 35, automaton.Dwell{P50: 9000, P95: 40000, Max: 300000}},
	"lookup_order":          {false, "gpt-4o-mini", 70, automaton.Dwell{P50: 900, P95: 2500, Max: 15000}},
	"check_eligibility":     {false, "gpt-4o", 120, automaton.Dwell{P50: 1400, P95: 4000, Max: 20000}},
	"explain_policy":        {true, "gpt-4o-mini", 160, automaton.Dwell{P50: 3000, P95: 9000, Max: 60000}},
	"collect_return_reason": {true, "gpt-4o-mini", 50, automaton.Dwell{P50: 12000, P95: 45000, Max: 300000}},
	"collect_input":         {true, "gpt-4o-mini", 40, automaton.Dwell{P50: 10000, P95: 40000, Max: 300000}},
	"validate_input":        {false, "gpt-4o-mini", 30, automaton.Dwell{P50: 400, P95: 1200, Max: 8000}},
	"create_return_label":   {false, "gpt-4o-mini", 90, automaton.Dwell{P50: 1800, P95: 5000, Max: 30000}},
	"issue_refund":          {false, "gpt-4o-mini", 80, automaton.Dwell{P50: 2200, P95: 6500, Max: 30000}},
	"file_complaint":        {true, "gpt-4o", 200, automaton.Dwell{P50: 20000, P95: 70000, Max: 400000}},
	"escalate_to_human":     {false, "gpt-4o-mini", 60, automaton.Dwell{P50: 1500, P95: 5000, Max: 30000}},
	"close":                 {false, "gpt-4o-mini", 50, automaton.Dwell{P50: 1200, P95: 4000, Max: 20000}},
	DetourLabel:             {true, "gpt-4o-mini", 90, automaton.Dwell{P50: 5000, P95: 20000, Max: 120000}},
}

// defaultProfile is the profile of a label gen does not know; the completion
// size varies with the label so that stages differ.
func defaultProfile(label string) stageProfile {
	h := fnv.New32a()
	h.Write([]byte(label))
	return stageProfile{
		llm:        "gpt-4o-mini",
		completion: float64(40 + h.Sum32()%120),
		dwell:      automaton.Dwell{P50: 1500, P95: 6000, Max: 60000},
	}
}

// genState is a state compiled for output: its JSON-quoted strings and the
// parameters of its dwell, duration and token draws.
type genState struct {
	node    []byte // JSON string of the label
	truth   []byte // JSON string of the id, nil for a detour
	llm     []byte
	mu      float64 // log-normal dwell: ln(p50) and sigma
	sigma   float64
	maxMS   float64 // 0: no cap
	durLo   float64 // duration is dwell times U(durLo, durHi)
	durHi   float64
	compMu  float64 // ln of the median completion size
	compSig float64
}

// Options say how to sample. The zero Options sample with seed 0, no
// detours and no truth states, from the zero time (January 1, year 1).
type Options struct {
	// Seed seeds every random draw.
	Seed uint64
	// Drift is the probability per step, in [0, 1], of an off-topic
	// detour (see DetourLabel). Detours come from a random stream of their
	// own: a session's path and timings are the same whatever Drift is.
	Drift float64
	// Start is the time of the first session (see DefaultStart); its year
	// in UTC must be 1 to 9000.
	Start time.Time
	// TruthAttr adds attrs.truth_state to each record: the id of the model
	// state it was sampled in (detour records have none).
	TruthAttr bool
}

// A Generator writes sessions sampled from a model as JSONL records. It is
// not safe for concurrent use; each call of Write starts over and writes
// the same bytes for the same n.
type Generator struct {
	m      *automaton.Model
	opt    Options
	states map[string]*genState
	detour *genState
	events map[string][]byte // JSON strings of the model's events
	derail []byte
	answer []byte

	// Three random streams per session, so that --drift adds detours
	// without changing a session's path or its other timings, and a
	// session is the same whatever -n is.
	path, timing, drift *rand.Rand
	pathSrc             *rand.PCG
	timingSrc           *rand.PCG
	driftSrc            *rand.PCG

	free []*genSession // written sessions, kept to reuse their record slices

	day    int64 // the day whose date prefix is in dayPfx
	dayPfx []byte
}

// New returns a Generator that samples m with opt. It returns an error
// when m cannot be sampled (nothing leaves automaton.StartID, or a state
// entered has no way out), when opt.Drift is not in [0, 1], or when
// opt.Start is out of range. m must be valid (automaton.Model.Validate)
// and must not change while the Generator is used.
func New(m *automaton.Model, opt Options) (*Generator, error) {
	if !(opt.Drift >= 0 && opt.Drift <= 1) {
		return nil, fmt.Errorf("drift must be a probability in [0, 1], not %v", opt.Drift)
	}
	if y := opt.Start.UTC().Year(); y < 1 || y > 9000 {
		return nil, fmt.Errorf("start: year %d is out of range", y)
	}
	if err := checkSampleable(m); err != nil {
		return nil, err
	}
	g := &Generator{
		m:      m,
		opt:    opt,
		states: make(map[string]*genState, len(m.States)),
		events: make(map[string][]byte),
		derail: jsonString(DerailEvent),
		answer: jsonString(DetourEvent),
		day:    math.MinInt64,
	}
	for _, s := range m.States {
		g.states[s.ID] = compileState(s.Label, s.ID, s.DwellMS)
	}
	g.detour = compileState(DetourLabel, "", nil)
	for _, t := range m.Transitions {
		if _, ok := g.events[t.Event]; !ok {
			g.events[t.Event] = jsonString(t.Event)
		}
	}
	g.pathSrc, g.timingSrc, g.driftSrc = rand.NewPCG(0, 0), rand.NewPCG(0, 0), rand.NewPCG(0, 0)
	g.path, g.timing, g.drift = rand.New(g.pathSrc), rand.New(g.timingSrc), rand.New(g.driftSrc)
	return g, nil
}

// checkSampleable refuses a model in which a walk can stop before EndID: a
// state entered by some transition (or StartID) with no transition out.
func checkSampleable(m *automaton.Model) error {
	if len(m.Out(automaton.StartID)) == 0 {
		return fmt.Errorf("model has no transition out of %s: there is nothing to sample", automaton.StartID)
	}
	for _, t := range m.Transitions {
		if t.To != automaton.EndID && len(m.Out(t.To)) == 0 {
			return fmt.Errorf("state %q has no transition out: a session entering it cannot end", t.To)
		}
	}
	return nil
}

func compileState(label, id string, dwell *automaton.Dwell) *genState {
	p, ok := stageProfiles[label]
	if !ok {
		p = defaultProfile(label)
	}
	d := p.dwell
	if dwell != nil && dwell.P50 > 0 {
		d = *dwell
	}
	s := &genState{
		node:    jsonString(label),
		llm:     jsonString(p.llm),
		mu:      math.Log(d.P50),
		maxMS:   d.Max,
		compMu:  math.Log(p.completion),
		compSig: 0.45,
	}
	if d.P95 > d.P50 {
		s.sigma = math.Log(d.P95/d.P50) / 1.6448536269514722 // z of the 95th percentile
	}
	if id != "" {
		s.truth = jsonString(id)
	}
	if p.userFacing {
		s.durLo, s.durHi = 0.08, 0.3
	} else {
		s.durLo, s.durHi = 0.55, 0.95
	}
	return s
}

// genRecord is one output line before it is formatted.
type genRecord struct {
	st         *genState
	event      []byte
	ts         int64 // Unix milliseconds
	durationMS int64
	prompt     int64
	completion int64
}

// genSession is a sampled session waiting to be written; next is the
// index of its first unwritten record.
type genSession struct {
	id      int
	records []genRecord
	next    int
	p8      bool // on the newer prompt version
	channel []byte
}

// sessionHeap orders open sessions by the time of their next record, then
// by id, so that interleaved output is sorted by time and deterministic.
type sessionHeap []*genSession

func (h sessionHeap) Len() int { return len(h) }
func (h sessionHeap) Less(i, j int) bool {
	a, b := h[i].records[h[i].next].ts, h[j].records[h[j].next].ts
	if a != b {
		return a < b
	}
	return h[i].id < h[j].id
}
func (h sessionHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *sessionHeap) Push(x any)   { *h = append(*h, x.(*genSession)) }
func (h *sessionHeap) Pop() any {
	old := *h
	s := old[len(old)-1]
	*h = old[:len(old)-1]
	return s
}

// Write writes n sessions to w, with ids s-000001 to s-n. Sessions start
// at random (exponential gaps after Options.Start) and their records
// interleave in time order, as a log shipper writes them; session i is the
// same whatever n is. Each session's records are sampled when it starts,
// so memory grows with the number of sessions open at once, not with n.
// Write returns w's first error, or ctx's error when ctx is done (checked
// every 1,024 sessions). n < 0 writes nothing.
func (g *Generator) Write(ctx context.Context, w io.Writer, n int) error {
	arrivals := rand.New(rand.NewPCG(splitmix(g.opt.Seed^0xa5a5), splitmix(4)))
	startMS := g.opt.Start.UnixMilli()
	var open sessionHeap
	buf := make([]byte, 0, 512)
	emit := func() error {
		s := open[0]
		buf = g.appendRecord(buf[:0], s, s.next)
		if _, err := w.Write(buf); err != nil {
			return err
		}
		s.next++
		if s.next == len(s.records) {
			heap.Pop(&open)
			g.free = append(g.free, s)
		} else {
			heap.Fix(&open, 0)
		}
		return nil
	}
	at := startMS
	for i := 1; i <= n; i++ {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if i > 1 {
			at += int64(math.Round(-math.Log(1-uniform(arrivals)) * genMeanArrivalMS))
		}
		for len(open) > 0 && open[0].records[open[0].next].ts <= at {
			if err := emit(); err != nil {
				return err
			}
		}
		if s := g.session(i, at); len(s.records) > 0 {
			heap.Push(&open, s)
		} else {
			g.free = append(g.free, s)
		}
	}
	for len(open) > 0 {
		if err := emit(); err != nil {
			return err
		}
	}
	return nil
}

var (
	genChannels = [][]byte{[]byte(`"chat"`), []byte(`"voice"`), []byte(`"email"`)}
	genPV7      = []byte(`"p7"`)
	genPV8      = []byte(`"p8"`)
)

// session samples session id starting at time at (Unix milliseconds).
func (g *Generator) session(id int, at int64) *genSession {
	k := splitmix(uint64(id))
	g.pathSrc.Seed(splitmix(g.opt.Seed^0x1), k)
	g.timingSrc.Seed(splitmix(g.opt.Seed^0x2), k)
	g.driftSrc.Seed(splitmix(g.opt.Seed^0x3), k)

	var s *genSession
	if n := len(g.free); n > 0 {
		s, g.free = g.free[n-1], g.free[:n-1]
		*s = genSession{records: s.records[:0]}
	} else {
		s = &genSession{records: make([]genRecord, 0, 32)}
	}
	s.id, s.p8, s.channel = id, uniform(g.timing) < genP8Share, genChannels[0]
	switch u := uniform(g.timing); {
	case u < 0.18:
		s.channel = genChannels[1]
	case u < 0.28:
		s.channel = genChannels[2]
	}

	// One move more than the cap, so that a cut-off session's last record
	// still has the event that led out of it.
	moves := g.m.Sample(g.path, MaxMoves+1)
	ts := at
	add := func(st *genState, event []byte, r *rand.Rand) {
		dwell := g.dwell(st, r)
		dur := int64(math.Round(float64(dwell) * (st.durLo + (st.durHi-st.durLo)*uniform(r))))
		s.records = append(s.records, genRecord{
			st:         st,
			event:      event,
			ts:         ts,
			durationMS: max(dur, 1),
			prompt:     g.promptTokens(s, len(s.records), r),
			completion: max(int64(math.Round(math.Exp(st.compMu+st.compSig*normal(r)))), 1),
		})
		ts += dwell
	}
	from := automaton.StartID
	for i := 0; i+1 < len(moves); i++ {
		t := g.m.Next(from, moves[i])
		from = t.To
		st := g.states[from]
		event := g.events[moves[i+1].Event]
		if uniform(g.drift) < g.opt.Drift {
			add(st, g.derail, g.drift)
			for range 1 + detourLength(uniform(g.drift)) {
				add(g.detour, g.answer, g.drift)
			}
		}
		add(st, event, g.timing)
	}
	return s
}

// detourLength maps a uniform draw to 0, 1 or 2 extra smalltalk records
// (a detour of one record 60% of the time, two 30%, three 10%).
func detourLength(u float64) int {
	switch {
	case u < 0.6:
		return 0
	case u < 0.9:
		return 1
	}
	return 2
}

// dwell draws the time spent in st, in whole milliseconds, at least 1.
func (g *Generator) dwell(st *genState, r *rand.Rand) int64 {
	d := math.Exp(st.mu + st.sigma*normal(r))
	if st.maxMS > 0 && d > st.maxMS {
		d = st.maxMS
	}
	return max(int64(math.Round(d)), 1)
}

// promptTokens grows with the conversation: a system prompt whose size
// depends on the prompt version, plus context per earlier step.
func (g *Generator) promptTokens(s *genSession, step int, r *rand.Rand) int64 {
	base := 1150.0
	if s.p8 {
		base = 1320
	}
	return int64(base + 210*float64(step) + math.Floor(120*uniform(r)))
}

// appendRecord appends record i of s as one JSON line.
func (g *Generator) appendRecord(b []byte, s *genSession, i int) []byte {
	r := &s.records[i]
	b = append(b, `{"session_id":"s-`...)
	b = appendPadded(b, s.id, 6)
	b = append(b, `","step":`...)
	b = strconv.AppendInt(b, int64(i), 10)
	b = append(b, `,"ts":"`...)
	b = g.appendTS(b, r.ts)
	b = append(b, `","node":`...)
	b = append(b, r.st.node...)
	b = append(b, `,"event":`...)
	b = append(b, r.event...)
	b = append(b, `,"duration_ms":`...)
	b = strconv.AppendInt(b, r.durationMS, 10)
	b = append(b, `,"model":`...)
	b = append(b, r.st.llm...)
	b = append(b, `,"prompt_version":`...)
	if s.p8 {
		b = append(b, genPV8...)
	} else {
		b = append(b, genPV7...)
	}
	b = append(b, `,"tokens":{"prompt":`...)
	b = strconv.AppendInt(b, r.prompt, 10)
	b = append(b, `,"completion":`...)
	b = strconv.AppendInt(b, r.completion, 10)
	b = append(b, `},"attrs":{"channel":`...)
	b = append(b, s.channel...)
	if g.opt.TruthAttr && r.st.truth != nil {
		b = append(b, `,"truth_state":`...)
		b = append(b, r.st.truth...)
	}
	b = append(b, "}}\n"...)
	return b
}

// appendTS appends ms (Unix milliseconds) as RFC 3339 in UTC with
// milliseconds, e.g. 2026-01-05T10:00:03.120Z. The date is formatted once
// per day.
func (g *Generator) appendTS(b []byte, ms int64) []byte {
	const msPerDay = 24 * 3600 * 1000
	day, rem := ms/msPerDay, ms%msPerDay
	if rem < 0 {
		day, rem = day-1, rem+msPerDay
	}
	if day != g.day {
		g.day = day
		g.dayPfx = time.UnixMilli(day*msPerDay).UTC().AppendFormat(g.dayPfx[:0], "2006-01-02T")
	}
	b = append(b, g.dayPfx...)
	b = appendPadded(b, int(rem/3_600_000), 2)
	b = append(b, ':')
	b = appendPadded(b, int(rem/60_000%60), 2)
	b = append(b, ':')
	b = appendPadded(b, int(rem/1000%60), 2)
	b = append(b, '.')
	b = appendPadded(b, int(rem%1000), 3)
	return append(b, 'Z')
}

// appendPadded appends v (v >= 0) in decimal, zero-padded to width digits.
func appendPadded(b []byte, v, width int) []byte {
	var d [20]byte
	i := len(d)
	for v >= 10 || len(d)-i < width-1 {
		i--
		d[i] = byte('0' + v%10)
		v /= 10
	}
	i--
	d[i] = byte('0' + v)
	return append(b, d[i:]...)
}

// uniform returns a draw in [0, 1) from r's next 64 bits; unlike
// rand.Float64 it is fixed here, so the output cannot change with Go.
func uniform(r *rand.Rand) float64 {
	return float64(r.Uint64()>>11) * 0x1p-53
}

// normal returns a standard normal draw (Box-Muller, one of the pair).
func normal(r *rand.Rand) float64 {
	u1 := 1 - uniform(r) // in (0, 1]
	u2 := uniform(r)
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}

// splitmix is the SplitMix64 finaliser: it spreads nearby seeds apart.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// jsonString returns s as a JSON string literal, byte for byte as
// json.Marshal writes it (TestJSONString checks): the labels and events of
// the model are the records' strings, and the bundled sample's bytes must
// not change.
func jsonString(s string) []byte { return automaton.AppendJSONString(nil, s, true) }
