package automaton

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestDecodeToSeal: a model a person edited, a transition added where it
// does not belong in the file's order, is refused by Decode and put in
// order by DecodeToSeal (fsmine seal), which then seals it.
func TestDecodeToSeal(t *testing.T) {
	m := buildModel(t, 3, []edge{
		{StartID, "", "a", 4, false},
		{"a", "ok", "b", 4, false},
		{"b", "done", EndID, 4, false},
	})
	m.Digest = m.ComputeDigest()
	var buf bytes.Buffer
	if err := m.Write(&buf); err != nil {
		t.Fatal(err)
	}
	// The edit: a -[retry]-> a, written after b's transition.
	done := `{"from":"b","event":"done","to":"__end__"`
	i := strings.Index(buf.String(), done)
	if i < 0 {
		t.Fatalf("no %s in\n%s", done, buf.String())
	}
	edited := buf.String()[:i] + `{"from":"b","event":"done","to":"__end__","count":4,"sessions":4,"prob":1,"rare":false,"back_edge":false},
    {"from":"a","event":"retry","to":"a","count":1,"sessions":1,"prob":0.2,"rare":false,"back_edge":false}` + buf.String()[i+strings.Index(buf.String()[i:], "}")+1:]
	if _, err := Decode(strings.NewReader(edited)); err == nil || !strings.Contains(err.Error(), "out of order") {
		t.Fatalf("Decode: %v, want out of order", err)
	}
	s, reordered, err := DecodeToSeal(strings.NewReader(edited))
	if err != nil || !reordered {
		t.Fatalf("DecodeToSeal: reordered %v, %v; want true", reordered, err)
	}
	var got []string
	for _, tr := range s.Transitions {
		got = append(got, tr.From+" "+tr.Event+" "+tr.To)
	}
	if want := []string{"__start__  a", "a ok b", "a retry a", "b done __end__"}; !slices.Equal(got, want) {
		t.Errorf("transitions %q, want %q", got, want)
	}
	if _, err := s.Seal(); err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	if err := s.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(&buf); err != nil {
		t.Errorf("the sealed model does not read back: %v", err)
	}
}

// TestReadRefusesInvalidModels: every command reads models through Read,
// so Validate is where a hostile or damaged model file is refused.
func TestReadRefusesInvalidModels(t *testing.T) {
	m := buildModel(t, 3, []edge{
		{StartID, "", "a", 4, false},
		{"a", "retry", "a", 2, false},
		{"a", "ok", "b", 4, false},
		{"b", "done", EndID, 4, false},
	})
	m.Parent = &Parent{Version: 2, Digest: "sha256:00"}
	m.Trunk = []string{"a", "b"}
	m.Loops = []Loop{{States: []string{"a"}, BackEdges: []EdgeRef{{"a", "retry", "a"}}, Count: 2, Sessions: 1, MaxIterations: 2, P95Iterations: 2}}
	m.TopVariants = []Variant{{Count: 4, States: []string{"a", "b"}}}
	m.State("a").MaxRun = 2
	m.State("a").DwellMS = &Dwell{P50: 10, P95: 20, Max: 30}
	m.Digest = m.ComputeDigest()
	var buf bytes.Buffer
	if err := m.Write(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.String()
	if _, err := Read(strings.NewReader(good)); err != nil {
		t.Fatalf("the valid model: %v", err)
	}
	tests := []struct {
		name, old, new, want string
	}{
		{"negative version", `"version": 3`, `"version": -3`, "version is negative (-3)"},
		{"negative parent version", `"parent": {"version":2`, `"parent": {"version":-2`, "parent.version is negative"},
		{"negative visits", `{"id":"a","label":"a","visits":6`, `{"id":"a","label":"a","visits":-6`, `a count of state "a" is negative`},
		{"negative transition count", `"event":"ok","to":"b","count":4`, `"event":"ok","to":"b","count":-4`, "has a negative count"},
		{"negative sessions of the source", `"sessions":4,"events"`, `"sessions":-4,"events"`, "a count of source is negative"},
		{"negative loop count", `"count":2,"sessions":1,"max_iterations"`, `"count":-2,"sessions":1,"max_iterations"`, "a count of loop 0 is negative"},
		{"negative variants", `"variants": 0`, `"variants": -1`, "variants is negative"},
		{"prob above 1", `"to":"__end__","count":4,"sessions":4,"prob":1`, `"to":"__end__","count":4,"sessions":4,"prob":1.5`, "has prob 1.5, want 0 to 1"},
		{"negative prob", `"to":"__end__","count":4,"sessions":4,"prob":1`, `"to":"__end__","count":4,"sessions":4,"prob":-0.5`, "has prob -0.5"},
		{"trunk names a missing state", `"trunk": ["a","b"]`, `"trunk": ["a","nope"]`, `trunk[1] names unknown state "nope"`},
		{"loop names a missing state", `{"states":["a"],"back_edges"`, `{"states":["a","nope"],"back_edges"`, `loop 0 names unknown state "nope"`},
		{"back edge that is no transition", `"back_edges":[{"from":"a","event":"retry","to":"a"}]`, `"back_edges":[{"from":"a","event":"again","to":"a"}]`, "back edge a -[again]-> a is not a transition"},
		{"variant names a missing state", `{"count":4,"states":["a","b"]}`, `{"count":4,"states":["a","x"]}`, `top_variants[0] names unknown state "x"`},
		{"count past int64", `"event":"ok","to":"b","count":4`, `"event":"ok","to":"b","count":9223372036854775808`, "9223372036854775808"},
		{"negative max_run", `"max_run":2`, `"max_run":-1`, `a count of state "a" is negative (-1)`},
		// it fits an int64, but a float64 rounds it up to 2^63, which the
		// model's writer wrote as an integer that no reader takes
		{"dwell at int64's end", `"p50":10`, `"p50":9223372036854775807`, `state "a": dwell_ms.p50 is 9.223372036854776e+18, want it below 2^63 either way`},
		{"dwell at int64's other end", `"max":30`, `"max":-9223372036854775808`, `state "a": dwell_ms.max is -9.223372036854776e+18, want it below 2^63 either way`},
		{"counts adding up past int64", `"event":"ok","to":"b","count":4`, `"event":"ok","to":"b","count":9223372036854775807`, "the transitions' counts add up past 9223372036854775807"},
		{"negative count past int64", `"event":"ok","to":"b","count":4`, `"event":"ok","to":"b","count":-9223372036854775809`, "-9223372036854775809"},
		{"a transition twice", `"transitions": [`, `"transitions": [{"from":"a","event":"ok","to":"b","count":4,"sessions":4,"prob":0.6666666666666666,"rare":false,"back_edge":false},`, "transition a -[ok]-> b is given twice"},
		// The start and the end keep their own labels, and no other state
		// takes them: check and the guard misread such a model.
		{"the end labelled", `{"id":"__end__","label":"__end__"`, `{"id":"__end__","label":"b"`, `state "__end__" is labelled "b": the start and the end keep their own labels`},
		{"the start labelled", `{"id":"__start__","label":"__start__"`, `{"id":"__start__","label":""`, `state "__start__" is labelled "": the start and the end keep their own labels`},
		{"a state labelled as the end", `{"id":"a","label":"a"`, `{"id":"a","label":"__end__"`, `state "a" is labelled "__end__", the label of the start or the end`},
		{"a state labelled as the start", `{"id":"a","label":"a"`, `{"id":"a","label":"__start__"`, `state "a" is labelled "__start__", the label of the start or the end`},
		// Sorted by from, event, to: the digest reads them in that order,
		// so another order of the same map would be another digest.
		{"transitions out of order", `"from":"a","event":"ok","to":"b"`, `"from":"a","event":"zz","to":"b"`, "transition a -[retry]-> a is out of order, after a -[zz]-> b: want transitions sorted by from (__start__ first), event, then to"},
		{"a loop naming a state twice", `{"states":["a"],"back_edges"`, `{"states":["a","a"],"back_edges"`, `loop 0 names state "a" twice`},
		{"a schema not a string", `"schema": "fsmine.automaton/v1"`, `"schema": 1`, `schema is a JSON number, want the string "fsmine.automaton/v1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(good, tt.old) {
				t.Fatalf("the model file has no %s:\n%s", tt.old, good)
			}
			_, err := Read(strings.NewReader(strings.Replace(good, tt.old, tt.new, 1)))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Read: err = %v, want %q", err, tt.want)
			}
		})
	}
	for _, other := range []struct{ json, want string }{
		{`[1, 2]`, "not an fsmine model: it is a JSON array, not an object"},
		{`"fsmine.automaton/v1"`, "not an fsmine model: it is a JSON string, not an object"},
	} {
		if _, err := Read(strings.NewReader(other.json)); err == nil || err.Error() != other.want {
			t.Errorf("Read(%s) = %v, want %q", other.json, err, other.want)
		}
	}
	// A byte-order mark an editor put first is no part of the model.
	if _, err := Read(strings.NewReader("\uFEFF" + good)); err != nil {
		t.Errorf("Read with a byte-order mark: %v", err)
	}
}

// TestValidateParams: the parameters a model file carries are refused as
// its counts are, negative, or a float it cannot hold.
func TestValidateParams(t *testing.T) {
	tests := []struct {
		name string
		set  func(p *Params)
		want string
	}{
		{"negative constraint support", func(p *Params) { p.ConstraintSupport = -1 }, "params.constraint_support is negative (-1)"},
		{"negative examples", func(p *Params) { p.Examples = -2 }, "params.examples is negative (-2)"},
		{"alpha written as an integer beyond int64", func(p *Params) { p.Alpha = 1e19 }, "params.alpha is 1e+19, which a model file cannot hold"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := buildModel(t, 1, []edge{{StartID, "", "a", 1, false}, {"a", "done", EndID, 1, false}})
			tt.set(&m.Params)
			if err := m.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate: err = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestValidateMeaning: fields whose value a reader could not give a
// meaning are refused: a kind of generalisation fsmine does not know (what
// would it allow?), more example sessions than the model's params keep, an
// empty example id, and a loop of no states.
func TestValidateMeaning(t *testing.T) {
	tests := []struct {
		name string
		edit func(m *Model)
		want string // "" for valid
	}{
		{"every kind", func(m *Model) {
			for i, k := range GeneralizedKinds {
				m.Transitions = append(m.Transitions, Transition{From: "a", Event: "k" + k, To: EndID, Generalized: GeneralizedKinds[i]})
			}
			m.Sort()
		}, ""},
		{"unknown kind", func(m *Model) { m.Transitions[1].Generalized = "guess" }, `transition a -[done]-> __end__: generalized is "guess", want one of skip, swap, event, follow, any-order, loose`},
		{"examples within params", func(m *Model) {
			m.Params.Examples = 2
			m.State("a").Examples = []string{"s1", "s2"}
			m.Transitions[1].Examples = []string{"s1"}
		}, ""},
		{"more state examples than params", func(m *Model) {
			m.Params.Examples = 2
			m.State("a").Examples = []string{"s1", "s2", "s3"}
		}, `state "a" has 3 examples, more than params.examples 2`},
		{"transition examples without params", func(m *Model) { m.Transitions[1].Examples = []string{"s1"} }, `transition a -[done]-> __end__ has 1 examples, more than params.examples 0`},
		{"an empty example", func(m *Model) {
			m.Params.Examples = 3
			m.State("a").Examples = []string{"s1", ""}
		}, `state "a" has an empty example session id`},
		{"params.examples past the bound", func(m *Model) { m.Params.Examples = MaxExamples + 1 }, "params.examples is 11, at most 10"},
		{"a loop of no states", func(m *Model) { m.Loops = []Loop{{}} }, "loop 0 has no states"},
		{"a design format", func(m *Model) { m.Params.Design = "star" }, ""},
		{"a design format with a newline", func(m *Model) { m.Params.Design = "star\nfit 100%" }, `params.design: value "star\nfit 100%" has a control character at byte 4`},
		{"import options", func(m *Model) {
			m.Params.Import = &Import{Sort: "file", Lifecycle: "complete", Classifier: "Activity classifier", KeepSpans: true}
		}, ""},
		{"an import sort unknown", func(m *Model) { m.Params.Import = &Import{Sort: "random"} }, `params.import.sort is "random", want time or file`},
		{"an import lifecycle unknown", func(m *Model) { m.Params.Import = &Import{Lifecycle: "Complete"} }, `params.import.lifecycle is "Complete", want complete, start or all`},
		{"an import classifier with a newline", func(m *Model) { m.Params.Import = &Import{Classifier: "a\nb"} }, `params.import.classifier: value "a\nb" has a control character at byte 1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := buildModel(t, 1, []edge{{StartID, "", "a", 1, false}, {"a", "done", EndID, 1, false}})
			tt.edit(m)
			err := m.Validate()
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("Validate: err = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestReadRefusesAmbiguousKeys: a key given twice, or in other case than
// fsmine writes it, is read one way by fsmine's decoder and another by jq
// or Python, so the model reviewed would not be the one enforced.
func TestReadRefusesAmbiguousKeys(t *testing.T) {
	m := loopModel(t)
	m.Params.Labels = RawJSON(`{"rules":[{"Match":{"node":"x"}}]}`)
	m.Digest = m.ComputeDigest()
	good := encode(t, m)
	if _, err := Read(strings.NewReader(good)); err != nil {
		t.Fatalf("the valid model: %v", err)
	}
	tests := []struct {
		name, old, new, want string // want "" for valid
	}{
		{"a key twice", `"max_iterations":2`, `"max_iterations":7,"max_iterations":2`, `loops[0]: the key "max_iterations" is given twice`},
		{"a key twice, once escaped", `"max_iterations":2`, `"max_iterations":7,"max_iter\u0061tions":2`, `loops[0]: the key "max_iterations" is given twice`},
		{"a key in other case", `"max_iterations":2`, `"max_iterations":7,"MAX_ITERATIONS":2`, `loops[0]: the key "MAX_ITERATIONS" is in other case: want "max_iterations"`},
		{"alone in other case", `"max_iterations":2`, `"Max_Iterations":2`, `the key "Max_Iterations" is in other case`},
		{"at the top", `"version": 1`, `"Version": 1`, `the top-level object: the key "Version" is in other case: want "version"`},
		// The decoder folds as strings.EqualFold does: the long s (U+017F)
		// as s, the Kelvin sign (U+212A) as k. jq and Python read the key
		// as another; fsmine read max_iterations 0, no cap.
		{"a long s", `"max_iterations":2`, `"max_iterations":2,"max_iteration\u017f":0`, "loops[0]: the key \"max_iteration\u017f\" is in other case: want \"max_iterations\""},
		{"a long s unescaped", `"max_iterations":2`, "\"max_iterations\":2,\"max_iteration\u017f\":0", "the key \"max_iteration\u017f\" is in other case"},
		{"a Kelvin sign", `"back_edges"`, `"bac\u212a_edges":[],"back_edges"`, "loops[0]: the key \"bac\u212a_edges\" is in other case: want \"back_edges\""},
		{"in a state", `{"id":"a","label":"a"`, `{"id":"a","Label":"a"`, `states[1]: the key "Label"`},
		{"a key fsmine does not read", `"max_iterations":2`, `"max_iterations":2,"Note":"x"`, ""},
		{"an unknown key twice", `"max_iterations":2`, `"max_iterations":2,"note":1,"note":2`, `loops[0]: the key "note" is given twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(good, tt.old) {
				t.Fatalf("the model file has no %s:\n%s", tt.old, good)
			}
			_, err := Read(strings.NewReader(strings.Replace(good, tt.old, tt.new, 1)))
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("Read: err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestCheckIntegers(t *testing.T) {
	tests := []struct {
		json string
		ok   bool
	}{
		{`{"a": 9223372036854775807, "b": -9223372036854775808}`, true},
		{`{"a": 1e30, "b": 1.5, "c": -0.25e-3}`, true},
		{`{"a": "99999999999999999999", "b\"": "-1"}`, true},
		{`{"a": [1, 9223372036854775808]}`, false},
		{`{"a": -9223372036854775809}`, false},
	}
	for _, tt := range tests {
		if err := checkIntegers([]byte(tt.json)); (err == nil) != tt.ok {
			t.Errorf("checkIntegers(%s) = %v, want ok %v", tt.json, err, tt.ok)
		}
	}
}

// TestValidateOutcomes: outcome counts need an expression, and cannot
// count more successes than sessions or less than none.
func TestValidateOutcomes(t *testing.T) {
	tests := []struct {
		name string
		edit func(m *Model)
		want string // "" for valid
	}{
		{"none", func(m *Model) {}, ""},
		{"counted", func(m *Model) {
			m.Params.Outcome = "ok=true"
			m.Source.Outcome = &Outcome{Sessions: 4, Succeeded: 3, Unknown: 1}
			m.States[1].Outcome = &Outcome{Sessions: 4, Succeeded: 3}
		}, ""},
		{"no expression", func(m *Model) { m.Source.Outcome = &Outcome{Sessions: 4} }, "invalid model: source has outcome counts, but params.outcome names no expression"},
		{"more succeeded", func(m *Model) {
			m.Params.Outcome = "ok=true"
			m.Transitions[0].Outcome = &Outcome{Sessions: 2, Succeeded: 3}
		}, "invalid model: the outcome of transition __start__ -[]-> a counts 2 sessions, 3 succeeded, 0 unknown"},
		{"negative", func(m *Model) {
			m.Params.Outcome = "ok=true"
			m.States[1].Outcome = &Outcome{Sessions: 2, Unknown: -1}
		}, `invalid model: the outcome of state "a" counts 2 sessions, 0 succeeded, -1 unknown`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := buildModel(t, 1, []edge{{StartID, "", "a", 4, false}, {"a", "ok", EndID, 4, false}})
			tt.edit(m)
			err := m.Validate()
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("Validate = %v, want %q", err, tt.want)
			}
		})
	}
}

// FuzzCheckKeys: any JSON that decodes is scanned without a panic, and a
// key repeated in one object is always found.
func FuzzCheckKeys(f *testing.F) {
	f.Add(`{"a":1,"b":[{"c":"d\"e"},null,true,-1.5e3]}`)
	f.Add(`{"params":{"labels":{"X":1,"X":2}},"loops":[{"Max_Iterations":1}]}`)
	f.Fuzz(func(t *testing.T, s string) {
		var v any
		if json.Unmarshal([]byte(s), &v) != nil {
			return
		}
		err := checkKeys([]byte(s))
		twice := `{"k":1,"k":2}`
		if err2 := checkKeys([]byte(`[` + s + `,` + twice + `]`)); err == nil && err2 == nil {
			t.Errorf("checkKeys missed the key given twice after %s", s)
		}
	})
}

// TestValidateKeepsCurrentIndex: Validate leaves a model it indexed before,
// and the sub-maps it made, as they are while the model is unchanged (a
// guard validates the model it is reading; see guard's
// TestGuardValidatesModelInUse), and rebuilds them once the model changed.
func TestValidateKeepsCurrentIndex(t *testing.T) {
	m := byModel(t)
	ix, sub := m.index, m.For("A")
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	if m.index != ix || m.For("A") != sub {
		t.Error("Validate of an unchanged model rebuilt its index or sub-maps")
	}
	// A state relabelled in place, a sub-map's transitions replaced.
	m.State("b").Label = "c"
	m.By.Maps[0].Transitions = slices.Clone(m.By.Maps[0].Transitions)
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	if m.index == ix || !m.HasLabel("c") || m.HasLabel("b") {
		t.Error("Validate of a relabelled model kept its old index")
	}
	if got := m.For("A"); got == sub || &got.Transitions[0] != &m.By.Maps[0].Transitions[0] {
		t.Error("Validate kept a sub-map of transitions the map no longer has")
	}
	// Argument rules set after the sub-maps were made (as build --args
	// does) are the sub-maps' too.
	m.Args = []ArgRule{{Tool: "a", Arg: "id", Kind: KindValueWithoutSource, Steps: 3, Sessions: 3}}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := m.For("B").Args; len(got) != 1 {
		t.Errorf("sub-map B's argument rules = %v, want the shared map's", got)
	}
}
