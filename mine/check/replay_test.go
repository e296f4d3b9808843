package check

import (
	"reflect"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/conform"
	"github.com/fsmine/fsmine/mine"
)

func TestReplaySteps(t *testing.T) {
	m, lg := fixture(t)
	c := conform.New(m, conform.Options{})
	tests := []struct {
		session  string
		verdicts []string // per step: "state>next verdict"
		kind     string
		expected []string // the model's moves from the deviation's state
	}{
		{"a-fit", []string{"__start__>greet ok", "greet>lookup ok", "lookup>refund ok", "refund>__end__ ok"}, "", nil},
		// greet -ok-> refund is illegal; refund is one state: resync there.
		{"b-skip", []string{"__start__>greet ok", "greet>refund illegal", "refund>__end__ ok"}, "illegal_transition", []string{"ok>lookup"}},
		// frobnicate is unknown: lost, then lookup resyncs.
		{"c-unknown", []string{"__start__>greet ok", "greet> unknown", ">lookup lost", "lookup>refund ok", "refund>__end__ ok"}, "unknown_state", []string{"ok>lookup"}},
		{"e-trunc", []string{"__start__>greet ok", "greet>lookup ok", "lookup>__end__ incomplete"}, "incomplete", []string{"not_found>lookup", "found>refund", "none>close"}},
	}
	for _, tt := range tests {
		t.Run(tt.session, func(t *testing.T) {
			r := Replay(lg, FindSession(lg, tt.session), c)
			var got []string
			for _, s := range r.Steps {
				got = append(got, s.State+">"+s.Next+" "+s.Verdict)
			}
			if !reflect.DeepEqual(got, tt.verdicts) {
				t.Errorf("steps %q, want %q", got, tt.verdicts)
			}
			if (r.Deviation == nil) != (tt.kind == "") || (r.Deviation != nil && r.Deviation.Kind != tt.kind) {
				t.Errorf("deviation %+v, want kind %q", r.Deviation, tt.kind)
			}
			var exp []string
			for _, e := range r.Expected {
				exp = append(exp, e.Event+">"+e.To)
			}
			if !reflect.DeepEqual(exp, tt.expected) {
				t.Errorf("expected moves %q, want %q", exp, tt.expected)
			}
			if r.Fits != (tt.kind == "") {
				t.Errorf("fits %v with deviation kind %q", r.Fits, tt.kind)
			}
			if r.Fits && r.Cost != 0 {
				t.Errorf("fits with cost %d", r.Cost)
			}
			if !r.Fits && len(r.Alignment) == 0 {
				t.Error("no alignment for a deviating session")
			}
		})
	}
}

func TestFindSession(t *testing.T) {
	_, lg := fixture(t)
	for _, id := range []string{"a-fit", "c-unknown", "e-trunc"} {
		if s := FindSession(lg, id); s == nil || s.ID != id {
			t.Errorf("FindSession(%q) = %v", id, s)
		}
	}
	for _, id := range []string{"", "a", "b-skip2", "zzz"} {
		if s := FindSession(lg, id); s != nil {
			t.Errorf("FindSession(%q) = %s, want nil", id, s.ID)
		}
	}
}

// TestReplayDwell: a step's dwell is the time spent in the state it leaves.
func TestReplayDwell(t *testing.T) {
	log := `{"session_id":"s","step":0,"ts":"2026-01-01T00:00:00Z","node":"a","event":"ok"}
{"session_id":"s","step":1,"ts":"2026-01-01T00:00:02.5Z","node":"b","event":"ok","duration_ms":300}
`
	lg := readLog(t, "log.jsonl", log)
	m, err := mine.Build(lg, mine.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	r := Replay(lg, FindSession(lg, "s"), conform.New(m, conform.Options{}))
	var dwell []any
	for _, s := range r.Steps {
		if s.DwellMS == nil {
			dwell = append(dwell, nil)
		} else {
			dwell = append(dwell, *s.DwellMS)
		}
	}
	if want := []any{nil, 2500.0, 300.0}; !reflect.DeepEqual(dwell, want) {
		t.Errorf("dwell %v, want %v", dwell, want)
	}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "2.5 s") || !strings.Contains(b.String(), "300 ms") {
		t.Errorf("text lacks the dwell times:\n%s", b.String())
	}
}

// TestReplayExamples: the expected moves carry the model's example
// sessions, with URLs when the model's link template makes them; the text
// names where they open only when a URL is made, and escapes newlines and
// tabs in ids, which would break the table.
func TestReplayExamples(t *testing.T) {
	tests := []struct {
		name, link string
		refs       []automaton.Example
		line       bool
	}{
		{"no link", "", []automaton.Example{{ID: "t1"}, {ID: "t\n2"}}, false},
		{"a javascript: link makes no URL", "javascript:alert(1)//{session}", []automaton.Example{{ID: "t1"}, {ID: "t\n2"}}, false},
		{"urls", "https://trace.example/{session}", []automaton.Example{{ID: "t1", URL: "https://trace.example/t1"}, {ID: "t\n2", URL: "https://trace.example/t%0A2"}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, lg := fixture(t)
			m.Params.Link = tt.link
			for i := range m.Transitions {
				if m.Transitions[i].From == "greet" {
					m.Transitions[i].Examples = []string{"t1", "t\n2"}
				}
			}
			r := Replay(lg, FindSession(lg, "b-skip"), conform.New(m, conform.Options{}))
			if len(r.Expected) != 1 || !reflect.DeepEqual(r.Expected[0].Examples, tt.refs) {
				t.Fatalf("expected %+v, want one move with examples %+v", r.Expected, tt.refs)
			}
			var b strings.Builder
			if err := r.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), `e.g. t1 t\n2`) {
				t.Errorf("text lacks the escaped examples:\n%s", b.String())
			}
			if got := strings.Contains(b.String(), "example sessions open at "+tt.link+"\n"); got != tt.line {
				t.Errorf("link line shown = %v, want %v:\n%s", got, tt.line, b.String())
			}
		})
	}
}

// TestReplayTellsNamesApart: a state named x<ESC>y and one named with the
// seven characters x\x1by show differently in replay's step table.
func TestReplayTellsNamesApart(t *testing.T) {
	log := `{"session_id":"s","step":1,"node":"x\u001by","event":"ok"}
{"session_id":"s","step":2,"node":"x\\x1by","event":"ok"}
`
	lg := readLog(t, "twins.jsonl", log)
	opt := mine.DefaultOptions()
	opt.Merge, opt.Generalize = mine.MergeLabel, mine.GeneralizeNone
	m, err := mine.Build(lg, opt)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := Replay(lg, FindSession(lg, "s"), conform.New(m, conform.Options{})).WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, `x\x1by`) || !strings.Contains(out, `x\x5cx1by`) || strings.Contains(out, "\x1b") {
		t.Errorf("the two states do not show apart:\n%s", out)
	}
}
