package guard

import (
	"encoding/binary"
	"encoding/hex"
	"hash/maphash"

	"github.com/fsmine/fsmine/automaton"
)

// Call is what a step that proposes a tool call reports for the model's
// argument rules (Guard.StepCall): the call's arguments, and the text that
// entered the session since the session's last step, each with the label
// of the step that brought it (the user's words as user_msg, the last
// tool's answer as that tool).
type Call struct {
	Args []automaton.Arg
	Seen []SeenText
}

// SeenText is text that entered a session, and the label of the step that
// brought it.
type SeenText struct {
	Label, Text string
}

// callArgs remembers call's text and, when judge, judges its arguments as
// a call of the tool target labels (none for an unknown state), by c's
// argument rules.
func (s *session) callArgs(c *compiled, target *gstate, call *Call, judge bool) *automaton.ArgDeviation {
	if s.args == nil {
		s.args = automaton.NewArgWatch()
	}
	for _, st := range call.Seen {
		label := st.Label
		if !s.args.Has(label) {
			// A label the session keeps by name (seen under a model
			// that had it) stays so; others as seenLabel gives them.
			label = c.seenLabel(label)
		}
		s.args.See(label, st.Text)
	}
	if judge && target != nil {
		return s.args.Call(c.args, target.label, call.Args)
	}
	return nil
}

// seenLabelSeed keys the stand-ins of seenLabel.
var seenLabelSeed = maphash.MakeSeed()

// seenLabel is label as a session's automaton.ArgWatch keeps it (up to 63
// of them): the model's or a rule's own string when one has it, shared by
// every session; else a stand-in of 17 bytes, "\x00" and a keyed hash, so
// that a caller's long labels cost a session nothing more. A label that
// neither the model nor a rule has can only count as a source for a rule
// of any source, as its stand-in does, and two stand-ins differ as their
// labels do, so the watch keeps its bits as it would for the labels
// themselves (check's, which sees them whole).
func (c *compiled) seenLabel(label string) string {
	if gs, ok := c.labels[label]; ok {
		return gs.label
	}
	if l, ok := c.argFrom[label]; ok {
		return l
	}
	stand := standIn(label)
	for c.labels[stand] != nil || c.argFrom[stand] != "" {
		stand += "\x00" // a model's label of that form: never mistake one for it
	}
	return stand
}

// standIn is the stand-in of label: "\x00" and its keyed hash.
func standIn(label string) string {
	var h [8]byte
	binary.BigEndian.PutUint64(h[:], maphash.String(seenLabelSeed, label))
	return "\x00" + hex.EncodeToString(h[:])
}
