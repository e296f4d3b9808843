package render

import (
	"bytes"
	"encoding/xml"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestSCXMLGolden(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			checkGolden(t, name+".scxml.golden", render(t, SCXML, loadFixture(t, name), Options{}))
		})
	}
}

type scxmlDoc struct {
	XMLName xml.Name     `xml:"http://www.w3.org/2005/07/scxml scxml"`
	Version string       `xml:"version,attr"`
	Initial string       `xml:"initial,attr"`
	States  []scxmlState `xml:"http://www.w3.org/2005/07/scxml state"`
	Finals  []scxmlState `xml:"http://www.w3.org/2005/07/scxml final"`
}

// scxmlState and scxmlTransition keep every attribute: encoding/xml would
// match fsmine:id to a field tagged "id,attr".
type scxmlState struct {
	Attrs       []xml.Attr        `xml:",any,attr"`
	Transitions []scxmlTransition `xml:"http://www.w3.org/2005/07/scxml transition"`
}

type scxmlTransition struct {
	Attrs []xml.Attr `xml:",any,attr"`
}

// attr returns the value of the attribute space:local, or "".
func attr(attrs []xml.Attr, space, local string) string {
	for _, a := range attrs {
		if a.Name.Space == space && a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// decodeXMLName undoes xmlName.
func decodeXMLName(t *testing.T, s string) string {
	t.Helper()
	var b strings.Builder
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], "_x") {
			end := strings.IndexByte(s[i+2:], '_')
			if end != 4 && end != 8 {
				t.Fatalf("bad escape in %q at %d", s, i)
			}
			r, err := strconv.ParseUint(s[i+2:i+2+end], 16, 32)
			if err != nil {
				t.Fatalf("bad escape in %q: %v", s, err)
			}
			b.WriteRune(rune(r))
			i += 3 + end
			continue
		}
		c := s[i]
		if !(c == '_' || c == '-' || c == '.' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			t.Errorf("name %q holds %q", s, c)
		}
		b.WriteByte(c)
		i++
	}
	return b.String()
}

func TestSCXMLHoldsEveryStateAndTransition(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			m := loadFixture(t, name)
			out := render(t, SCXML, m, Options{})
			// Well-formed: the whole document decodes token by token.
			dec := xml.NewDecoder(bytes.NewReader(out))
			for {
				_, err := dec.Token()
				if err != nil {
					if err.Error() != "EOF" {
						t.Fatalf("not well-formed XML: %v", err)
					}
					break
				}
			}
			var doc scxmlDoc
			if err := xml.Unmarshal(out, &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Version != "1.0" || doc.Initial != "__start__" {
				t.Errorf("version %q initial %q", doc.Version, doc.Initial)
			}
			if len(doc.Finals) != 1 || attr(doc.Finals[0].Attrs, "", "id") != "__end__" {
				t.Errorf("finals %+v, want one __end__", doc.Finals)
			}
			var gotStates, wantStates, got, want []string
			for _, s := range append(doc.States, doc.Finals...) {
				rawID := attr(s.Attrs, "", "id")
				id := decodeXMLName(t, rawID)
				if rawID == "" || strings.ContainsAny(rawID[:1], "0123456789-.") {
					t.Errorf("id %q is not an XML name", rawID)
				}
				if orig := attr(s.Attrs, FsmineNamespace, "id"); orig != "" && orig != shown(id) && orig != id {
					t.Errorf("fsmine:id %q, want %q", orig, id)
				}
				gotStates = append(gotStates, id)
				for _, tr := range s.Transitions {
					event, label, ok := strings.Cut(attr(tr.Attrs, "", "event"), ".")
					if !ok { // out of __start__: the label alone
						event, label = "", event
					}
					target := decodeXMLName(t, attr(tr.Attrs, "", "target"))
					count := attr(tr.Attrs, FsmineNamespace, "count")
					got = append(got, strings.Join([]string{id, decodeXMLName(t, event), decodeXMLName(t, label), target, count}, " | "))
				}
			}
			for _, s := range m.States {
				wantStates = append(wantStates, s.ID)
			}
			for _, tr := range m.Transitions {
				want = append(want, strings.Join([]string{tr.From, tr.Event, m.State(tr.To).Label, tr.To, strconv.Itoa(tr.Count)}, " | "))
			}
			for _, l := range [][]string{gotStates, wantStates, got, want} {
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

func TestXMLName(t *testing.T) {
	tests := []struct {
		in   string
		id   bool
		want string
	}{
		{"__start__", true, "__start__"},
		{"a b", true, "a_x0020_b"},
		{"x.y", false, "x_x002E_y"},
		{"tool_x", false, "tool_x005F_x"},
		{"123", true, "_x0031_23"},
		{"123", false, "123"},
		{"-a", true, "_x002D_a"},
		{"二", true, "_x4E8C_"},
		{"😀", true, "_x0001F600_"},
		{"", true, ""},
	}
	for _, tt := range tests {
		if got := xmlName(tt.in, tt.id); got != tt.want {
			t.Errorf("xmlName(%q, %v) = %q, want %q", tt.in, tt.id, got, tt.want)
		}
	}
}
