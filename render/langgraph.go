package render

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/internal/text"
)

// LangGraph writes m as the skeleton of a LangGraph program in Python: a
// StateGraph with one node function per state, and conditional edges from
// the model's transition table. opt is not used: a program keeps every
// transition.
//
// Each node returns the outcome of its step in "event" and may name the
// label of the step it means to take next in "next_label"; the router of its
// conditional edges then follows the model's transition for that move
// (automaton.Model.Next), or the most frequent transition on that event when
// next_label is None, and raises ValueError on a move the model never saw.
// The generated node functions return their state's most frequent event, so
// the skeleton runs as it is and walks the model's most frequent path.
//
// Node names are the state ids, with ":" and "|" (reserved by LangGraph)
// replaced by "_" and "_node" added to a name that would clash with a key
// of the graph's state; __start__ and __end__ are LangGraph's START and END.
// Function names are "node_" and the id's ASCII letters, digits and
// underscores (others become "_"); both are made unique with "_2", "_3", ...
// Every text of the model is written by one of two rules, so that no id,
// label, event or digest can end a string, a comment or the docstring:
// as a Python string literal (pyString) in code and comments, and as
// pyText in the module's docstring.
func LangGraph(w io.Writer, m *automaton.Model, _ Options) error {
	m, err := sorted(m)
	if err != nil {
		return err
	}
	var states []*automaton.State
	for i := range m.States {
		if !isPseudo(m.States[i].ID) {
			states = append(states, &m.States[i])
		}
	}
	ids := stateIDs(states)
	nodeNames := uniqueNames(ids, langgraphNode)
	funcNames := uniqueNames(ids, func(id string) string { return "node_" + asciiWord(id) })
	node := func(id string) string {
		switch id {
		case automaton.StartID:
			return "START"
		case automaton.EndID:
			return "END"
		}
		return pyString(nodeNames[id])
	}

	var b bytes.Buffer
	fmt.Fprintf(&b, `"""LangGraph skeleton of fsmine model version %d%s.

One node function per state of the model, and conditional edges from its
transition table. Each node reports the outcome of its step in "event" and
may name the label of the step it means to take next in "next_label"; the
router of its edges then follows the model's transition for that move, or
the most frequent transition on that event when next_label is None. A move
the model never saw raises ValueError: the logs never went there.
"""

from typing import Optional, TypedDict

from langgraph.graph import END, START, StateGraph


class AgentState(TypedDict, total=False):
    event: str
    next_label: Optional[str]


# TRANSITIONS[node][event][next label] is the node the model goes to; the
# transitions out of each node stand most frequent first, with their counts.
TRANSITIONS: dict[str, dict[str, dict[str, str]]] = {
`, m.Version, digestNote(m, pyText))
	for _, id := range append([]string{automaton.StartID}, ids...) {
		out := m.Out(id)
		if len(out) == 0 {
			continue
		}
		fmt.Fprintf(&b, "    %s: {\n", node(id))
		// Events in the order of their most frequent transition, and each
		// event's transitions most frequent first: Out's order.
		var events []string
		byEvent := make(map[string][]*automaton.Transition)
		for _, t := range out {
			if _, ok := byEvent[t.Event]; !ok {
				events = append(events, t.Event)
			}
			byEvent[t.Event] = append(byEvent[t.Event], t)
		}
		for _, event := range events {
			fmt.Fprintf(&b, "        %s: {\n", pyString(event))
			for _, t := range byEvent[event] {
				note := fmt.Sprintf("%d (%s)", t.Count, text.Percent(t.Prob))
				if t.Rare {
					note += ", rare"
				}
				if t.BackEdge {
					note += ", back edge"
				}
				fmt.Fprintf(&b, "            %s: %s,  # %s\n", pyString(m.State(t.To).Label), node(t.To), note)
			}
			b.WriteString("        },\n")
		}
		b.WriteString("    },\n")
	}
	b.WriteString(`}


def route(source: str):
    """Returns the router of the conditional edges out of source."""
    moves = TRANSITIONS[source]

    def router(state: AgentState) -> str:
        event = state.get("event", "")
        targets = moves.get(event)
        if not targets:
            raise ValueError(f"the model has no transition out of {source!r} on event {event!r}")
        label = state.get("next_label")
        if label is None:
            return next(iter(targets.values()))
        if label not in targets:
            raise ValueError(f"the model never went from {source!r} on event {event!r} to a step labelled {label!r}")
        return targets[label]

    return router
`)
	for _, s := range states {
		fmt.Fprintf(&b, "\n\ndef %s(state: AgentState) -> AgentState:\n", funcNames[s.ID])
		fmt.Fprintf(&b, "    # State %s", pyString(s.ID))
		if s.Label != s.ID {
			fmt.Fprintf(&b, ", label %s", pyString(s.Label))
		}
		fmt.Fprintf(&b, ": %s.\n", visits(s.Visits))
		out := m.Out(s.ID)
		if len(out) == 0 {
			b.WriteString("    # TODO: the work of this step. The model has no transition out of it.\n")
			b.WriteString("    return {}\n")
			continue
		}
		b.WriteString("    # TODO: the work of this step; report its outcome as \"event\".\n")
		fmt.Fprintf(&b, "    return {\"event\": %s, \"next_label\": None}\n", pyString(out[0].Event))
	}
	b.WriteString("\n\nbuilder = StateGraph(AgentState)\n")
	for _, s := range states {
		fmt.Fprintf(&b, "builder.add_node(%s, %s)\n", node(s.ID), funcNames[s.ID])
	}
	b.WriteString(`for source, moves in TRANSITIONS.items():
    ends = list(dict.fromkeys(n for targets in moves.values() for n in targets.values()))
    builder.add_conditional_edges(source, route(source), ends)
graph = builder.compile()


if __name__ == "__main__":
    print(graph.invoke({}))
`)
	_, err = w.Write(b.Bytes())
	return err
}

// langgraphChannels are the keys of the skeleton's AgentState: LangGraph
// refuses a node named like one.
var langgraphChannels = map[string]bool{"event": true, "next_label": true}

// langgraphNode is the LangGraph node name for a state id, before
// uniqueNames.
func langgraphNode(id string) string {
	name := strings.NewReplacer(":", "_", "|", "_").Replace(id)
	if langgraphChannels[name] {
		name += "_node"
	}
	return name
}

// pyText makes s safe inside a Python string literal, the docstring
// included: control characters as Go escapes (see shownText), then
// backslashes and double quotes escaped, so that s reads back as shownText
// gives it and can neither end the string nor form a bad escape (\N, \x).
func pyText(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(shownText(s))
}

// pyString quotes s as a Python string literal. Go's quoting, after invalid
// UTF-8 is replaced, uses only escapes Python reads the same way (\n, \t,
// \\, \", \xHH, \uHHHH, \UHHHHHHHH).
func pyString(s string) string {
	return strconv.Quote(strings.ToValidUTF8(s, "\uFFFD"))
}
