package render

import (
	"encoding/json" // an independent reference for valid JSON
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestXStateGolden(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			checkGolden(t, name+".xstate.json.golden", render(t, XState, loadFixture(t, name), Options{}))
		})
	}
}

type xstateMachine struct {
	ID      string                 `json:"id"`
	Initial string                 `json:"initial"`
	States  map[string]xstateState `json:"states"`
}

type xstateState struct {
	Type string `json:"type"`
	Meta struct {
		ID    string `json:"id"`
		Label string `json:"label"`
	} `json:"meta"`
	On map[string][]struct {
		Target string `json:"target"`
		Meta   struct {
			Count int `json:"count"`
		} `json:"meta"`
	} `json:"on"`
}

func TestXStateHoldsEveryTransition(t *testing.T) {
	unescape := strings.NewReplacer("%25", "%", "%2F", "/", "%2A", "*")
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			m := loadFixture(t, name)
			out := render(t, XState, m, Options{})
			if !json.Valid(out) {
				t.Fatalf("not valid JSON:\n%s", out)
			}
			var mc xstateMachine
			if err := json.Unmarshal(out, &mc); err != nil {
				t.Fatal(err)
			}
			idOf := make(map[string]string) // key -> state id
			for key, s := range mc.States {
				if strings.ContainsAny(key, `.\#`) {
					t.Errorf("state key %q holds a path character", key)
				}
				idOf[key] = s.Meta.ID
			}
			if idOf[mc.Initial] != "__start__" {
				t.Errorf("initial %q is not __start__", mc.Initial)
			}
			var got, want, gotStates, wantStates []string
			for key, s := range mc.States {
				gotStates = append(gotStates, idOf[key])
				if (s.Type == "final") != (idOf[key] == "__end__") {
					t.Errorf("state %q has type %q", key, s.Type)
				}
				for event, ts := range s.On {
					if len(ts) != 1 {
						t.Errorf("%s on %q: %d transitions, want 1", key, event, len(ts))
						continue
					}
					ev, label, ok := strings.Cut(event, "/")
					if !ok || strings.Contains(label, "/") || strings.Contains(event, "*") {
						t.Errorf("event %q is not <event>/<label>", event)
					}
					to, ok := idOf[ts[0].Target]
					if !ok {
						t.Errorf("%s on %q: target %q is no state", key, event, ts[0].Target)
					}
					if l := mc.States[ts[0].Target].Meta.Label; l != unescape.Replace(label) {
						t.Errorf("%s on %q enters a state labelled %q", key, event, l)
					}
					got = append(got, strings.Join([]string{idOf[key], unescape.Replace(ev), to, strconv.Itoa(ts[0].Meta.Count)}, " | "))
				}
			}
			for _, s := range m.States {
				wantStates = append(wantStates, s.ID)
			}
			for _, tr := range m.Transitions {
				want = append(want, strings.Join([]string{tr.From, tr.Event, tr.To, strconv.Itoa(tr.Count)}, " | "))
			}
			for _, l := range [][]string{got, want, gotStates, wantStates} {
				slices.Sort(l)
			}
			if !slices.Equal(gotStates, wantStates) {
				t.Errorf("states %q, want %q", gotStates, wantStates)
			}
			if !slices.Equal(got, want) {
				t.Errorf("transitions:\n%q\nwant:\n%q", got, want)
			}
		})
	}
}

func TestXStateEvent(t *testing.T) {
	tests := []struct{ event, label, want string }{
		{"ok", "search", "ok/search"},
		{"", "classify", "/classify"},
		{"a/b", "c", "a%2Fb/c"},
		{"a", "b/c", "a/b%2Fc"},
		{"*", "x.*", "%2A/x.%2A"},
		{"50%", "x", "50%25/x"},
	}
	for _, tt := range tests {
		if got := xstateEvent(tt.event, tt.label); got != tt.want {
			t.Errorf("xstateEvent(%q, %q) = %q, want %q", tt.event, tt.label, got, tt.want)
		}
	}
}
