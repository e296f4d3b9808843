package guard

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton"
)

// returnsWithFields is a returns desk whose states carry the fields
// build --slots records:
//
//	__start__ -> lookup (-retry-> lookup) -ok-> refund -ok-> __end__
func returnsWithFields(t *testing.T) *automaton.Model {
	t.Helper()
	m := buildModel(t, 1, []edge{
		{automaton.StartID, "", "lookup", 4, false},
		{"lookup", "retry", "lookup", 3, false},
		{"lookup", "ok", "refund", 4, false},
		{"refund", "ok", automaton.EndID, 4, false},
	})
	m.Params.Slots = true
	m.State("lookup").Fields = []string{"attrs.args.order_id"}
	m.State("refund").Fields = []string{"args.order_id", "attrs.args.order_id", "attrs.args.reason", "attrs.channel"}
	m.State("refund").MaxRun = 1
	m.Loops = []automaton.Loop{{States: []string{"lookup"}, BackEdges: []automaton.EdgeRef{{From: "lookup", Event: "retry", To: "lookup"}}, Count: 3, Sessions: 2, MaxIterations: 2, P95Iterations: 2}}
	m.Digest = m.ComputeDigest()
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSuggestPolicy(t *testing.T) {
	m := returnsWithFields(t)
	p := SuggestPolicy(m)
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	want := `{
  "mode": "monitor",
  "loop_caps": [
    {"from":"lookup","event":"retry","to":"lookup","max":2}
  ],
  "watchdog": {"max_turns":3},
  "states": {
    "lookup": {"required_slots": [{"name":"order_id"}], "instructions": ""},
    "refund": {"required_slots": [{"name":"order_id"},{"name":"reason"},{"name":"channel"}], "instructions": ""}
  }
}
`
	if got := buf.String(); got != want {
		t.Errorf("draft:\n%s\nwant:\n%s", got, want)
	}
	// The draft is a policy file serve accepts unchanged, and reads back
	// as the policy written.
	back, err := ReadPolicy(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("ReadPolicy: %v", err)
	}
	if err := back.Check(m); err != nil {
		t.Fatalf("Check: %v", err)
	}
	if !reflect.DeepEqual(back, p) {
		t.Errorf("read back %+v, want %+v", back, p)
	}
	var again bytes.Buffer
	if err := SuggestPolicy(m).Write(&again); err != nil || !bytes.Equal(again.Bytes(), buf.Bytes()) {
		t.Errorf("a second draft differs (err %v):\n%s", err, again.String())
	}
	// Every field the writer knows reads back: rare_is_deviation,
	// generalized, max_unusual and max_unusual_run too.
	p.RareIsDeviation, p.Generalized, p.MaxUnusual, p.MaxUnusualRun = true, GeneralizedDeny, 3, 2
	buf.Reset()
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if back, err := ReadPolicy(bytes.NewReader(buf.Bytes())); err != nil || !reflect.DeepEqual(back, p) {
		t.Errorf("read back %+v (err %v), want %+v:\n%s", back, err, p, buf.String())
	}
}

// TestSuggestPolicyAllowsTheSessions enforces the draft on sessions that
// carry the fields as slots: the log's sessions pass, one that leaves
// without a field or stays longer than any session did is denied.
func TestSuggestPolicyAllowsTheSessions(t *testing.T) {
	m := returnsWithFields(t)
	p := SuggestPolicy(m)
	p.Mode = ModeEnforce
	g, err := New(m, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	type step struct {
		event, next string
		slots       []Slot
	}
	order := []Slot{str("order_id", "W1")}
	full := []Slot{str("order_id", "W1"), str("reason", "broken"), str("channel", "web")}
	tests := []struct {
		name   string
		steps  []step
		denied int // index of the first denied step; -1: none
		reason string
	}{
		{"straight", []step{{"", "lookup", order}, {"ok", "refund", full}, {"ok", automaton.EndID, nil}}, -1, ""},
		{"two retries", []step{{"", "lookup", order}, {"retry", "lookup", order}, {"retry", "lookup", nil}, {"ok", "refund", full}, {"ok", automaton.EndID, nil}}, -1, ""},
		{"no order id", []step{{"", "lookup", nil}, {"ok", "refund", full[1:]}}, 1, ReasonMissingSlot},
		{"no reason", []step{{"", "lookup", order}, {"ok", "refund", order}, {"ok", automaton.EndID, nil}}, 2, ReasonMissingSlot},
		{"a stay longer than any", []step{{"", "lookup", order}, {"retry", "lookup", nil}, {"retry", "lookup", nil}, {"retry", "lookup", nil}}, 3, ReasonWatchdog},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := strings.ReplaceAll(tt.name, " ", "-")
			for i, s := range tt.steps {
				d, err := g.StepSlots(id, s.event, s.next, s.slots)
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if wantOK := tt.denied < 0 || i < tt.denied; d.Allowed != wantOK {
					t.Fatalf("step %d (%s -> %s): allowed %v, reason %q; want allowed %v", i, s.event, s.next, d.Allowed, d.Reason, wantOK)
				}
				if i == tt.denied {
					if d.Reason != tt.reason {
						t.Errorf("step %d: reason %q, want %q", i, d.Reason, tt.reason)
					}
					break
				}
			}
		})
	}
}

func TestSlotName(t *testing.T) {
	tests := []struct{ path, want string }{
		{"attrs.args.order_id", "order_id"},
		{"attrs.args.address.zip", "address.zip"},
		{"args.reason", "reason"},
		{"attrs.channel", "channel"},
		{"attrs.args", "args"},
		{"attrs.", "attrs."},
		{"payload.order", "payload.order"},
	}
	for _, tt := range tests {
		if got := SlotName(tt.path); got != tt.want {
			t.Errorf("SlotName(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}

// TestFieldsInModelFile: fields are written, read back, validated and
// covered by the digest; a model without them keeps its digest.
func TestFieldsInModelFile(t *testing.T) {
	m := returnsWithFields(t)
	bare := buildModel(t, 1, []edge{
		{automaton.StartID, "", "lookup", 4, false},
		{"lookup", "retry", "lookup", 3, false},
		{"lookup", "ok", "refund", 4, false},
		{"refund", "ok", automaton.EndID, 4, false},
	})
	withRun := *bare
	withRun.States = append([]automaton.State(nil), bare.States...)
	withRun.Reindex()
	withRun.State("refund").MaxRun = 1
	if m.Digest == withRun.ComputeDigest() {
		t.Error("the digest does not cover fields")
	}
	var buf bytes.Buffer
	if err := m.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"fields":["attrs.args.order_id"]`) {
		t.Errorf("model file without the fields:\n%s", buf.String())
	}
	back, err := automaton.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if back.ComputeDigest() != m.Digest || !reflect.DeepEqual(back.State("refund").Fields, m.State("refund").Fields) {
		t.Errorf("read back: digest %s fields %q", back.ComputeDigest(), back.State("refund").Fields)
	}
	buf.Reset()
	if err := bare.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), `"fields":[`) || strings.Contains(buf.String(), `"slots"`) {
		t.Errorf("a model without fields writes them:\n%s", buf.String())
	}

	good := func() string {
		var b bytes.Buffer
		if err := m.Write(&b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}()
	tests := []struct{ name, old, new, want string }{
		{"unsorted", `"fields":["args.order_id","attrs.args.order_id"`, `"fields":["attrs.args.order_id","args.order_id"`, `fields are not sorted and unique at fields[1]`},
		{"repeated", `"fields":["args.order_id","attrs.args.order_id"`, `"fields":["args.order_id","args.order_id"`, `fields are not sorted and unique at fields[1]`},
		{"empty", `"fields":["attrs.args.order_id"]`, `"fields":[""]`, `fields[0] is empty`},
		{"on the end", `{"id":"__end__","label":"__end__","visits":4,"sessions":4`, `{"id":"__end__","label":"__end__","visits":4,"sessions":4,"fields":["a"]`, `state "__end__" has fields`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(good, tt.old) {
				t.Fatalf("the model file has no %s:\n%s", tt.old, good)
			}
			_, err := automaton.Read(strings.NewReader(strings.Replace(good, tt.old, tt.new, 1)))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Read: err = %v, want %q", err, tt.want)
			}
		})
	}
}
