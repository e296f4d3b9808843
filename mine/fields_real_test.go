package mine

import (
	"bytes"
	"fmt"
	"reflect"
	"sort"
	"testing"

	"github.com/goccy/go-json"

	"github.com/fsmine/fsmine/automaton/guard"
)

// TestRecordFieldsReal mines the published tau2 retail runs and tau-bench
// airline trajectories (skipped when ../shared/data is absent) with their
// fields, checks what some tool states require, and enforces the policy
// SuggestPolicy drafts (in enforce mode) on every session, each step
// carrying its record's arguments as slots: every step of every session is
// allowed, while the same sessions without slots are denied.
func TestRecordFieldsReal(t *testing.T) {
	tests := []struct {
		name   string
		files  []string
		labels string
		want   map[string][]string // some states' fields
	}{
		{"tau2 retail", []string{"raw/tau2/gpt-4.1_retail_default_gpt-4.1_1trials.json", "raw/tau2/ft-gpt-4.1_retail_default_gpt-4.1_1trials.json"}, "", map[string][]string{
			"return_delivered_order_items":   {"attrs.args.item_ids", "attrs.args.order_id", "attrs.args.payment_method_id"},
			"exchange_delivered_order_items": {"attrs.args.item_ids", "attrs.args.new_item_ids", "attrs.args.order_id", "attrs.args.payment_method_id"},
			"cancel_pending_order":           {"attrs.args.order_id", "attrs.args.reason"},
			"get_order_details":              {"attrs.args.order_id"},
			"find_user_id_by_name_zip":       {"attrs.args.first_name", "attrs.args.last_name", "attrs.args.zip"},
			"user_msg":                       nil,
		}},
		// Label rules drop the text turns and fold repeated lookups: a
		// folded visit's record is its first.
		{"tau2 retail labelled", []string{"raw/tau2/gpt-4.1_retail_default_gpt-4.1_1trials.json", "raw/tau2/ft-gpt-4.1_retail_default_gpt-4.1_1trials.json"}, "../testdata/tau2_retail.labels.json", map[string][]string{
			"return_items":      {"attrs.args.item_ids", "attrs.args.order_id", "attrs.args.payment_method_id"},
			"modify_order":      {"attrs.args.order_id"},
			"lookup_order":      {"attrs.args.order_id"},
			"identify_customer": nil,
		}},
		{"tau-bench airline", []string{"raw/tau-bench/gpt-4o-airline.json"}, "", map[string][]string{
			"get_reservation_details": {"attrs.args.reservation_id"},
			"cancel_reservation":      {"attrs.args.reservation_id"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ins []Input
			for _, f := range tt.files {
				ins = append(ins, realInput(t, f))
			}
			var ropt ReadOptions
			if tt.labels != "" {
				ropt.Rules = readRules(t, tt.labels)
			}
			lg, err := Read(ins, ropt)
			if err != nil {
				t.Fatal(err)
			}
			m, err := Build(lg, DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			plain := m.Digest
			rep, _, err := RecordFields(lg, m, ins, ropt, FieldOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Validate(); err != nil {
				t.Fatal(err)
			}
			if m.Digest == plain || rep.Unplaced+rep.Unreadable+rep.TooLong+rep.Unnamed > 0 || rep.FirstUntracked != "" {
				t.Errorf("digest %s (plain %s), report %+v", m.Digest, plain, *rep)
			}
			for id, want := range tt.want {
				s := m.State(id)
				if s == nil {
					t.Errorf("no state %s", id)
					continue
				}
				if !reflect.DeepEqual(s.Fields, want) {
					t.Errorf("%s: fields %q, want %q", id, s.Fields, want)
				}
			}

			p := guard.SuggestPolicy(m)
			var buf bytes.Buffer
			if err := p.Write(&buf); err != nil {
				t.Fatal(err)
			}
			p, err = guard.ReadPolicy(&buf)
			if err != nil {
				t.Fatal(err)
			}
			p.Mode = guard.ModeEnforce
			declared := map[string]bool{}
			for _, sp := range p.States {
				for _, r := range sp.RequiredSlots {
					declared[r.Name] = true
				}
			}
			slots := recordSlots(t, ins, ropt, declared)
			for _, withSlots := range []bool{true, false} {
				g, err := guard.New(m, p, guard.Options{})
				if err != nil {
					t.Fatal(err)
				}
				denied := 0
				for si := range lg.Sessions {
					s := &lg.Sessions[si]
					mvs := lg.Moves(s)
					for i, mv := range mvs {
						var ss []guard.Slot
						if withSlots && i < len(s.Visits) {
							ss = slots[uint64(s.Visits[i].File)<<32|uint64(s.Visits[i].Line)]
						}
						d, err := g.StepSlots(s.ID, mv.Event, mv.Label, ss)
						if err != nil {
							t.Fatalf("session %s step %d: %v", s.ID, i, err)
						}
						if !d.Allowed {
							if withSlots {
								t.Fatalf("session %s step %d (%s -> %s): denied, %s %v", s.ID, i, mv.Event, mv.Label, d.Reason, d.MissingSlots)
							}
							denied++
							break
						}
					}
				}
				if !withSlots && denied == 0 {
					t.Error("without slots no session was denied: the draft requires nothing")
				}
				if !withSlots {
					t.Logf("%d of %d sessions denied without slots", denied, len(lg.Sessions))
				}
			}
		})
	}
}

// recordSlots reads the inputs again and returns, per record (input and
// line), its tool arguments (attrs.args) named as SuggestPolicy names
// them, those declared only: strings as they are, other values as their
// JSON text.
func recordSlots(t *testing.T, ins []Input, ropt ReadOptions, declared map[string]bool) map[uint64][]guard.Slot {
	t.Helper()
	out := map[uint64][]guard.Slot{}
	err := rereadRecords(ins, ropt, func(fi, line, _ int, l []byte, _ *rec) bool {
		var r struct {
			Attrs struct {
				Args map[string]json.RawMessage `json:"args"`
			} `json:"attrs"`
		}
		if err := json.Unmarshal(l, &r); err != nil {
			t.Fatalf("%d:%d: %v", fi, line, err)
		}
		var ss []guard.Slot
		for k, v := range r.Attrs.Args {
			name := guard.SlotName("attrs.args." + k)
			if !declared[name] {
				continue
			}
			text := string(bytes.TrimSpace(v))
			if text == "null" {
				continue
			}
			if text[0] == '"' {
				if err := json.Unmarshal(v, &text); err != nil {
					t.Fatal(err)
				}
			}
			ss = append(ss, guard.Slot{Name: name, Value: text})
		}
		sort.Slice(ss, func(i, j int) bool { return ss[i].Name < ss[j].Name })
		out[uint64(fi)<<32|uint64(line)] = ss
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatal(fmt.Errorf("no records"))
	}
	return out
}
