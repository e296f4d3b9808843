package stages

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/internal/goldenfile"
	"github.com/fsmine/fsmine/mine"
)

func TestTokenize(t *testing.T) {
	tests := []struct {
		name string
		want []string
	}{
		{"get_order_details", []string{"get", "order", "details"}},
		{"W_Completeren aanvraag", []string{"w", "completeren", "aanvraag"}},
		{"ChatOpenAI", []string{"chat", "open", "ai"}},
		{"execute_tool:get_order", []string{"execute", "tool", "get", "order"}},
		{"A_PARTLYSUBMITTED", []string{"a", "partlysubmitted"}},
		{"lookupHTTPServer2", []string{"lookup", "http", "server2"}},
		{"__", nil},
		{"", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, tok := range tokenize(tt.name) {
				got = append(got, tok.text)
				if strings.ToLower(tt.name[tok.start:tok.end]) != tok.text {
					t.Errorf("token %q at [%d,%d) is %q in the name", tok.text, tok.start, tok.end, tt.name[tok.start:tok.end])
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("tokenize(%q) = %q, want %q", tt.name, got, tt.want)
			}
		})
	}
}

func TestAffinity(t *testing.T) {
	tests := []struct {
		a, b string
		want float64
	}{
		{"find_user_id_by_email", "find_user_id_by_name_zip", 4.0 / 6},
		{"get_order_details", "get_user_details", 2.0 / 3},
		{"modify_pending_order_items", "modify_pending_order_address", 3.0 / 4},
		{"return_delivered_order_items", "exchange_delivered_order_items", 3.0 / 4},
		{"cancel_pending_order", "modify_pending_order_items", 0},
		{"A_SUBMITTED", "A_DECLINED", 1.0 / 2},
		{"get_user", "get_user_details", 2.0 / 3},
		{"a_b", "a_b_b", 2.0 / 3}, // the shared end does not count words twice
		{"x", "x", 1},
		{"", "x", 0},
	}
	for _, tt := range tests {
		if got := affinity(tokenize(tt.a), tokenize(tt.b)); got != tt.want {
			t.Errorf("affinity(%q, %q) = %.3f, want %.3f", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestClassAndChat(t *testing.T) {
	tests := []struct {
		name  string
		class string
		chat  bool
	}{
		{"get_order_details", ClassRead, false},
		{"search_direct_flight", ClassRead, false},
		{"cancel_pending_order", ClassAct, false},
		{"book_reservation", ClassAct, false},
		{"execute_tool:get_order_details", ClassRead, false},
		{"think", ClassHelper, false},
		{"agent_msg", "", true},
		{"user_msg", "", true},
		{"ChatOpenAI", "", true},
		{"generation", "", true},
		{"send_message", ClassAct, false},           // a tool that sends is a step
		{"apartment_ask_custom_message", "", false}, // asks for a message: a step
		{"wizard_message", "", true},
		{"Take in charge ticket", "", false},
	}
	for _, tt := range tests {
		toks := tokenize(tt.name)
		if got := classOf(tt.name, toks); got != tt.class {
			t.Errorf("classOf(%q) = %q, want %q", tt.name, got, tt.class)
		}
		if got := isChatName(tt.name, toks); got != tt.chat {
			t.Errorf("isChatName(%q) = %v, want %v", tt.name, got, tt.chat)
		}
	}
}

// retailLog writes n sessions of a made-up retail support flow with text
// turns between the tool calls: identify the customer (two ways), look up
// the customer and their orders (repeated lookups), maybe a product, then
// one change of five kinds, sometimes a transfer to a human.
func retailLog(n int, seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, seed))
	var b strings.Builder
	for s := range n {
		step := 0
		add := func(node, event string) {
			fmt.Fprintf(&b, `{"session_id":"s%03d","step":%d,"node":%q,"event":%q}`+"\n", s, step, node, event)
			step++
		}
		add("user_msg", "user")
		add("agent_msg", "agent")
		if rng.IntN(4) == 0 {
			add("find_user_id_by_email", "ok")
		} else {
			add("find_user_id_by_name_zip", "ok")
		}
		add("get_user_details", "ok")
		for range 1 + rng.IntN(3) {
			add("get_order_details", "ok")
		}
		add("agent_msg", "agent")
		add("user_msg", "user")
		if rng.IntN(2) == 0 {
			add("get_product_details", "ok")
			add("agent_msg", "agent")
		}
		switch rng.IntN(5) {
		case 0:
			add("modify_pending_order_items", "ok")
		case 1:
			add("modify_pending_order_address", "ok")
		case 2:
			add("cancel_pending_order", "ok")
		case 3:
			add("return_delivered_order_items", "ok")
		case 4:
			add("exchange_delivered_order_items", "ok")
		}
		if rng.IntN(10) == 0 {
			add("transfer_to_human_agents", "ok")
		}
		add("agent_msg", "agent")
	}
	return b.String()
}

func readLog(t testing.TB, name, data string, rules *mine.Rules) *mine.Log {
	t.Helper()
	lg, err := mine.Read([]mine.Input{{Name: name, Open: func() (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(data)), nil
	}}}, mine.ReadOptions{Strict: true, Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	return lg
}

func suggest(t testing.TB, data string, opt Options) *Suggestion {
	t.Helper()
	s, err := Suggest(readLog(t, "log.jsonl", data, nil), opt)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func stageOf(s *Suggestion) map[string]string {
	out := map[string]string{}
	for _, st := range s.Stages {
		for _, n := range st.Nodes {
			out[n] = st.Name
		}
	}
	return out
}

// TestSuggestRetail checks what the suggestion makes of the made-up retail
// flow: text turns dropped, the name families folded, reads kept apart from
// changes, and rules that label the log as the suggestion says.
func TestSuggestRetail(t *testing.T) {
	log := retailLog(200, 1)
	s := suggest(t, log, Options{})
	if !slices.Equal(s.Chat, []string{"agent_msg", "user_msg"}) {
		t.Errorf("chat = %q, want agent_msg, user_msg", s.Chat)
	}
	if len(s.Rules) == 0 || !s.Rules[0].Drop || s.Rules[0].Match["node"] != "^(?:agent_msg|user_msg)$" {
		t.Errorf("first rule = %+v, want the text turns dropped", s.Rules[0])
	}
	if n := len(s.Stages); n < MinStages || n > MaxStages {
		t.Errorf("%d stages, want %d to %d", n, MinStages, MaxStages)
	}
	st := stageOf(s)
	same := [][]string{
		{"find_user_id_by_email", "find_user_id_by_name_zip"},
		{"modify_pending_order_items", "modify_pending_order_address"},
		{"return_delivered_order_items", "exchange_delivered_order_items"},
	}
	for _, group := range same {
		for _, n := range group[1:] {
			if st[n] != st[group[0]] {
				t.Errorf("%s is in stage %q, %s in %q: want one stage", n, st[n], group[0], st[group[0]])
			}
		}
	}
	apart := [][2]string{
		{"get_order_details", "cancel_pending_order"},
		{"find_user_id_by_email", "modify_pending_order_items"},
		{"get_product_details", "return_delivered_order_items"},
	}
	for _, p := range apart {
		if st[p[0]] == st[p[1]] {
			t.Errorf("%s and %s are both in stage %q: a lookup and a change", p[0], p[1], st[p[0]])
		}
	}
	for _, stage := range s.Stages {
		if stage.Why == "" {
			t.Errorf("stage %q has no reason", stage.Name)
		}
		if stage.Class == ClassAct && stage.Fold {
			t.Errorf("acting stage %q is folded", stage.Name)
		}
	}
	for _, r := range s.Rules {
		if r.Why == "" {
			t.Errorf("rule %q has no why", r.Name)
		}
	}
	// the rules load and give every record the stage the suggestion says
	rules, err := mine.ParseRules(s.JSON())
	if err != nil {
		t.Fatal(err)
	}
	labelled := readLog(t, "log.jsonl", log, rules)
	plain := readLog(t, "log.jsonl", log, nil)
	names := map[string]bool{}
	for _, stage := range s.Stages {
		names[stage.Name] = true
	}
	for i := range labelled.Sessions {
		for _, v := range labelled.Sessions[i].Visits {
			if !names[labelled.Name(v.Label)] {
				t.Fatalf("session %s has a visit of %q, no suggested stage", labelled.Sessions[i].ID, labelled.Name(v.Label))
			}
		}
	}
	if labelled.Dropped != 0 && labelled.Dropped < plain.Records/4 {
		t.Errorf("dropped %d of %d records: want the text turns dropped", labelled.Dropped, plain.Records)
	}
	m, err := mine.Build(labelled, mine.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if got := len(m.States) - 2; got != len(s.Stages) {
		t.Errorf("the model has %d states, the suggestion %d stages", got, len(s.Stages))
	}
}

// TestSuggestGolden compares the rules suggested for the made-up retail
// flow with testdata/retail.rules.json (refresh with -update and read the
// diff).
func TestSuggestGolden(t *testing.T) {
	got := suggest(t, retailLog(200, 1), Options{}).JSON()
	golden := filepath.Join("testdata", "retail.rules.json")
	if goldenfile.Update() {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("suggested rules differ from %s; run go test ./mine/stages -run Golden -update and read the diff", golden)
	}
}

// TestSuggestStages checks that a stage count asked for is met, down to
// one stage, and what happens when it cannot be.
func TestSuggestStages(t *testing.T) {
	log := retailLog(100, 2)
	nodes := suggest(t, log, Options{}).TaskNodes
	for _, want := range []int{1, 2, 5, 8, nodes} {
		t.Run(fmt.Sprint(want), func(t *testing.T) {
			s := suggest(t, log, Options{Stages: want})
			if len(s.Stages) != want {
				t.Errorf("%d stages, want %d", len(s.Stages), want)
			}
			if len(s.Notes) != 0 {
				t.Errorf("notes %q, want none", s.Notes)
			}
			if _, err := mine.ParseRules(s.JSON()); err != nil {
				t.Error(err)
			}
		})
	}
	s := suggest(t, log, Options{Stages: nodes + 3})
	if len(s.Stages) != nodes || len(s.Notes) != 1 || !strings.Contains(s.Notes[0], "distinct task nodes") {
		t.Errorf("%d stages asked for: got %d stages, notes %q; want %d and a note", nodes+3, len(s.Stages), s.Notes, nodes)
	}
}

// TestSuggestDeterministic: the same sessions in another order of lines
// give the same bytes.
func TestSuggestDeterministic(t *testing.T) {
	log := retailLog(150, 3)
	want := suggest(t, log, Options{}).JSON()
	lines := strings.SplitAfter(log, "\n")
	rng := rand.New(rand.NewPCG(9, 9))
	for range 3 {
		rng.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
		if got := suggest(t, strings.Join(lines, ""), Options{}).JSON(); !bytes.Equal(got, want) {
			t.Fatalf("shuffled input gives other rules:\n%s\nwant\n%s", got, want)
		}
	}
}

func TestSuggestErrors(t *testing.T) {
	tests := []struct {
		name, log string
		opt       Options
		want      error
		msg       string
	}{
		{"no sessions", "", Options{}, mine.ErrNoSessions, "no sessions"},
		{"one node", `{"session_id":"a","node":"x"}` + "\n" + `{"session_id":"b","node":"x"}` + "\n", Options{}, ErrOneNode,
			`one distinct node ("x"): there is nothing to group into stages`},
		{"negative stages", `{"session_id":"a","node":"x"}` + "\n" + `{"session_id":"a","node":"y"}` + "\n", Options{Stages: -1}, nil,
			"-1 stages asked for"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Suggest(readLog(t, "l.jsonl", tt.log, nil), tt.opt)
			if err == nil || tt.want != nil && !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("Suggest error = %v, want %v containing %q", err, tt.want, tt.msg)
			}
		})
	}
	rules, err := mine.ParseRules([]byte(`{"rules":[{"match":{"node":"x"},"state":"X"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	lg := readLog(t, "l.jsonl", `{"session_id":"a","node":"x"}`+"\n"+`{"session_id":"a","node":"y"}`+"\n", rules)
	if _, err := Suggest(lg, Options{}); err == nil || !strings.Contains(err.Error(), "read without") {
		t.Errorf("Suggest on a labelled log: error %v, want one saying to read it without rules", err)
	}
}

// TestSuggestHostileNames: node names with regular-expression syntax,
// dollars, quotes, spaces and non-ASCII text get rules that load and label
// each node as the suggestion says (Suggest checks that itself, and fails
// when they do not).
func TestSuggestHostileNames(t *testing.T) {
	names := []string{`get_(a|b)_details`, `get_$1_details`, `get_"x"_details`, `a.*b`, `^start$`,
		`modify_ü_ß`, `modify_ü_€`, `__end__`, `__start__x`, `back\slash`, `chat_msg`, `x{2}`}
	var b strings.Builder
	rng := rand.New(rand.NewPCG(4, 4))
	for s := range 60 {
		for i := range 8 {
			n := names[(s+i*rng.IntN(3))%len(names)]
			fmt.Fprintf(&b, "{\"session_id\":\"s%d\",\"step\":%d,\"node\":%q}\n", s, i, n)
		}
	}
	log := b.String()
	for _, want := range []int{0, 3} {
		s := suggest(t, log, Options{Stages: want})
		rules, err := mine.ParseRules(s.JSON())
		if err != nil {
			t.Fatalf("stages %d: %v\n%s", want, err, s.JSON())
		}
		st := stageOf(s)
		plain := readLog(t, "h.jsonl", log, nil)
		labelled := readLog(t, "h.jsonl", log, rules)
		for i := range plain.Sessions {
			var wantLabels, gotLabels []string
			for _, v := range plain.Sessions[i].Visits {
				if n := plain.Name(v.Label); st[n] != "" {
					wantLabels = append(wantLabels, st[n])
				}
			}
			for _, v := range labelled.Sessions[i].Visits {
				// a message turn made a detour stays where it does not return
				if n := labelled.Name(v.Label); !slices.Contains(s.Chat, n) {
					gotLabels = append(gotLabels, n)
				}
			}
			wantLabels = slices.Compact(wantLabels) // folds
			gotLabels = slices.Compact(gotLabels)
			if !slices.Equal(gotLabels, wantLabels) {
				t.Fatalf("stages %d, session %s: labelled %q, want %q\n%s", want, plain.Sessions[i].ID, gotLabels, wantLabels, s.JSON())
			}
		}
	}
}

// TestSuggestRealLogs suggests rules for each real log in ../shared/data
// (skipped when absent): they load without edits, build a model of
// MinStages to MaxStages states, and every session of the log is a path of
// that model.
func TestSuggestRealLogs(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "data", "jsonl")
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl*"))
	if len(files) == 0 {
		t.Skip("no ../shared/data/jsonl")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			in := []mine.Input{{Name: path, Open: func() (io.ReadCloser, error) { return os.Open(path) }}}
			lg, err := mine.Read(in, mine.ReadOptions{Strict: true})
			if err != nil {
				t.Fatal(err)
			}
			s, err := Suggest(lg, Options{})
			if err != nil {
				t.Fatal(err)
			}
			rules, err := mine.ParseRules(s.JSON())
			if err != nil {
				t.Fatal(err)
			}
			labelled, err := mine.Read(in, mine.ReadOptions{Strict: true, Rules: rules})
			if err != nil {
				t.Fatal(err)
			}
			m, err := mine.Build(labelled, mine.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			labels := map[string]bool{}
			for _, st := range m.States[1 : len(m.States)-1] {
				labels[st.Label] = true
			}
			if len(labels) < MinStages || len(labels) > MaxStages || len(labels) != len(s.Stages) {
				t.Errorf("the model has %d labels, the suggestion %d stages: want the same, %d to %d", len(labels), len(s.Stages), MinStages, MaxStages)
			}
			for i := range labelled.Sessions {
				if !m.Accepts(labelled.Moves(&labelled.Sessions[i])) {
					t.Fatalf("session %s is not a path of the model", labelled.Sessions[i].ID)
				}
			}
		})
	}
}

// TestSuggestChatDetour: message turns that come back to the stage they
// interrupted are a detour; those that lead from one stage to the next are
// dropped.
func TestSuggestChatDetour(t *testing.T) {
	var b strings.Builder
	for s := range 20 {
		for i, n := range []string{"user_msg", "find_customer", "get_order", "chat_turn", "get_order", "user_msg",
			"cancel_order", "user_msg", "close_ticket", "write_note", "send_invoice"} {
			fmt.Fprintf(&b, `{"session_id":"s%d","step":%d,"node":%q}`+"\n", s, i, n)
		}
	}
	s := suggest(t, b.String(), Options{})
	detour, drop := detoursAndDrops(s)
	if !slices.Equal(detour, []string{"chat_turn"}) || !slices.Equal(drop, []string{"^user_msg$"}) {
		t.Errorf("detours %q, dropped %q; want chat_turn a detour and user_msg dropped\n%s", detour, drop, s.JSON())
	}
}

// TestSuggestDetourShares: a message turn 70% of whose runs come back is
// dropped (its other runs would stay in the flow as a hub), a helper step
// 70% of whose runs come back is a detour (else it would be a stage of its
// own in the flow).
func TestSuggestDetourShares(t *testing.T) {
	var b strings.Builder
	for s := range 20 {
		nodes := []string{"find_customer", "verify_identity", "get_order", "chat_turn", "get_order", "think", "get_order",
			"get_product", "check_stock", "cancel_order", "send_receipt", "close_ticket"}
		if s%10 >= 7 { // 3 in 10 leave the stage they interrupted
			nodes = []string{"find_customer", "verify_identity", "get_order", "chat_turn", "get_product", "check_stock", "think",
				"cancel_order", "send_receipt", "close_ticket"}
		}
		for i, n := range nodes {
			fmt.Fprintf(&b, `{"session_id":"s%d","step":%d,"node":%q}`+"\n", s, i, n)
		}
	}
	s := suggest(t, b.String(), Options{})
	detour, drop := detoursAndDrops(s)
	for _, st := range s.Stages {
		if st.Detour {
			detour = append(detour, st.Name)
		}
	}
	if !slices.Contains(detour, "think") || !slices.Equal(drop, []string{"^chat_turn$"}) || slices.Contains(detour, "chat_turn") {
		t.Errorf("detours %q, dropped %q; want think a detour and chat_turn dropped\n%s", detour, drop, s.JSON())
	}
}

// BenchmarkSuggest measures Suggest alone (the log is read once, outside
// the loop) on the made-up retail flow.
func BenchmarkSuggest(b *testing.B) {
	for _, n := range []int{200, 2000} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			lg := readLog(b, "log.jsonl", retailLog(n, 1), nil)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Suggest(lg, Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "sessions/s")
		})
	}
}

// TestSuggestShortFamily: a family pattern must take in every name of the
// family. get_0_details and get_details share get_ and _details, and
// ^get_.*_details$ does not match get_details: with --stages 1 the rule
// left get_details out and Suggest failed with an internal error.
func TestSuggestShortFamily(t *testing.T) {
	var b strings.Builder
	for s := range 3 {
		for i, n := range []string{"get_0_details", "get_details", "00"} {
			fmt.Fprintf(&b, "{\"session_id\":\"s%d\",\"step\":%d,\"node\":%q}\n", s, i, n)
		}
	}
	for _, want := range []int{0, 1, 2} {
		s, err := Suggest(readLog(t, "l.jsonl", b.String(), nil), Options{Stages: want})
		if err != nil {
			t.Fatalf("stages %d: %v", want, err)
		}
		st := stageOf(s)
		if want == 1 && (st["get_details"] != st["get_0_details"] || st["00"] != st["get_details"]) {
			t.Errorf("stages 1: %v, want one stage", st)
		}
	}
}

// detoursAndDrops returns the names of a suggestion's detour rules and the
// node patterns of its drop rules.
func detoursAndDrops(s *Suggestion) (detour, drop []string) {
	for _, r := range s.Rules {
		switch {
		case r.Detour:
			detour = append(detour, r.Name)
		case r.Drop:
			drop = append(drop, r.Match["node"])
		}
	}
	return detour, drop
}
