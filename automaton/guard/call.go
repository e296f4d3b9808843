package guard

import "github.com/fsmine/fsmine/automaton"

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
// a call of the tool target labels (none for an unknown state).
func (s *session) callArgs(r *automaton.ArgRules, target *gstate, call *Call, judge bool) *automaton.ArgDeviation {
	if s.args == nil {
		s.args = automaton.NewArgWatch()
	}
	for _, st := range call.Seen {
		s.args.See(st.Label, st.Text)
	}
	if judge && target != nil {
		return s.args.Call(r, target.label, call.Args)
	}
	return nil
}
