package mine

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/conform"
)

// TestExamplesAreTheSmallest replays every session of a log through the
// model mined from it and wants each state's and each transition's examples
// to be the n sessions with the smallest hashes among those that passed
// there; generalised transitions have none; the digest ignores them.
func TestExamplesAreTheSmallest(t *testing.T) {
	tests := []struct {
		name   string
		inputs func(t *testing.T) []Input
		rules  *Rules
		merge  string
	}{
		{"returns alergia", func(t *testing.T) []Input { return []Input{fileInput(t, "../testdata/returns.jsonl")} }, readRules(t, "../testdata/returns.labels.json"), MergeAlergia},
		{"returns label", func(t *testing.T) []Input { return []Input{fileInput(t, "../testdata/returns.jsonl")} }, nil, MergeLabel},
		{"helpdesk", func(t *testing.T) []Input { return []Input{realInput(t, "jsonl/helpdesk.jsonl.gz")} }, nil, MergeAlergia},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lg, err := Read(tt.inputs(t), ReadOptions{Rules: tt.rules})
			if err != nil {
				t.Fatal(err)
			}
			opt := DefaultOptions()
			opt.Merge = tt.merge
			opt.Examples = 0
			none, err := Build(lg, opt)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := none.Write(&buf); err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(buf.Bytes(), []byte(`"examples"`)) {
				t.Errorf("a model built with examples 0 has an examples field")
			}
			for _, n := range []int{1, 3, MaxExamples} {
				opt.Examples = n
				m, err := Build(lg, opt)
				if err != nil {
					t.Fatal(err)
				}
				if m.Digest != none.Digest {
					t.Errorf("examples %d: digest %s, without examples %s", n, m.Digest, none.Digest)
				}
				if m.Params.Examples != n {
					t.Errorf("params.examples = %d, want %d", m.Params.Examples, n)
				}
				states, trans := passedBy(t, lg, m)
				for _, s := range m.States {
					if want := smallest(states[s.ID], n); !slices.Equal(s.Examples, want) {
						t.Errorf("examples %d: state %s: %q, want %q", n, s.ID, s.Examples, want)
					}
				}
				gen := 0
				for i := range m.Transitions {
					tr := &m.Transitions[i]
					if tr.Generalized != "" {
						gen++
						if tr.Examples != nil {
							t.Errorf("generalised %s -[%s]-> %s has examples %q", tr.From, tr.Event, tr.To, tr.Examples)
						}
						continue
					}
					if want := smallest(trans[tr], n); !slices.Equal(tr.Examples, want) {
						t.Errorf("examples %d: %s -[%s]-> %s: %q, want %q", n, tr.From, tr.Event, tr.To, tr.Examples, want)
					}
				}
				t.Logf("examples %d: %d states, %d transitions (%d generalised)", n, len(m.States), len(m.Transitions), gen)
			}
		})
	}
}

// passedBy replays every session and returns the sessions that passed each
// state and took each transition.
func passedBy(t *testing.T, lg *Log, m *automaton.Model) (map[string]map[string]bool, map[*automaton.Transition]map[string]bool) {
	t.Helper()
	states := map[string]map[string]bool{}
	trans := map[*automaton.Transition]map[string]bool{}
	add := func(set map[string]bool, id string) map[string]bool {
		if set == nil {
			set = map[string]bool{}
		}
		set[id] = true
		return set
	}
	c := conform.New(m, conform.Options{})
	for i := range lg.Sessions {
		s := &lg.Sessions[i]
		states[automaton.StartID] = add(states[automaton.StartID], s.ID)
		for _, st := range c.Replay(lg.Moves(s)) {
			if st.Transition == nil {
				t.Fatalf("session %s: move %d has no transition in the model it was mined into", s.ID, st.Move)
			}
			trans[st.Transition] = add(trans[st.Transition], s.ID)
			states[st.To] = add(states[st.To], s.ID)
		}
	}
	return states, trans
}

// smallest sorts ids by exampleHash (then id), keeps n, and sorts those by id.
func smallest(set map[string]bool, n int) []string {
	var xs []example
	for id := range set {
		xs = append(xs, example{exampleHash(id), id})
	}
	slices.SortFunc(xs, exampleCmp)
	return exampleIDs(xs[:min(n, len(xs))])
}

func TestOfferAndMergeExamples(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		n := 1 + rng.IntN(5)
		var all []example
		var a, b []example
		for i := 0; i < rng.IntN(20); i++ {
			// Few distinct ids so that both sides share some.
			id := "s" + strings.Repeat("x", rng.IntN(8))
			e := example{exampleHash(id), id}
			all = append(all, e)
			if rng.IntN(2) == 0 {
				a = offerExample(a, e, n)
			} else {
				b = offerExample(b, e, n)
			}
		}
		slices.SortFunc(all, exampleCmp)
		all = slices.CompactFunc(all, func(x, y example) bool { return exampleCmp(x, y) == 0 })
		want := all[:min(n, len(all))]
		aCopy, bCopy := slices.Clone(a), slices.Clone(b)
		got := mergeExamples(a, b, n)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: merge(%v, %v, %d) = %v, want %v", trial, a, b, n, got, want)
		}
		if !slices.Equal(a, aCopy) || !slices.Equal(b, bCopy) {
			t.Fatalf("trial %d: merge wrote to its inputs", trial)
		}
	}
}

func fileInput(t *testing.T, path string) Input {
	t.Helper()
	return Input{Name: path, Open: func() (io.ReadCloser, error) { return os.Open(path) }}
}

func TestExamplesOutOfRange(t *testing.T) {
	lg, err := Read([]Input{fileInput(t, "../testdata/returns.jsonl")}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{-1, MaxExamples + 1} {
		opt := DefaultOptions()
		opt.Examples = n
		if _, err := Build(lg, opt); err == nil || !strings.Contains(err.Error(), "want 0 to 10") {
			t.Errorf("examples %d: error %v, want one naming the range", n, err)
		}
	}
}

// TestExamplesIndependentOfOrder mines the returns sample with its lines
// shuffled and dealt into three inputs, read in another order, with one and
// four workers, held and streaming, and wants the same model.
func TestExamplesIndependentOfOrder(t *testing.T) {
	data, err := os.ReadFile("../testdata/returns.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
	for i := range lines {
		lines[i] = strings.TrimSuffix(lines[i], "\n") + "\n"
	}
	rules := readRules(t, "../testdata/returns.labels.json")
	model := func(ins []Input, workers int, stream bool) string {
		lg, err := Read(ins, ReadOptions{Rules: rules, Workers: workers, Stream: stream, Window: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		opt := DefaultOptions()
		opt.Examples = MaxExamples
		m, err := Build(lg, opt)
		if err != nil {
			t.Fatal(err)
		}
		m.Source.Files = nil
		var buf bytes.Buffer
		if err := m.Write(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	want := model([]Input{memInput("all.jsonl", strings.Join(lines, ""))}, 1, false)
	if !strings.Contains(want, `"examples":[`) {
		t.Fatal("the model has no examples")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := 0; trial < 3; trial++ {
		shuffled := slices.Clone(lines)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		var parts [3]strings.Builder
		for i, l := range shuffled {
			parts[i%3].WriteString(l)
		}
		ins := []Input{memInput("c.jsonl", parts[2].String()), memInput("a.jsonl", parts[0].String()), memInput("b.jsonl", parts[1].String())}
		for _, workers := range []int{1, 4} {
			for _, stream := range []bool{false, true} {
				if got := model(ins, workers, stream); got != want {
					t.Errorf("trial %d, %d workers, stream %v: the model differs", trial, workers, stream)
				}
			}
		}
	}
}
