package render

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/internal/text"
)

// SCXMLNamespace is the namespace of W3C SCXML 1.0 documents, and
// FsmineNamespace that of the attributes SCXML carries the model's own
// names and counts in.
const (
	SCXMLNamespace  = "http://www.w3.org/2005/07/scxml"
	FsmineNamespace = "https://github.com/fsmine/fsmine"
)

// SCXML writes m as a W3C SCXML 1.0 document (datamodel "null"): one
// <state> per state, __start__ the initial state and __end__ a <final>, and
// one <transition> per transition of the model, most frequent first.
//
// Names. SCXML wants state ids to be XML names and event tokens to be
// runs of name characters. Both are written with ASCII letters, digits, "_"
// and "-" kept and every other character c as _xHHHH_, the hex code point
// of c (_xHHHHHHHH_ above U+FFFF); "_" is written _x005F_ when an "x"
// follows it, and a state id's leading digit or "-" is escaped too. This is
// the XmlConvert.EncodeName convention: one to one, and decodable.
//
// Events. A state, an event and the label of the next state pick a
// transition (automaton.Model.Next), and several transitions can leave a
// state on one event. Each transition's event descriptor is therefore
// "<event>.<label>", the encoded event and the encoded label of the state it
// enters, so that a driver sends one event per move and SCXML's prefix
// matching lets a transition on "ok" catch every "ok.<label>". Out of
// __start__, whose event is empty, the descriptor is "<label>".
//
// The original ids, labels, events, visits, counts and probabilities are
// kept in attributes of FsmineNamespace (fsmine:id, fsmine:label,
// fsmine:event, fsmine:visits, fsmine:sessions, fsmine:count,
// fsmine:prob), which SCXML processors ignore; a state's repeat cap
// (State.MaxRun) is fsmine:max_run, a rare transition carries
// fsmine:rare="true", a back edge fsmine:back_edge="true", and a
// generalised transition, which no session took, carries
// fsmine:generalized with its kind. The model's constraints, loops (with
// their caps and back edges) and argument rules are elements of FsmineNamespace at the
// top of the document (see scxmlExtras). That is all that the model's
// digest covers, so that fsmine import reads the document back to the
// model.
//
// With opt.Detail DetailSummary the states of each stage of several states
// (see Stages) are children of a compound <state id="stage.N"
// fsmine:stage="name">, N counting stages from 1; every transition stays
// on the state it leaves, so the machine behaves as the flat one does.
// Other options are not used: a machine keeps every transition.
func SCXML(w io.Writer, m *automaton.Model, opt Options) error {
	m, err := sorted(m)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	b.WriteString(xml.Header)
	fmt.Fprintf(&b, "<!-- fsmine model version %d%s. Names are encoded as _xHHHH_ and events are\n", m.Version, digestNote(m, xmlComment))
	b.WriteString("     <event>.<next label>: see the documentation of fsmine's render.SCXML. -->\n")
	fmt.Fprintf(&b, "<scxml xmlns=\"%s\" xmlns:fsmine=\"%s\" version=\"1.0\" datamodel=\"null\" initial=\"%s\">\n",
		SCXMLNamespace, FsmineNamespace, scxmlID(automaton.StartID))
	scxmlExtras(&b, m)
	writeState := func(s *automaton.State, indent string) {
		elem := "state"
		if s.ID == automaton.EndID {
			elem = "final"
		}
		fmt.Fprintf(&b, "%s<%s id=%s", indent, elem, xmlAttr(scxmlID(s.ID)))
		if scxmlID(s.ID) != s.ID {
			fmt.Fprintf(&b, " fsmine:id=%s", xmlAttr(s.ID))
		}
		if s.Label != s.ID {
			fmt.Fprintf(&b, " fsmine:label=%s", xmlAttr(s.Label))
		}
		fmt.Fprintf(&b, " fsmine:visits=\"%d\" fsmine:sessions=\"%d\"", s.Visits, s.Sessions)
		if s.MaxRun > 0 {
			fmt.Fprintf(&b, " fsmine:max_run=\"%d\"", s.MaxRun)
		}
		out := m.Out(s.ID)
		if len(out) == 0 {
			b.WriteString("/>\n")
			return
		}
		b.WriteString(">\n")
		for _, t := range out {
			fmt.Fprintf(&b, "%s  <transition event=%s target=%s fsmine:event=%s fsmine:count=\"%d\" fsmine:prob=\"%s\"%s/>\n",
				indent, xmlAttr(scxmlEvent(m, t)), xmlAttr(scxmlID(t.To)), xmlAttr(t.Event), t.Count, formatFloat(t.Prob), scxmlGeneralized(t))
		}
		fmt.Fprintf(&b, "%s</%s>\n", indent, elem)
	}
	if opt.Detail != DetailSummary {
		for i := range m.States {
			writeState(&m.States[i], "  ")
		}
	} else {
		writeState(m.State(automaton.StartID), "  ")
		for i, st := range stagesOf(m) {
			if len(st.States) == 1 {
				writeState(m.State(st.States[0]), "  ")
				continue
			}
			// A stage id has a ".", which scxmlID never writes, so it
			// cannot be a state's.
			fmt.Fprintf(&b, "  <state id=\"stage.%d\" fsmine:stage=%s>\n", i+1, xmlAttr(st.Name))
			for _, id := range st.States {
				writeState(m.State(id), "    ")
			}
			b.WriteString("  </state>\n")
		}
		writeState(m.State(automaton.EndID), "  ")
	}
	b.WriteString("</scxml>\n")
	_, err = w.Write(b.Bytes())
	return err
}

// scxmlExtras writes the model's constraints, loops and argument rules as
// elements of FsmineNamespace, which SCXML processors ignore: one
// <fsmine:constraint kind a b support confidence/> per constraint (b only
// when the kind has one; a precedence's alternatives as <fsmine:or label/>
// inside it), then one <fsmine:loop max_iterations count
// sessions p95_iterations> per loop, holding a <fsmine:loop_state id/> per
// state of the loop and a <fsmine:back_edge from event to/> per back edge,
// with the model's ids and events, then one <fsmine:arg tool arg kind steps
// sessions> per argument rule, holding a <fsmine:value hash/> per value
// hash and a <fsmine:from label/> per source label.
func scxmlExtras(b *bytes.Buffer, m *automaton.Model) {
	for _, c := range m.Constraints {
		fmt.Fprintf(b, "  <fsmine:constraint kind=%s a=%s", xmlAttr(c.Kind), xmlAttr(c.A))
		if c.B != "" {
			fmt.Fprintf(b, " b=%s", xmlAttr(c.B))
		}
		fmt.Fprintf(b, " support=\"%d\" confidence=\"%s\"", c.Support, formatFloat(c.Confidence))
		if len(c.Or) == 0 {
			b.WriteString("/>\n")
			continue
		}
		b.WriteString(">\n")
		for _, o := range c.Or {
			fmt.Fprintf(b, "    <fsmine:or label=%s/>\n", xmlAttr(o))
		}
		b.WriteString("  </fsmine:constraint>\n")
	}
	for _, l := range m.Loops {
		fmt.Fprintf(b, "  <fsmine:loop max_iterations=\"%d\" count=\"%d\" sessions=\"%d\" p95_iterations=\"%d\">\n",
			l.MaxIterations, l.Count, l.Sessions, l.P95Iterations)
		for _, id := range l.States {
			fmt.Fprintf(b, "    <fsmine:loop_state id=%s/>\n", xmlAttr(id))
		}
		for _, be := range l.BackEdges {
			fmt.Fprintf(b, "    <fsmine:back_edge from=%s event=%s to=%s/>\n", xmlAttr(be.From), xmlAttr(be.Event), xmlAttr(be.To))
		}
		b.WriteString("  </fsmine:loop>\n")
	}
	for _, a := range m.Args {
		fmt.Fprintf(b, "  <fsmine:arg tool=%s arg=%s kind=%s steps=\"%d\" sessions=\"%d\"",
			xmlAttr(a.Tool), xmlAttr(a.Arg), xmlAttr(a.Kind), a.Steps, a.Sessions)
		if len(a.Values) == 0 && len(a.From) == 0 {
			b.WriteString("/>\n")
			continue
		}
		b.WriteString(">\n")
		for _, v := range a.Values {
			fmt.Fprintf(b, "    <fsmine:value hash=%s/>\n", xmlAttr(v))
		}
		for _, f := range a.From {
			fmt.Fprintf(b, "    <fsmine:from label=%s/>\n", xmlAttr(f))
		}
		b.WriteString("  </fsmine:arg>\n")
	}
}

// formatFloat writes f in the fewest digits that read back as f.
func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// scxmlEvent is the event descriptor of transition t of m.
func scxmlEvent(m *automaton.Model, t *automaton.Transition) string {
	label := t.To
	if s := m.State(t.To); s != nil {
		label = s.Label
	}
	if t.From == automaton.StartID && t.Event == "" {
		return xmlName(label, false)
	}
	return xmlName(t.Event, false) + "." + xmlName(label, false)
}

// scxmlID is the SCXML id of a state id.
func scxmlID(id string) string { return xmlName(id, true) }

// xmlName encodes s as described on SCXML; id asks for a name that may start
// an XML ID (no leading digit or "-"). The empty string stays empty.
func xmlName(s string, id bool) string {
	var b strings.Builder
	for i, r := range s {
		word := r < 0x80 && (r == '_' || r == '-' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
		switch {
		case r == '_' && strings.HasPrefix(s[i+1:], "x"):
			word = false
		case i == 0 && id && (r == '-' || '0' <= r && r <= '9'):
			word = false
		}
		switch {
		case word:
			b.WriteRune(r)
		case r > 0xFFFF:
			fmt.Fprintf(&b, "_x%08X_", r)
		default:
			fmt.Fprintf(&b, "_x%04X_", r)
		}
	}
	return b.String()
}

// xmlAttr quotes s as an XML attribute value. Characters XML 1.0 cannot
// carry at all (control characters other than tab, newline and carriage
// return) are written as Go escapes (\xHH, \uHHHH), like shownText does,
// and a backslash of the text's own that would begin one as \x5c, so that
// fsmine import reads back the text.
func xmlAttr(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	s = strings.ToValidUTF8(s, "\uFFFD")
	escaped := func(r rune) bool { return !text.XMLChar(r) || r == '\\' }
	for i, r := range s {
		switch {
		case !text.XMLChar(r):
			xml.EscapeText(&b, []byte(goEscape(r)))
		case r == '\\':
			if _, n := text.HexEscapeAt(s, i, escaped); n > 0 {
				b.WriteString(`\x5c`) // the text's own, where import would decode
			} else {
				b.WriteByte('\\')
			}
		default:
			xml.EscapeText(&b, []byte(string(r)))
		}
	}
	b.WriteByte('"')
	return b.String()
}

// digestNote is " (digest)" for a model with a digest, the digest written
// by esc, the escaping rule of the text it goes into. A model file's digest
// may hold anything.
func digestNote(m *automaton.Model, esc func(string) string) string {
	if m.Digest == "" {
		return ""
	}
	return " (" + esc(m.Digest) + ")"
}

// xmlComment makes s safe inside an XML comment: control characters and
// characters XML cannot carry as Go escapes (see shownText), and no "-", so
// that nothing in s can end the comment ("-->") or break it ("--").
func xmlComment(s string) string {
	return shownText(strings.ReplaceAll(s, "-", ""))
}

// scxmlGeneralized is the fsmine:rare attribute of a rare transition, the
// fsmine:back_edge attribute of a back edge and the fsmine:generalized
// attribute of a generalised one, each with a leading space, or "".
func scxmlGeneralized(t *automaton.Transition) string {
	var b strings.Builder
	if t.Rare {
		b.WriteString(` fsmine:rare="true"`)
	}
	if t.BackEdge {
		b.WriteString(` fsmine:back_edge="true"`)
	}
	if t.Generalized != "" {
		b.WriteString(" fsmine:generalized=" + xmlAttr(t.Generalized))
	}
	return b.String()
}
