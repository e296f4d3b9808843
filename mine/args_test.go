package mine

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton"
)

// argLog writes records of n sessions: a user message naming an account,
// a read whose answer names a recipient, then a send to that recipient from
// one of two stable senders; session hijack (when >= 0) sends to a
// recipient from nowhere instead.
func argLog(n, hijack int) []byte {
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		s := fmt.Sprintf("s%02d", i)
		to := fmt.Sprintf("friend%d@example.com", i)
		if i == hijack {
			to = "eve@evil.example"
		}
		fmt.Fprintf(&b, `{"session_id":%q,"step":0,"node":"user_msg","event":"user","attrs":{"seen":"please pay account AC-%d"}}`+"\n", s, i)
		fmt.Fprintf(&b, `{"session_id":%q,"step":1,"node":"read_inbox","event":"ok","attrs":{"args":{"folder":"inbox"},"seen":["{\"from\": \"friend%d@example.com\"}"]}}`+"\n", s, i)
		fmt.Fprintf(&b, `{"session_id":%q,"step":2,"node":"send","event":"ok","attrs":{"args":{"to":%q,"from":"desk%d","account":"AC-%d","n":%d,"urgent":true}}}`+"\n", s, to, i%2, i, i)
	}
	return b.Bytes()
}

func argInput(data []byte) []Input {
	return []Input{{Name: "args.jsonl", Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }}}
}

func TestLearnArgs(t *testing.T) {
	sessions, err := ReadArgSessions(argInput(argLog(24, -1)), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(sessions) != 24 || len(sessions[0].Steps) != 3 {
		t.Fatalf("read %d sessions, the first of %d steps; want 24 of 3", len(sessions), len(sessions[0].Steps))
	}
	rules := LearnArgs(sessions, ArgOptions{})
	var got []string
	for _, r := range rules {
		line := fmt.Sprintf("%s.%s %s %d/%d %d", r.Tool, r.Arg, r.Kind, r.Steps, r.Sessions, len(r.Values))
		if r.From != nil {
			line += fmt.Sprint(" ", r.From)
		}
		got = append(got, line)
	}
	want := []string{
		"read_inbox.folder unseen_value 24/24 1",
		"send.account value_without_source 24/24 0 [user_msg]",
		"send.from unseen_value 24/24 2",
		"send.to value_without_source 24/24 0 [read_inbox]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rules:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, r := range rules {
		for _, v := range r.Values {
			if strings.Contains(v, "desk") || strings.Contains(v, "inbox") {
				t.Errorf("rule %s.%s keeps a value, %q", r.Tool, r.Arg, v)
			}
		}
	}
	// Fewer than twice MinSessions: no From.
	for _, r := range LearnArgs(sessions[:19], ArgOptions{}) {
		if r.From != nil {
			t.Errorf("19 sessions give %s.%s from %v", r.Tool, r.Arg, r.From)
		}
	}
	// Too few sessions: no rule.
	if rs := LearnArgs(sessions[:9], ArgOptions{}); len(rs) != 0 {
		t.Errorf("9 sessions give %d rules, want none under %d", len(rs), DefaultArgMinSessions)
	}
	// A value seen in one session only says new values keep coming.
	for i, a := range sessions[0].Steps[2].Args {
		if a.Name == "from" {
			sessions[0].Steps[2].Args[i].Value = "desk7"
		}
	}
	for _, r := range LearnArgs(sessions, ArgOptions{}) {
		if r.Arg == "from" {
			t.Errorf("a value seen once still gives %+v", r)
		}
	}
}

// TestLearnArgsTaskValues: logs that run each task twice (tau2 retail's
// two models) give each customer's email in two sessions; that is no few,
// stable values, and gives no unseen_value rule (it did before a value had
// to stand for four sessions: 7 emails in 14 sessions).
func TestLearnArgsTaskValues(t *testing.T) {
	var sessions []ArgSession
	for i := 0; i < 14; i++ {
		sessions = append(sessions, ArgSession{ID: fmt.Sprint(i), Steps: []ArgStep{
			{Label: "find_user", Args: []automaton.Arg{{Name: "email", Value: fmt.Sprintf("user%d@example.com", i/2)}}}}})
	}
	for _, r := range LearnArgs(sessions, ArgOptions{}) {
		if r.Kind == automaton.KindUnseenValue {
			t.Errorf("7 emails of 14 sessions give %+v", r)
		}
	}
	// Two values in 14 sessions are few and stable.
	for i := range sessions {
		sessions[i].Steps[0].Args[0].Value = fmt.Sprint(i % 2)
	}
	if rs := LearnArgs(sessions, ArgOptions{}); len(rs) == 0 || rs[0].Kind != automaton.KindUnseenValue {
		t.Errorf("2 values of 14 sessions give %+v, want an unseen_value rule", rs)
	}
}

func TestCheckArgs(t *testing.T) {
	train, err := ReadArgSessions(argInput(argLog(12, -1)), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rules := LearnArgs(train, ArgOptions{})
	test, err := ReadArgSessions(argInput(argLog(5, 3)), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := CheckArgs(test, rules)
	if len(got) != 1 || got[0].Session != "s03" || got[0].Step != 2 || got[0].Kind != automaton.KindValueWithoutSource || got[0].Arg != "to" {
		t.Errorf("CheckArgs = %v, want s03 step 2: value_without_source send(to)", got)
	}
	if s := got[0].String(); strings.Contains(s, "evil") {
		t.Errorf("a finding names the value: %s", s)
	}
}

func TestReadArgSessionsBad(t *testing.T) {
	tests := []struct {
		name, line, want string
	}{
		{"seen a number", `{"session_id":"a","node":"x","attrs":{"seen":3}}`, "args.jsonl:1: attrs.seen: want a string or a list of strings"},
		{"seen a list of numbers", `{"session_id":"a","node":"x","attrs":{"seen":[1]}}`, "args.jsonl:1: attrs.seen: want a string or a list of strings"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadArgSessions(argInput([]byte(tt.line+"\n")), ReadOptions{})
			if err == nil || err.Error() != tt.want {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}

// TestFlattenArgsBounded: hostile arguments (deep, wide, huge, control
// characters) give a bounded list of values, cut to MaxArgValue.
func TestFlattenArgsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"deep":`)
	for i := 0; i < 100; i++ {
		b.WriteString(`{"a":`)
	}
	b.WriteString(`"x"`)
	for i := 0; i < 100; i++ {
		b.WriteString(`}`)
	}
	b.WriteString(`,"huge":"` + strings.Repeat("y", 1<<20) + `","ctl":"a\u0000\u001b[31m","wide":[`)
	for i := 0; i < 1000; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%d", i)
	}
	b.WriteString(`]}`)
	args, err := automaton.FlattenArgs([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(args) != automaton.MaxArgLeaves {
		t.Errorf("%d values, want %d", len(args), automaton.MaxArgLeaves)
	}
	for _, a := range args {
		if len(a.Value) > automaton.MaxArgValue {
			t.Errorf("%s: %d bytes, want at most %d", a.Name, len(a.Value), automaton.MaxArgValue)
		}
		if strings.HasPrefix(a.Name, "deep") {
			t.Errorf("%s: a value past depth %d", a.Name, automaton.MaxArgDepth)
		}
	}
	if args[0].Name != "ctl" || args[0].Value != "a\x00\x1b[31m" {
		t.Errorf("first value %+v, want ctl as given", args[0])
	}
}

// TestArgsDroppedText: a record the label rules drop (a user's turn, here)
// is no step of the map, but its text entered the session: the account a
// later call uses is sourced from it, and a rule says so. A call on a
// dropped record is not judged.
func TestArgsDroppedText(t *testing.T) {
	rules, err := ParseRules([]byte(`{"rules": [{"match": {"node": "^user_msg$"}, "drop": true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	opt := ReadOptions{Rules: rules}
	sessions, err := ReadArgSessions(argInput(argLog(24, -1)), opt)
	if err != nil {
		t.Fatal(err)
	}
	if st := sessions[0].Steps[0]; st.Label != "user_msg" || !st.dropped() || len(st.Seen) != 1 {
		t.Fatalf("first step %+v: want the dropped user_msg with its text", st)
	}
	var account *automaton.ArgRule
	learned := LearnArgs(sessions, ArgOptions{})
	for i, r := range learned {
		if r.Tool == "send" && r.Arg == "account" && r.Kind == automaton.KindValueWithoutSource {
			account = &learned[i]
		}
	}
	if account == nil || len(account.From) != 1 || account.From[0] != "user_msg" {
		t.Fatalf("rules %v: want send(account) value_without_source from user_msg", learned)
	}
	// The same log with a call on the dropped record that breaks every
	// rule: not judged, so nothing is found.
	data := strings.ReplaceAll(string(argLog(5, -1)), `"node":"user_msg","event":"user","attrs":{`, `"node":"user_msg","event":"user","attrs":{"args":{"to":"eve@evil.example"},`)
	test, err := ReadArgSessions(argInput([]byte(data)), opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(test[0].Steps[0].Args) != 0 {
		t.Errorf("a dropped record's call kept: %+v", test[0].Steps[0])
	}
	if got := CheckArgs(test, append(learned, automaton.ArgRule{Tool: "user_msg", Arg: "to", Kind: automaton.KindValueWithoutSource, Steps: 24, Sessions: 24})); len(got) != 0 {
		t.Errorf("CheckArgs = %v, want nothing", got)
	}
}

// TestArgBlocks: a session's records split by its visits, with the dropped
// records between visits apart and those inside a visit in it.
func TestArgBlocks(t *testing.T) {
	rules, err := ParseRules([]byte(`{"rules": [{"match": {"node": "^user_msg$"}, "drop": true}, {"match": {"node": "^lookup$"}, "state": "lookup", "fold": true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	data := `{"session_id":"a","step":0,"node":"user_msg","event":"user","attrs":{"seen":"u0"}}
{"session_id":"a","step":1,"node":"lookup","event":"ok","attrs":{"seen":"l1"}}
{"session_id":"a","step":2,"node":"user_msg","event":"user","attrs":{"seen":"u2"}}
{"session_id":"a","step":3,"node":"lookup","event":"ok","attrs":{"seen":"l3"}}
{"session_id":"a","step":4,"node":"user_msg","event":"user","attrs":{"seen":"u4"}}
{"session_id":"a","step":5,"node":"act","event":"ok","attrs":{"args":{"x":"l3"}}}
{"session_id":"a","step":6,"node":"user_msg","event":"user","attrs":{"seen":"u6"}}
`
	lg, args := readWithArgs(t, data, rules)
	blocks, err := lg.ArgBlocks(&lg.Sessions[0], args[0])
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range blocks {
		var names []string
		for _, st := range b {
			names = append(names, fmt.Sprintf("%s%d", st.Label, st.fileLine))
		}
		got = append(got, strings.Join(names, " "))
	}
	want := []string{"user_msg1", "lookup2 user_msg3 lookup4", "user_msg5", "act6", "user_msg7"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("blocks %q, want %q", got, want)
	}
	// Records of another session do not line up.
	other := args[0]
	other.Steps = other.Steps[:2]
	if _, err := lg.ArgBlocks(&lg.Sessions[0], other); err == nil || !strings.Contains(err.Error(), "no record") {
		t.Errorf("ArgBlocks of too few records: %v, want an error", err)
	}
}

// TestArgSessionsOrder: the records are ordered as Read orders them (by
// time when no record has a step, whatever the file's order; a dropped
// record without text still decides), sessions of dropped records alone are
// none of the log's, and a finding in a log without steps names the visit,
// as replay numbers its rows.
func TestArgSessionsOrder(t *testing.T) {
	rules, err := ParseRules([]byte(`{"rules": [{"match": {"node": "^user_msg$"}, "drop": true}, {"match": {"node": "^lookup$"}, "state": "lookup", "fold": true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	// Session a, by time: user (text), lookup, lookup (folded), send;
	// written in reverse. Session b: user turns alone. Session c: every
	// record has a step but a dropped one, so Read orders c by time.
	data := `{"session_id":"a","ts":"2026-01-01T00:00:04Z","node":"send","event":"ok","attrs":{"args":{"to":"bob@example.com"}}}
{"session_id":"a","ts":"2026-01-01T00:00:03Z","node":"lookup","event":"ok","attrs":{"seen":"x"}}
{"session_id":"a","ts":"2026-01-01T00:00:02Z","node":"lookup","event":"ok","attrs":{"seen":"y"}}
{"session_id":"a","ts":"2026-01-01T00:00:01Z","node":"user_msg","event":"user","attrs":{"seen":"send it to bob@example.com"}}
{"session_id":"b","ts":"2026-01-01T00:00:01Z","node":"user_msg","event":"user","attrs":{"seen":"hello"}}
{"session_id":"c","step":2,"ts":"2026-01-01T00:00:01Z","node":"lookup","event":"ok","attrs":{"seen":"z"}}
{"session_id":"c","ts":"2026-01-01T00:00:02Z","node":"user_msg","event":"user"}
{"session_id":"c","step":1,"ts":"2026-01-01T00:00:03Z","node":"send","event":"ok","attrs":{"args":{"to":"z"}}}
`
	lg, args := readWithArgs(t, data, rules)
	if len(args) != 2 || args[0].ID != "a" || args[1].ID != "c" {
		t.Fatalf("sessions %v: want a and c (b has dropped records alone)", args)
	}
	for i := range lg.Sessions {
		if _, err := lg.ArgBlocks(&lg.Sessions[i], args[i]); err != nil {
			t.Errorf("ArgBlocks: %v", err)
		}
	}
	var order []string
	for _, st := range args[0].Steps {
		order = append(order, fmt.Sprintf("%s%d", st.Label, st.fileLine))
	}
	if got := strings.Join(order, " "); got != "user_msg4 lookup3 lookup2 send1" {
		t.Errorf("session a in order %q", got)
	}
	if got := args[1].Steps[len(args[1].Steps)-1].Label; got != "send" {
		t.Errorf("session c ends with %q, want send (by time, as Read orders it)", got)
	}
	// The user's words are the source of a's recipient; a recipient
	// from nowhere breaks the rule at visit 1 (lookup is visit 0).
	rule := []automaton.ArgRule{{Tool: "send", Arg: "to", Kind: automaton.KindValueWithoutSource, Steps: 10, Sessions: 10}}
	if got := CheckArgs(args[:1], rule); len(got) != 0 {
		t.Errorf("CheckArgs on a = %v, want nothing", got)
	}
	bad := args[0]
	bad.Steps = slices.Clone(bad.Steps)
	bad.Steps[0].Seen = []string{"send it"}
	if got := CheckArgs([]ArgSession{bad}, rule); len(got) != 1 || got[0].Step != 1 {
		t.Errorf("CheckArgs = %v, want a finding at step 1 (the send, second visit)", got)
	}
}

// TestArgTextKept: of the text that entered a session, only the runs of
// tokens its calls' arguments have are held, each once: a long chat turn
// costs what its address costs, and the address is still its source.
func TestArgTextKept(t *testing.T) {
	long := strings.Repeat("lorem ipsum dolor sit amet ", 2000)
	data := `{"session_id":"a","step":0,"node":"user_msg","event":"user","attrs":{"seen":"` + long + `Send it to Bob@Example.com, please; bob@example.com."}}
{"session_id":"a","step":1,"node":"read","event":"ok","attrs":{"seen":["nothing here", "id: 7-x."]}}
{"session_id":"a","step":2,"node":"send","event":"ok","attrs":{"args":{"to":"bob@example.com","ref":"7-x"}}}
`
	sessions, err := ReadArgSessions(argInput([]byte(data)), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	steps := sessions[0].Steps
	if got := strings.Join(steps[0].Seen, "|"); got != "Bob@Example.com " {
		t.Errorf("the user's turn kept as %q", got)
	}
	if got := strings.Join(steps[1].Seen, "|"); got != "7-x. " {
		t.Errorf("the read's text kept as %q", got)
	}
	rule := []automaton.ArgRule{
		{Tool: "send", Arg: "to", Kind: automaton.KindValueWithoutSource, Steps: 10, Sessions: 10, From: []string{"user_msg"}},
		{Tool: "send", Arg: "ref", Kind: automaton.KindValueWithoutSource, Steps: 10, Sessions: 10, From: []string{"read"}},
	}
	if got := CheckArgs(sessions, rule); len(got) != 0 {
		t.Errorf("CheckArgs = %v, want nothing: both values have their sources", got)
	}
}

// TestArgVisitsAsRead: on random logs with dropped, folded and detour
// records, duplicates, and records ordered by step, by time or as written,
// every record's visit is the one Read forms (each visit's first record
// is where Read says it is) and ArgBlocks lines them up.
func TestArgVisitsAsRead(t *testing.T) {
	rules, err := ParseRules([]byte(`{"rules": [
		{"match": {"node": "^chat$"}, "drop": true},
		{"match": {"node": "^look$"}, "state": "look", "fold": true},
		{"match": {"node": "^lookd$"}, "state": "look", "fold": true, "detour": true},
		{"match": {"node": "^talk$"}, "state": "talk", "detour": true},
		{"match": {"node": "^talk2$"}, "state": "talk"},
		{"match": {"node": "^other$"}, "state": "other", "detour": true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	nodes := []string{"chat", "look", "look", "lookd", "talk", "talk", "talk2", "other", "act", "read"}
	for round := range 2000 {
		var b strings.Builder
		mode := round % 3 // 0: steps, 1: times, 2: as written
		for s := range 4 {
			n := 2 + rng.IntN(10)
			var lines []string
			for i := range n {
				node := nodes[rng.IntN(len(nodes))]
				key := ""
				switch mode {
				case 0:
					key = fmt.Sprintf(`"step":%d,`, rng.IntN(n)) // ties too
				case 1:
					key = fmt.Sprintf(`"ts":"2026-01-01T00:00:%02dZ",`, rng.IntN(n))
				}
				line := fmt.Sprintf(`{"session_id":"s%d",%s"node":%q,"event":"ok","attrs":{"seen":"t%d"}}`, s, key, node, i)
				lines = append(lines, line)
				if rng.IntN(8) == 0 {
					lines = append(lines, line) // an exact duplicate
				}
			}
			rng.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
			for _, l := range lines {
				b.WriteString(l + "\n")
			}
		}
		lg, args := readWithArgs(t, b.String(), rules)
		byID := map[string]ArgSession{}
		for _, a := range args {
			byID[a.ID] = a
		}
		for i := range lg.Sessions {
			s := &lg.Sessions[i]
			a, ok := byID[s.ID]
			if !ok {
				t.Fatalf("round %d: session %s has no records", round, s.ID)
			}
			if _, err := lg.ArgBlocks(s, a); err != nil {
				t.Fatalf("round %d: %v\n%s", round, err, b.String())
			}
			for k, v := range s.Visits {
				for _, st := range a.Steps {
					if st.fileLine == int(v.Line) && st.visit != k {
						t.Fatalf("round %d, session %s: the record at line %d starts visit %d, numbered %d\n%s", round, s.ID, v.Line, k, st.visit, b.String())
					}
				}
			}
			if last := a.Steps[len(a.Steps)-1].visit; last > len(s.Visits)-1 {
				t.Fatalf("round %d, session %s: visit %d of %d", round, s.ID, last, len(s.Visits))
			}
		}
	}
}

// TestArgTextWhole: a session whose text has more tokens than a watch keeps
// (automaton.MaxSeenTokens) keeps its text whole, so that check finds what
// the guard, which forgets tokens past that many, finds; and a record
// whose text is cut away still counts as having brought text under its
// label.
func TestArgTextWhole(t *testing.T) {
	var b strings.Builder
	var texts []string
	for r := range 3 {
		var words []string
		for i := range 6000 {
			words = append(words, fmt.Sprintf("w%d_%d", r, i))
		}
		texts = append(texts, strings.Join(words, " "))
	}
	texts = append(texts, "mail u1@x.example")
	for i, text := range texts {
		fmt.Fprintf(&b, `{"session_id":"a","step":%d,"node":"user_msg","event":"user","attrs":{"seen":%q}}`+"\n", i, text)
	}
	fmt.Fprintf(&b, `{"session_id":"a","step":4,"node":"send","event":"ok","attrs":{"args":{"to":"u1@x.example"}}}`+"\n")
	fmt.Fprintf(&b, `{"session_id":"b","step":0,"node":"note","event":"ok","attrs":{"seen":"nothing of use"}}`+"\n")
	fmt.Fprintf(&b, `{"session_id":"b","step":1,"node":"user_msg","event":"user","attrs":{"seen":"mail u2@x.example"}}`+"\n")
	fmt.Fprintf(&b, `{"session_id":"b","step":2,"node":"send","event":"ok","attrs":{"args":{"to":"u2@x.example"}}}`+"\n")
	sessions, err := ReadArgSessions(argInput([]byte(b.String())), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := sessions[0].Steps[0].Seen; len(got) != 1 || got[0] != texts[0] {
		t.Errorf("session a's first text cut (%d bytes of %d)", len(strings.Join(got, "")), len(texts[0]))
	}
	if got := sessions[1].Steps[0].Seen; len(got) != 1 || got[0] != "" {
		t.Errorf("session b's note kept as %q, want an empty text", got)
	}
	// What a guard's watch makes of the whole text.
	rule := []automaton.ArgRule{{Tool: "send", Arg: "to", Kind: automaton.KindValueWithoutSource, Steps: 10, Sessions: 10}}
	w := automaton.NewArgWatch()
	for _, text := range texts {
		w.See("user_msg", text)
	}
	guard := w.Call(automaton.NewArgRules(rule), "send", []automaton.Arg{{Name: "to", Value: "u1@x.example"}}) != nil
	found := len(CheckArgs(sessions[:1], rule)) > 0
	if !guard || found != guard {
		t.Errorf("check finds %v, the guard's watch %v: want both true (the address came past the watch's bound)", found, guard)
	}
}

// TestArgsKeyCase: the decoder reads "Args" as args; the tokens a call's
// value has are found so too, and its source text is kept for it.
func TestArgsKeyCase(t *testing.T) {
	data := `{"session_id":"a","step":0,"node":"user_msg","event":"user","attrs":{"seen":"mail u@x.example"}}
{"session_id":"a","step":1,"node":"send","event":"ok","attrs":{"Args":{"to":"u@x.example"},"seen":"sent"}}
`
	sessions, err := ReadArgSessions(argInput([]byte(data)), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rule := []automaton.ArgRule{{Tool: "send", Arg: "to", Kind: automaton.KindValueWithoutSource, Steps: 10, Sessions: 10}}
	if got := CheckArgs(sessions, rule); len(got) != 0 {
		t.Errorf("CheckArgs = %v, want nothing: the user named the address", got)
	}
}

// TestDuplicatesLongRun: a run of thousands of records of one time finds
// its exact duplicates as a short one does.
func TestDuplicatesLongRun(t *testing.T) {
	var b strings.Builder
	for i := range 3000 {
		line := fmt.Sprintf(`{"session_id":"a","ts":"2026-01-01T00:00:00Z","node":"n%d","event":"ok"}`, i%1000)
		b.WriteString(line + "\n")
	}
	lg, err := Read(argInput([]byte(b.String())), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(lg.Sessions[0].Visits); got != 1000 || lg.Files[0].Duplicates != 2000 {
		t.Errorf("%d visits, %d duplicates: want 1000 and 2000", got, lg.Files[0].Duplicates)
	}
	args, err := ReadArgSessions(argInput([]byte(strings.ReplaceAll(b.String(), `"ok"}`, `"ok","attrs":{"seen":"x"}}`))), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(args[0].Steps); got != 1000 {
		t.Errorf("%d argument records, want 1000", got)
	}
}

// TestArgRecordsFresh: a record without a time or step is read with none,
// not with the line before's (another session's), so duplicates are found
// as Read finds them and findings name Read's visits.
func TestArgRecordsFresh(t *testing.T) {
	data := `{"session_id":"t","ts":"2026-01-01T00:00:00Z","node":"user_msg","event":"user","attrs":{"seen":"mail a@x.example"}}
{"session_id":"z","step":5,"node":"user_msg","event":"user"}
{"session_id":"t","ts":"2026-01-01T00:00:00Z","node":"user_msg","event":"user","attrs":{"seen":"mail a@x.example"}}
{"session_id":"t","ts":"2026-01-01T00:00:01Z","node":"send","event":"ok","attrs":{"args":{"to":"b@x.example"}}}
`
	lg, args := readWithArgs(t, data, nil)
	if len(args[0].Steps) != len(lg.Sessions[0].Visits) {
		t.Errorf("%d argument records, %d visits: want as many", len(args[0].Steps), len(lg.Sessions[0].Visits))
	}
	rule := []automaton.ArgRule{{Tool: "send", Arg: "to", Kind: automaton.KindValueWithoutSource, Steps: 10, Sessions: 10}}
	if got := CheckArgs(args[:1], rule); len(got) != 1 || got[0].Step != 1 {
		t.Errorf("CheckArgs = %v, want a finding at step 1", got)
	}
}

// TestArgsKeySpelled: arguments under "Args", or an escaped name, are read
// as the decoder reads them, with or without text on the same record.
func TestArgsKeySpelled(t *testing.T) {
	for _, key := range []string{`"Args"`, `"ARGS"`, `"\u0061rgs"`, `"argſ"`, `"ARGſ"`} {
		data := `{"session_id":"a","step":0,"node":"send","event":"ok","attrs":{` + key + `:{"to":"u@x.example"}}}` + "\n"
		sessions, err := ReadArgSessions(argInput([]byte(data)), ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := sessions[0].Steps[0].Args; len(got) != 1 || got[0].Value != "u@x.example" {
			t.Errorf("%s: args %v, want to=u@x.example", key, got)
		}
	}
	for line, want := range map[string]bool{
		`{"a":"argsx"}`:   false,
		`{"sEEn":1}`:      true,
		`{"ſeen":1}`:      true,
		`{"\u0073een":1}`: true,
		`{"t":"caf\u00e9 au lait, with more words"}`: false, // an escape elsewhere is no key
		`{"t":"\u00e9"}`:                    false,
		`{"out":"{\"order_id\": \"#W1\"}"}`: false, // JSON inside a string
	} {
		if got := mayHaveKey([]byte(line), "seen"); got != want {
			t.Errorf("mayHaveKey(%s, seen) = %v, want %v", line, got, want)
		}
	}
}

// readWithArgs reads data as Read and ReadArgSessions do, under rules.
func readWithArgs(t *testing.T, data string, rules *Rules) (*Log, []ArgSession) {
	t.Helper()
	in := argInput([]byte(data))
	opt := ReadOptions{Rules: rules}
	lg, err := Read(in, opt)
	if err != nil {
		t.Fatal(err)
	}
	args, err := ReadArgSessions(in, opt)
	if err != nil {
		t.Fatal(err)
	}
	return lg, args
}

// TestArgsDroppedNoText: a dropped record whose text is empty is not kept.
func TestArgsDroppedNoText(t *testing.T) {
	rules, err := ParseRules([]byte(`{"rules": [{"match": {"node": "^user_msg$"}, "drop": true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	data := `{"session_id":"a","step":0,"node":"user_msg","event":"user","attrs":{"seen":null}}
{"session_id":"a","step":1,"node":"user_msg","event":"user","attrs":{"seen":[]}}
{"session_id":"a","step":2,"node":"send","event":"ok","attrs":{"args":{"to":"x"}}}
`
	_, args := readWithArgs(t, data, rules)
	if len(args) != 1 || len(args[0].Steps) != 1 || args[0].Steps[0].Label != "send" {
		t.Errorf("argument records %+v: want the send alone", args)
	}
}
