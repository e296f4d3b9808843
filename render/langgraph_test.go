package render

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
)

func TestLangGraphGolden(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			checkGolden(t, name+".langgraph.py.golden", render(t, LangGraph, loadFixture(t, name), Options{}))
		})
	}
}

// langgraphStub stands in for the langgraph package: it records the graph
// the skeleton builds.
const langgraphStub = `
START = "__start__"
END = "__end__"
GRAPH = {"nodes": {}, "edges": []}

class StateGraph:
    def __init__(self, schema):
        self.schema = schema
    def add_node(self, name, fn):
        assert name not in GRAPH["nodes"], name
        assert ":" not in name and "|" not in name, name
        assert name not in (START, END) and name not in self.schema.__annotations__, name
        GRAPH["nodes"][name] = fn
    def add_conditional_edges(self, source, path, path_map):
        GRAPH["edges"].append((source, path, list(path_map)))
    def compile(self):
        return self
`

// langgraphDriver imports the skeleton (with the stub) and prints, for every
// move of its table, the node its router picks, and for every node what
// its function returns.
const langgraphDriver = `
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("skeleton", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
from langgraph.graph import GRAPH
moves = []
for source, path, ends in GRAPH["edges"]:
    assert source == "__start__" or source in GRAPH["nodes"], source
    for event, targets in mod.TRANSITIONS[source].items():
        for label, target in targets.items():
            got = path({"event": event, "next_label": label})
            assert got == target and got in ends, (source, event, label, got, ends)
            moves.append([source, event, label, got])
        first = path({"event": event, "next_label": None})
        assert first == next(iter(targets.values())), (source, event, first)
    for bad in ({"event": "no such event"}, {"event": event, "next_label": "no such label"}):
        try:
            path(bad)
            raise AssertionError(("unseen move routed", source, bad))
        except ValueError:
            pass
returns = {name: fn({}) for name, fn in GRAPH["nodes"].items()}
json.dump({"moves": moves, "nodes": sorted(GRAPH["nodes"]), "returns": returns}, sys.stdout)
`

// pythonPath finds python3 on PATH and asks it for its own executable, so
// that the tests skip wrappers such as pyenv's shims, which take seconds.
func pythonPath(t *testing.T) string {
	t.Helper()
	shim, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not on PATH: the skeleton is not parsed or run")
	}
	out, err := exec.Command(shim, "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Skipf("python3 on PATH does not run: %v", err)
	}
	return strings.TrimSpace(string(out))
}

func TestLangGraphSkeleton(t *testing.T) {
	python := pythonPath(t)
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			m := loadFixture(t, name)
			src := render(t, LangGraph, m, Options{})

			parse := exec.Command(python, "-c", "import ast,sys; ast.parse(sys.stdin.read())")
			parse.Stdin = bytes.NewReader(src)
			if out, err := parse.CombinedOutput(); err != nil {
				t.Fatalf("the skeleton does not parse: %v\n%s", err, out)
			}

			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "langgraph"), 0o755); err != nil {
				t.Fatal(err)
			}
			files := map[string]string{
				"langgraph/__init__.py": "",
				"langgraph/graph.py":    langgraphStub,
				"skeleton.py":           string(src),
				"driver.py":             langgraphDriver,
			}
			for file, text := range files {
				if err := os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			run := exec.Command(python, filepath.Join(dir, "driver.py"), filepath.Join(dir, "skeleton.py"))
			run.Env = append(os.Environ(), "PYTHONPATH="+dir, "PYTHONDONTWRITEBYTECODE=1")
			var stderr bytes.Buffer
			run.Stderr = &stderr
			out, err := run.Output()
			if err != nil {
				t.Fatalf("running the skeleton: %v\n%s", err, stderr.String())
			}
			var res struct {
				Moves   [][4]string               `json:"moves"`
				Nodes   []string                  `json:"nodes"`
				Returns map[string]map[string]any `json:"returns"`
			}
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatal(err)
			}

			nodeOf := map[string]string{"__start__": "__start__", "__end__": "__end__"}
			var wantNodes []string
			for _, s := range m.States {
				if s.ID == "__start__" || s.ID == "__end__" {
					continue
				}
				n := langgraphNode(s.ID)
				nodeOf[s.ID] = n
				wantNodes = append(wantNodes, n)
			}
			slices.Sort(wantNodes)
			if !slices.Equal(res.Nodes, wantNodes) {
				t.Errorf("nodes %q, want %q", res.Nodes, wantNodes)
			}
			var got, want []string
			for _, mv := range res.Moves {
				got = append(got, strings.Join(mv[:], " | "))
			}
			for _, tr := range m.Transitions {
				want = append(want, strings.Join([]string{nodeOf[tr.From], tr.Event, m.State(tr.To).Label, nodeOf[tr.To]}, " | "))
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("moves routed:\n%q\nwant:\n%q", got, want)
			}
			for _, s := range m.States {
				if out := m.Out(s.ID); len(out) > 0 && s.ID != "__start__" {
					if ev := res.Returns[nodeOf[s.ID]]["event"]; ev != out[0].Event {
						t.Errorf("node %q returns event %v, want the most frequent %q", s.ID, ev, out[0].Event)
					}
				}
			}
		})
	}
}
