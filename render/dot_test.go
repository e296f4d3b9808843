package render

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton"
)

func TestDOTGolden(t *testing.T) {
	for _, tt := range goldenCases {
		t.Run(tt.name, func(t *testing.T) {
			got := render(t, DOT, loadFixture(t, tt.model), tt.opt)
			checkGolden(t, tt.name+".dot.golden", got)
		})
	}
}

// dotStatement matches a node or an edge statement of the DOT that
// emicklei/dot writes: n3[attrs]; or n1->n3[attrs];
var dotStatement = regexp.MustCompile(`^\s*(n\d+)(?:->(n\d+))?\[(.*)\];$`)

// parsedDOT is what a DOT text draws: node names to their attributes and
// edges as from, to and attributes.
type parsedDOT struct {
	nodes map[string]map[string]string
	edges []parsedEdge
	text  string
}

type parsedEdge struct {
	from, to string
	attrs    map[string]string
}

func parseDOT(t *testing.T, text string) parsedDOT {
	t.Helper()
	p := parsedDOT{nodes: make(map[string]map[string]string), text: text}
	for _, line := range strings.Split(text, "\n") {
		sm := dotStatement.FindStringSubmatch(line)
		if sm == nil {
			continue
		}
		attrs, err := parseDOTAttrs(sm[3])
		if err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if sm[2] == "" {
			p.nodes[sm[1]] = attrs
		} else {
			p.edges = append(p.edges, parsedEdge{sm[1], sm[2], attrs})
		}
	}
	return p
}

// parseDOTAttrs reads key="value",key="value" and undoes the \" and \\
// escapes of DOT strings.
func parseDOTAttrs(s string) (map[string]string, error) {
	attrs := make(map[string]string)
	for len(s) > 0 {
		eq := strings.Index(s, "=")
		if eq < 0 || len(s) < eq+2 || s[eq+1] != '"' {
			return nil, fmt.Errorf("want key=\"value\" at %q", s)
		}
		key := s[:eq]
		var val strings.Builder
		i := eq + 2
		for ; i < len(s) && s[i] != '"'; i++ {
			if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
				i++
			}
			val.WriteByte(s[i])
		}
		if i >= len(s) {
			return nil, fmt.Errorf("unterminated value in %q", s)
		}
		attrs[key] = val.String()
		s = strings.TrimPrefix(s[i+1:], ",")
	}
	return attrs, nil
}

type edgeKey struct{ from, caption, to string }

func TestDOTDrawsEveryStateAndTransition(t *testing.T) {
	for _, name := range fixtures {
		for _, hide := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/hide-rare=%v", name, hide), func(t *testing.T) {
				m := loadFixture(t, name)
				p := parseDOT(t, string(render(t, DOT, m, Options{HideRare: hide, ClusterSep: "_"})))

				idOf := make(map[string]string) // node name -> id as shown
				for n, attrs := range p.nodes {
					idOf[n] = attrs["tooltip"]
				}
				var got, want []edgeKey
				for _, e := range p.edges {
					got = append(got, edgeKey{idOf[e.from], e.attrs["label"], idOf[e.to]})
				}
				drawn := map[string]bool{automaton.StartID: true, automaton.EndID: true}
				for _, tr := range m.Transitions {
					if hide && tr.Rare {
						continue
					}
					want = append(want, edgeKey{shown(tr.From), shown(edgeCaption(&tr)), shown(tr.To)})
					drawn[tr.From], drawn[tr.To] = true, true
				}
				cmp := func(a, b edgeKey) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) }
				slices.SortFunc(got, cmp)
				slices.SortFunc(want, cmp)
				if !slices.Equal(got, want) {
					t.Errorf("edges drawn:\n%q\nwant:\n%q", got, want)
				}

				var gotStates, wantStates []string
				for _, id := range idOf {
					gotStates = append(gotStates, id)
				}
				labels := make(map[string]string) // id as shown -> node label
				for n, attrs := range p.nodes {
					labels[idOf[n]] = attrs["label"]
				}
				for _, s := range m.States {
					if !drawn[s.ID] {
						continue
					}
					wantStates = append(wantStates, shown(s.ID))
					if s.ID == automaton.StartID || s.ID == automaton.EndID {
						continue
					}
					want := shown(s.ID)
					if s.Label != s.ID {
						want += `\nlabel: ` + shown(s.Label)
					}
					want += fmt.Sprintf(`\n%d visit`, s.Visits)
					if s.Visits != 1 {
						want += "s"
					}
					if got := labels[shown(s.ID)]; got != want {
						t.Errorf("state %q: label %q, want %q", s.ID, got, want)
					}
				}
				slices.Sort(gotStates)
				slices.Sort(wantStates)
				if !slices.Equal(gotStates, wantStates) {
					t.Errorf("states drawn: %q\nwant: %q", gotStates, wantStates)
				}
			})
		}
	}
}

func TestDOTStyles(t *testing.T) {
	m := loadFixture(t, "support")
	p := parseDOT(t, string(render(t, DOT, m, Options{})))
	idOf := make(map[string]string)
	for n, attrs := range p.nodes {
		idOf[n] = attrs["tooltip"]
	}
	edge := func(from, to string) map[string]string {
		for _, e := range p.edges {
			if idOf[e.from] == from && idOf[e.to] == to {
				return e.attrs
			}
		}
		t.Fatalf("no edge %s -> %s", from, to)
		return nil
	}
	tests := []struct {
		from, to    string
		style       string
		color       string
		penwidth    string
		description string
	}{
		{"__start__", "classify", "bold", "", "6.00", "trunk, most frequent (10 of 10)"},
		{"classify", "search", "bold", "", "5.60", "trunk"},
		{"classify", "escalate", "", "", "1.80", "plain"},
		{"search", "search", "", backEdgeColor, "2.20", "back edge"},
		{"search", "escalate", "dashed", rareColor, "1.40", "rare"},
		{"answer", "classify", "dashed", backEdgeColor, "1.40", "rare back edge"},
		{"answer", "__end__", "bold", "", "4.80", "trunk into __end__"},
	}
	for _, tt := range tests {
		a := edge(tt.from, tt.to)
		if a["style"] != tt.style || a["color"] != tt.color || a["penwidth"] != tt.penwidth {
			t.Errorf("%s -> %s (%s): style=%q color=%q penwidth=%q, want %q %q %q",
				tt.from, tt.to, tt.description, a["style"], a["color"], a["penwidth"], tt.style, tt.color, tt.penwidth)
		}
	}
	if got := edge("classify", "search")["label"]; got != "ok · 9 (81.8%)" {
		t.Errorf("caption = %q, want %q", got, "ok · 9 (81.8%)")
	}
	if got := edge("__start__", "classify")["label"]; got != "10 (100.0%)" {
		t.Errorf("caption out of __start__ = %q, want %q", got, "10 (100.0%)")
	}
	for n, attrs := range p.nodes {
		switch idOf[n] {
		case automaton.StartID:
			if attrs["shape"] != "point" {
				t.Errorf("__start__ shape = %q, want point", attrs["shape"])
			}
		case automaton.EndID:
			if attrs["shape"] != "doublecircle" {
				t.Errorf("__end__ shape = %q, want doublecircle", attrs["shape"])
			}
		case "classify":
			if want := `classify\n11 visits`; attrs["label"] != want {
				t.Errorf("classify label = %q, want %q", attrs["label"], want)
			}
		}
	}
}

func TestDOTClusters(t *testing.T) {
	m := loadFixture(t, "orders")
	out := string(render(t, DOT, m, Options{ClusterSep: "_"}))
	// Two clusters, "order" and "user", with three and two states;
	// "_hidden" starts with the separator and "help" lacks it.
	clusters := regexp.MustCompile(`(?m)^\s*subgraph cluster_s\d+ \{$`).FindAllString(out, -1)
	if len(clusters) != 2 {
		t.Fatalf("%d clusters, want 2:\n%s", len(clusters), out)
	}
	for _, want := range []string{`label="order"`, `label="user"`} {
		if !strings.Contains(out, want) {
			t.Errorf("no cluster %s", want)
		}
	}
	// A cluster's body is its lines up to its closing brace.
	body := out[strings.Index(out, "subgraph"):strings.Index(out, "\t}\n")]
	for _, id := range []string{"order_create", "order_pay", "order_ship"} {
		if !strings.Contains(body, `tooltip="`+id+`"`) {
			t.Errorf("%s not in the first cluster:\n%s", id, body)
		}
	}
	for _, id := range []string{"help", "_hidden", "user_login"} {
		if strings.Contains(body, `tooltip="`+id+`"`) {
			t.Errorf("%s in the order cluster", id)
		}
	}
}

func TestDOTString(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"plain", `"plain"`},
		{`say "hi"`, `"say \"hi\""`},
		{`a\b`, `"a\\b"`},
		{`\N \l`, `"\\N \\l"`},
		{"two\nlines", `"two\\nlines"`},
		{"tab\there", `"tab\\there"`},
		{"bell\a", `"bell\\x07"`}, // the hex form, which import decodes
		{"naïve 二", `"naïve 二"`},
		{"bad\xffbyte", "\"bad\uFFFDbyte\""},
		{"a&nbsp;b & c", `"a&amp;nbsp;b &amp; c"`},
		{"x\x1by", `"x\\x1by"`},
		{`x\x1by`, `"x\\x5cx1by"`}, // the text's own backslash, told from ESC's escape
		{`two\nlines`, `"two\\x5cnlines"`},
		{strings.Repeat("é", maxShownRunes), `"` + strings.Repeat("é", maxShownRunes-1) + `…"`},
		{strings.Repeat("é", maxShownRunes-1), `"` + strings.Repeat("é", maxShownRunes-1) + `"`},
		{strings.Repeat("ab\n", maxShownRunes), `"` + strings.Repeat(`ab\\n`, maxShownRunes) + `"`}, // a tooltip's lines, each cut alone
	}
	for _, tt := range tests {
		if got := string(dotString(tt.in)); got != tt.want {
			t.Errorf("dotString(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// TestDOTEdgeShares: an edge whose share rounds to 0.0% or 100.0% but is
// neither says so ("<0.1%", ">99.9%"), as the report and the diff do.
func TestDOTEdgeShares(t *testing.T) {
	m := loadFixture(t, "orders")
	m.Transitions[0].Prob, m.Transitions[1].Prob = 0.0004, 0.9996
	p := parseDOT(t, string(render(t, DOT, m, Options{ClusterSep: "_"})))
	var labels []string
	for _, e := range p.edges {
		labels = append(labels, e.attrs["label"])
	}
	all := strings.Join(labels, "\n")
	for _, want := range []string{fmt.Sprintf("%d (<0.1%%)", m.Transitions[0].Count), fmt.Sprintf("%d (>99.9%%)", m.Transitions[1].Count)} {
		if !strings.Contains(all, want) {
			t.Errorf("no edge label with %q in:\n%s", want, all)
		}
	}
}

// TestPictureLongName draws a state named by a megabyte: the picture shows
// the name's first runes (a box no screen holds made Graphviz's layout take
// seconds a megabyte), the tooltip likewise, in the summary and in full.
func TestPictureLongName(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	m := renamedState(loadFixture(t, "orders"), "order_pay", long)
	svg := render(t, SVG, m, Options{})
	if len(svg) > 200_000 {
		t.Errorf("SVG of %d bytes for a name of 1 MiB: the name is drawn whole", len(svg))
	}
	if !bytes.Contains(svg, []byte(strings.Repeat("x", maxShownRunes-1)+"…")) {
		t.Errorf("SVG does not show the name's first %d runes and an ellipsis", maxShownRunes-1)
	}
	d := render(t, DOT, m, Options{Detail: DetailFull})
	if len(d) > 200_000 {
		t.Errorf("full DOT of %d bytes for a name of 1 MiB: the name is drawn whole", len(d))
	}
}
