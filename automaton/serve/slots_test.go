package serve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"
)

const slotsModel = "../guard/testdata/slots.json"

const slotsServePolicy = `{
  "slots": [{"name": "amount", "pattern": "^[0-9]+$"}],
  "states": {
    "collecting_info": {
      "required_slots": [{"name": "order_id", "pattern": "^[A-Z]{2}[0-9]{8}$"}, {"name": "reason"}],
      "instructions": "Ask for the order id and the reason."
    },
    "confirming": {"instructions": "Confirm the return with the customer."}
  },
  "transitions": [
    {"from": "confirming", "event": "confirmed", "to": "refund", "when": [{"slot": "amount", "present": true}]}
  ]
}`

// newSlotsServer serves the slots fixture under policy, with a decision log
// in memory.
func newSlotsServer(t *testing.T, policy string, slotValues bool) *testServer {
	t.Helper()
	policyPath := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(policyPath, []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	return startTestServer(t, slotsModel, policyPath, Config{LogSlotValues: slotValues})
}

func TestServeSlots(t *testing.T) {
	for _, values := range []bool{false, true} {
		name := "names only"
		if values {
			name = "with values"
		}
		t.Run(name, func(t *testing.T) {
			ts := newSlotsServer(t, slotsServePolicy, values)
			const steps = "/v1/sessions/s1/steps"
			tests := []struct {
				name, body string
				code       int
				want       []string // substrings of the answer
			}{
				{"first", `{"next":"greet"}`, 200, []string{`"allowed":true`}},
				{"instructions", `{"event":"ok","next":"collecting_info"}`, 200, []string{`"state":"collect"`, `"instructions":"Ask for the order id and the reason."`}},
				{"missing", `{"event":"ok","next":"confirming"}`, 200, []string{`"allowed":false,"reason":"missing_slot"`, `"missing_slots":["order_id","reason"]`, `"instructions":"Ask for`}},
				{"invalid", `{"event":"ok","next":"confirming","slots":{"order_id":"A1","reason":"broken"}}`, 200, []string{`"reason":"invalid_slot"`, `"invalid_slots":["order_id"]`}},
				{"object", `{"event":"ok","next":"confirming","slots":{"order_id":{"x":1}}}`, 400, []string{`bad step body: slots[\"order_id\"] is an object; want a string, number or bool`}},
				{"null", `{"event":"ok","next":"confirming","slots":{"reason":null}}`, 400, []string{`slots[\"reason\"] is null`}},
				{"array", `{"next":"confirming","slots":["order_id"]}`, 400, []string{`slots is an array`}},
				{"undeclared", `{"event":"ok","next":"confirming","slots":{"color":"red","order_id":"AB12345678"}}`, 400, []string{`bad step body: slots[\"color\"]: the policy declares no such slot`}},
				{"twice", `{"event":"ok","next":"confirming","slots":{"reason":"a","reason":"b"}}`, 400, []string{`slots[\"reason\"] is given twice`}},
				{"good (an escape: the slow path)", `{"event":"ok","next":"confirming","slots":{"order_id":"AB12345678","reason":"too \u0073mall"}}`, 200, []string{`"allowed":true`, `"state":"confirm"`, `"instructions":"Confirm the return with the customer."`}},
				{"condition", `{"event":"confirmed","next":"refund"}`, 200, []string{`"reason":"condition_failed"`, `"condition":"transitions[0].when[0]: slot \"amount\" is present"`}},
				{"a number", `{"event":"confirmed","next":"refund","slots":{"amount":12}} `, 200, []string{`"allowed":true`, `"state":"refund"`}},
			}
			for _, tt := range tests {
				code, _, body := ts.do(t, "POST", steps, tt.body, "")
				if code != tt.code {
					t.Errorf("%s: %d %s, want %d", tt.name, code, body, tt.code)
					continue
				}
				for _, w := range tt.want {
					if !strings.Contains(body, w) {
						t.Errorf("%s: answer %s lacks %s", tt.name, body, w)
					}
				}
			}
			_, _, model := ts.do(t, "GET", "/v1/model", "", "")
			for _, w := range []string{`"slots":[{"name":"amount","pattern":"^[0-9]+$"}]`,
				`"policy_states":{"collecting_info":{"required_slots":[{"name":"order_id","pattern":"^[A-Z]{2}[0-9]{8}$"},{"name":"reason"}]`,
				`"rules":[{"from":"confirming","event":"confirmed","to":"refund","when":[{"slot":"amount","present":true}]}]`} {
				if !strings.Contains(model, w) {
					t.Errorf("/v1/model lacks %s: %s", w, model)
				}
			}
			_, _, info := ts.do(t, "GET", "/v1/sessions/s1", "", "")
			if want := `"steps":7,`; !strings.Contains(info, want) { // 12 requests, 5 refused
				t.Errorf("refused steps changed the session: %s", info)
			}
			if want := `"slots":{"amount":12,"order_id":"AB12345678","reason":"too small"}`; !strings.Contains(info, want) {
				t.Errorf("session %s lacks %s", info, want)
			}
			if err := ts.srv.Close(); err != nil {
				t.Fatal(err)
			}
			log := ts.log.String()
			for _, w := range []string{
				`"verdict":{"allowed":false,"reason":"missing_slot","state":"collect","missing_slots":["order_id","reason"]}}`,
				`"verdict":{"allowed":false,"reason":"condition_failed","state":"confirm","condition":"transitions[0].when[0]: slot \"amount\" is present"}}`,
			} {
				if !strings.Contains(log, w) {
					t.Errorf("log lacks %s:\n%s", w, log)
				}
			}
			withValues := []string{
				`"slots":{"order_id":{"valid":false,"value":"A1"},"reason":{"valid":true,"value":"broken"}}`,
				`"slots":{"amount":{"valid":true,"value":12}}`,
			}
			names := []string{
				`"slots":{"order_id":{"valid":false},"reason":{"valid":true}}`,
				`"slots":{"amount":{"valid":true}}`,
			}
			want, unwanted := names, withValues
			if values {
				want, unwanted = withValues, names
			}
			for _, w := range want {
				if !strings.Contains(log, w) {
					t.Errorf("log lacks %s:\n%s", w, log)
				}
			}
			for _, w := range unwanted {
				if strings.Contains(log, w) {
					t.Errorf("log has %s:\n%s", w, log)
				}
			}
			if !values && (strings.Contains(log, "AB12345678") || strings.Contains(log, "too small")) {
				t.Errorf("log has slot values without --log-slot-values:\n%s", log)
			}
		})
	}
}

func TestServeGeneralized(t *testing.T) {
	for _, tt := range []struct {
		policy, want, metric string
	}{
		{`{}`, `"allowed":true,"reason":"","state":"refund"`, `fsmine_guard_generalized_steps_total{allowed="true"} 1`},
		{`{"generalized":"deny"}`, `"allowed":false,"reason":"generalized_transition","state":"collect"`, `fsmine_guard_generalized_steps_total{allowed="false"} 1`},
	} {
		ts := newSlotsServer(t, tt.policy, false)
		ts.do(t, "POST", "/v1/sessions/g/steps", `{"next":"greet"}`, "")
		_, _, body := ts.do(t, "POST", "/v1/sessions/g/steps", `{"event":"ok","next":"collecting_info"}`, "")
		offered := strings.Contains(body, `{"event":"ok","to":"refund","label":"refund","prob":0,"rare":false,"generalized":true}`)
		if offered != (tt.policy == `{}`) {
			t.Errorf("%s: generalised move offered = %v: %s", tt.policy, offered, body)
		}
		_, _, body = ts.do(t, "POST", "/v1/sessions/g/steps", `{"event":"ok","next":"refund"}`, "")
		if !strings.Contains(body, tt.want) || !strings.Contains(body, `"generalized":true`) {
			t.Errorf("%s: answer %s, want %s and generalized", tt.policy, body, tt.want)
		}
		_, _, model := ts.do(t, "GET", "/v1/model", "", "")
		if want := `"generalized":"` + map[bool]string{true: "allow", false: "deny"}[tt.policy == `{}`] + `"`; !strings.Contains(model, want) {
			t.Errorf("%s: /v1/model lacks %s: %s", tt.policy, want, model)
		}
		_, _, metrics := ts.do(t, "GET", "/metrics", "", "")
		if !strings.Contains(metrics, tt.metric) {
			t.Errorf("%s: metrics lack %s", tt.policy, tt.metric)
		}
		if err := ts.srv.Close(); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(ts.log.String(), `"node":"refund","event":"","ts":`) || !strings.Contains(ts.log.String(), `"generalized":true}}`) {
			t.Errorf("%s: log does not mark the generalised step:\n%s", tt.policy, ts.log.String())
		}
	}
}

// TestLogMsgInline: the decision log holds a logMsg per live session in a
// map, which keeps values of at most 128 bytes inline; a larger logMsg
// costs every step an allocation (it did once, when slots came).
func TestLogMsgInline(t *testing.T) {
	if n := unsafe.Sizeof(logMsg{}); n > 128 {
		t.Errorf("logMsg is %d bytes, want at most 128: move what plain steps do not need behind logExtra", n)
	}
}
