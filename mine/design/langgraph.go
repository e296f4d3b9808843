package design

import (
	"fmt"

	json "github.com/goccy/go-json"

	"github.com/fsmine/fsmine/automaton"
)

// LangGraph's graph JSON (graph.get_graph().to_json() of a compiled
// StateGraph): "nodes", each with an "id", and "edges" with "source",
// "target" and, on a conditional edge, the condition's name in "data".
// __start__ and __end__ are LangGraph's START and END, as in fsmine's
// models. A conditional edge's name is its event; an edge without one takes
// Options.Event, and an edge out of __start__ the empty event.

type langgraphDoc struct {
	Nodes []struct {
		ID json.RawMessage `json:"id"`
	} `json:"nodes"`
	Edges []struct {
		Source      json.RawMessage `json:"source"`
		Target      json.RawMessage `json:"target"`
		Data        json.RawMessage `json:"data"`
		Conditional bool            `json:"conditional"`
	} `json:"edges"`
}

func readLangGraph(data []byte, opt Options) (*flow, error) {
	f := newFlow(opt.Path)
	var doc langgraphDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, f.errorf("", "not a LangGraph graph: %s", whyJSON(data, err))
	}
	if err := f.forgiven(data); err != nil {
		return nil, err
	}
	if len(doc.Nodes) == 0 {
		return nil, f.errorf("", `not a LangGraph graph: no "nodes"`)
	}
	for i, n := range doc.Nodes {
		id, err := jsonName(n.ID)
		if err != nil {
			return nil, f.errorf("", "nodes[%d]: id: %v", i, err)
		}
		if _, dup := f.nodes[id]; dup {
			return nil, f.errorf(id, "two nodes have this id")
		}
		f.add(id)
	}
	if _, ok := f.nodes[automaton.StartID]; !ok {
		return nil, f.errorf("", "no start: no %s node", automaton.StartID)
	}
	for i, e := range doc.Edges {
		from, err := jsonName(e.Source)
		if err != nil {
			return nil, f.errorf("", "edges[%d]: source: %v", i, err)
		}
		to, err := jsonName(e.Target)
		if err != nil {
			return nil, f.errorf(from, "edges[%d]: target: %v", i, err)
		}
		event := opt.Event
		if len(e.Data) > 0 && string(e.Data) != "null" {
			if err := json.Unmarshal(e.Data, &event); err != nil {
				return nil, f.errorf(from, "edges[%d]: data is the condition's name, a string: %v", i, err)
			}
		}
		if from == automaton.StartID {
			event = ""
		}
		f.edges = append(f.edges, edge{from: from, event: event, to: to})
	}
	return f, nil
}

// jsonName reads a node id: a string, or a number written as it stands.
func jsonName(raw json.RawMessage) (string, error) {
	if len(raw) == 0 {
		return "", fmt.Errorf("missing")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if s == "" {
			return "", fmt.Errorf("empty")
		}
		return s, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		return n.String(), nil
	}
	return "", fmt.Errorf("want a string, got %s", raw)
}
