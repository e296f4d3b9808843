package mine

import (
	"bytes"
	"context"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/conform"
	"github.com/fsmine/fsmine/automaton/guard"
	"github.com/fsmine/fsmine/mine/gen"
)

// TestArgsHijack measures, on gen's hijack scenario, the share of hijacked
// sessions stopped at or before their harmful call, and the share of
// benign sessions flagged, by a map of tool names mined from benign
// sessions, without and with argument rules learned from the same
// sessions. The hijacked sessions call the tools benign ones call, in the
// same order, so the map alone stops none of them.
func TestArgsHijack(t *testing.T) {
	var train, test bytes.Buffer
	if err := gen.WriteHijack(context.Background(), &train, 400, gen.HijackOptions{Seed: 1}); err != nil {
		t.Fatal(err)
	}
	if err := gen.WriteHijack(context.Background(), &test, 400, gen.HijackOptions{Seed: 2, Share: 0.25}); err != nil {
		t.Fatal(err)
	}
	trainIn, testIn := argInput(train.Bytes()), argInput(test.Bytes())
	lg, err := Read(trainIn, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Build(lg, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	trainArgs, err := ReadArgSessions(trainIn, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rules := LearnArgs(trainArgs, ArgOptions{})
	truths := readHijackTruths(t, test.Bytes())

	// The first step each session is stopped at: the map's first deviation,
	// then, with rules, the first call that breaks one.
	tlg, err := Read(testIn, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := conform.New(m, conform.Options{})
	mapStop := map[string]int64{}
	for si := range tlg.Sessions {
		s := &tlg.Sessions[si]
		if v := c.Check(tlg.Moves(s)); v.Deviation != nil {
			mapStop[s.ID] = int64(v.Deviation.Move)
		}
	}
	testArgs, err := ReadArgSessions(testIn, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	argStop := map[string]int64{}
	for _, f := range CheckArgs(testArgs, rules) {
		argStop[f.Session] = f.Step
	}
	plain, with, byKind := scoreHijacks(truths, mapStop, argStop)
	t.Logf("%d argument rules; hijacked stopped before harm: map %d of %d, map and rules %d of %d (%v: kind -> [sessions stopped]); benign flagged: map %d of %d, map and rules %d of %d",
		len(rules), plain.stopped, plain.hijacked, with.stopped, with.hijacked, byKind, plain.flagged, plain.benign, with.flagged, with.benign)
	// The guard, step by step, each call with the text of the record before
	// it: the same sessions are denied, at the same steps.
	for _, withArgs := range []bool{false, true} {
		gm := *m
		if withArgs {
			gm.Args = rules
			gm.Digest = gm.ComputeDigest()
		}
		stopped, flagged := guardHijacks(t, &gm, tlg, testArgs, truths)
		t.Logf("guard, argument rules %v: %d of %d hijacked sessions denied at or before the harmful call, %d of %d benign sessions denied", withArgs, stopped, plain.hijacked, flagged, plain.benign)
		want := 0
		if withArgs {
			want = with.stopped
		}
		if stopped != want || flagged != with.flagged {
			t.Errorf("guard, argument rules %v: %d stopped, %d benign denied; want %d and %d, as check", withArgs, stopped, flagged, want, with.flagged)
		}
	}

	// Without From (any earlier text a source), a recipient the
	// instruction named is sourced by the page that named it.
	anySource := append([]automaton.ArgRule(nil), rules...)
	for i := range anySource {
		anySource[i].From = nil
	}
	injected, injectedStopped := 0, 0
	stoppedAny := map[string]bool{}
	for _, f := range CheckArgs(testArgs, anySource) {
		stoppedAny[f.Session] = f.Step <= truths[f.Session].harm
	}
	for id, tr := range truths {
		if tr.kind == gen.HijackInjected {
			injected++
			if stoppedAny[id] {
				injectedStopped++
			}
		}
	}
	t.Logf("rules without From stop %d of %d sessions hijacked with an injected value", injectedStopped, injected)
	if injectedStopped != 0 {
		t.Errorf("rules without From stop %d injected hijacks, want none: the page sources the value", injectedStopped)
	}
	if plain.hijacked == 0 || with.stopped != with.hijacked {
		t.Errorf("the rules stop %d of %d hijacked sessions, want all", with.stopped, with.hijacked)
	}
	if plain.stopped != 0 {
		t.Errorf("the map alone stops %d hijacked sessions, want none: the scenario's hijacks call the benign tools", plain.stopped)
	}
	if with.flagged != plain.flagged {
		t.Errorf("the rules flag %d benign sessions the map does not", with.flagged-plain.flagged)
	}
}

// hijackTruth is what gen wrote about one session: its kind of hijack
// ("" for a benign session) and its harmful step.
type hijackTruth struct {
	kind string
	harm int64
}

// readHijackTruths reads the truth about each session from gen's hijack
// records, by session id.
func readHijackTruths(t *testing.T, records []byte) map[string]hijackTruth {
	t.Helper()
	truths := map[string]hijackTruth{}
	for _, line := range bytes.Split(bytes.TrimSpace(records), []byte("\n")) {
		var rec struct {
			Session string `json:"session_id"`
			Step    int64  `json:"step"`
			Attrs   struct {
				Hijack string `json:"hijack"`
				Harm   bool   `json:"harm"`
			} `json:"attrs"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatal(err)
		}
		tr := truths[rec.Session]
		tr.kind = rec.Attrs.Hijack
		if rec.Attrs.Harm {
			tr.harm = rec.Step
		}
		truths[rec.Session] = tr
	}
	return truths
}

// hijackScore counts hijacked sessions and those stopped at or before
// their harmful step, benign sessions and those flagged.
type hijackScore struct{ hijacked, stopped, benign, flagged int }

// scoreHijacks scores the map alone (plain: the first step in mapStop) and
// the map with argument rules (with: the earlier of mapStop and argStop).
// byKind counts, per kind of hijack, the sessions and those the map with
// rules stopped.
func scoreHijacks(truths map[string]hijackTruth, mapStop, argStop map[string]int64) (plain, with hijackScore, byKind map[string][2]int) {
	byKind = map[string][2]int{}
	for id, tr := range truths {
		ms, inMap := mapStop[id]
		as, inArgs := argStop[id]
		first, flagged := ms, inMap
		if inArgs && (!inMap || as < ms) {
			first, flagged = as, true
		}
		if tr.kind == "" {
			plain.benign++
			with.benign++
			if inMap {
				plain.flagged++
			}
			if flagged {
				with.flagged++
			}
			continue
		}
		plain.hijacked++
		with.hijacked++
		k := byKind[tr.kind]
		k[0]++
		if inMap && ms <= tr.harm {
			plain.stopped++
		}
		if flagged && first <= tr.harm {
			with.stopped++
			k[1]++
		}
		byKind[tr.kind] = k
	}
	return plain, with, byKind
}

// guardHijacks runs a guard over m on each session of tlg, each call with
// its arguments and the text of the record before it, and counts the
// hijacked sessions denied at or before their harmful step and the benign
// sessions denied.
func guardHijacks(t *testing.T, m *automaton.Model, tlg *Log, args []ArgSession, truths map[string]hijackTruth) (stopped, flagged int) {
	t.Helper()
	g, err := guard.New(m, nil, guard.Options{})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]ArgSession{}
	for _, as := range args {
		byID[as.ID] = as
	}
	for si := range tlg.Sessions {
		s := &tlg.Sessions[si]
		as := byID[s.ID]
		denied := int64(-1)
		for i, mv := range tlg.Moves(s) {
			call := &guard.Call{}
			if i < len(as.Steps) {
				call.Args = as.Steps[i].Args
			}
			if i > 0 {
				for _, text := range as.Steps[i-1].Seen {
					call.Seen = append(call.Seen, guard.SeenText{Label: as.Steps[i-1].Label, Text: text})
				}
			}
			d, err := g.StepCall(s.ID, mv.Event, mv.Label, nil, call)
			if err != nil {
				t.Fatal(err)
			}
			if !d.Allowed {
				denied = int64(i)
				break
			}
		}
		tr := truths[s.ID]
		switch {
		case tr.kind == "" && denied >= 0:
			flagged++
		case tr.kind != "" && denied >= 0 && denied <= tr.harm:
			stopped++
		}
	}
	return stopped, flagged
}
