package render

import (
	"bytes"
	"context"
	"encoding/json" // an independent reference for valid JSON
	"encoding/xml"
	"fmt"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsmine/fsmine/automaton"
)

// hostileStrings are texts that end or escape a string, comment or element
// in one of the export languages: Python (docstrings, escapes, comments),
// XML and HTML, DOT, JSON and Mermaid.
var hostileStrings = []string{
	`"""` + "\nimport os\nos.system('echo pwned')\n" + `"""`,
	`'''` + "\n__import__('os').system('x')\n#",
	`\N{`, `\x`, `\u12`, `\`, "\\\n", "\r\nx = 1\r", "a\x00b", "\u2028\u2029", "\x0c\x1b[31m",
	"--><script>alert(1)</script><!--", "-", "]]>", "<![CDATA[", "\uFFFE\uFFFF", "&amp;", "&#0;",
	`"; rankdir=TB; x [label="`, "}\ndigraph x {", `<b>html</b>`, `\N\G\L`,
	"%%{init: {}}%%", "direction TB", "a : b ; c", "{{.Title}}", `</script><svg onload=alert(1)>`,
	"javascript:alert(1)", "\xff\xfe", "",
}

// hostileModel returns a model file whose every text field holds s (ids
// made distinct by a suffix, where they must be).
func hostileModel(s string) []byte {
	id := func(suffix string) string { return s + suffix }
	m := automaton.Model{
		Schema:    automaton.Schema,
		Version:   3,
		Parent:    &automaton.Parent{Version: 2, Digest: s},
		Digest:    s,
		Created:   s,
		Generator: s,
		Source: automaton.Source{
			Files:    []automaton.SourceFile{{Path: s, SHA256: s, Records: 3, Format: s}},
			Sessions: 2, Events: 3, Records: 3,
		},
		Params: automaton.Params{
			Format: s, Fields: map[string]string{"node": s}, Merge: s, RareCount: 1, RareRatio: 0.1, Generalize: s,
		},
		Initial: automaton.StartID,
		States: []automaton.State{
			{ID: automaton.StartID, Label: automaton.StartID, Visits: 2, Sessions: 2},
			{ID: id("a"), Label: s, Visits: 3, Sessions: 2},
			{ID: id("b"), Label: id("b"), Visits: 1, Sessions: 1},
			{ID: automaton.EndID, Label: automaton.EndID, Visits: 2, Sessions: 2},
		},
		Transitions: []automaton.Transition{
			{From: automaton.StartID, To: id("a"), Count: 2, Sessions: 2, Prob: 1},
			{From: id("a"), Event: s, To: id("a"), Count: 1, Sessions: 1, Prob: 1.0 / 3, BackEdge: true},
			{From: id("a"), Event: s, To: id("b"), Count: 1, Sessions: 1, Prob: 1.0 / 3, Rare: true},
			{From: id("a"), Event: id("end"), To: automaton.EndID, Count: 1, Sessions: 1, Prob: 1.0 / 3},
			{From: id("b"), Event: s, To: automaton.EndID, Count: 1, Sessions: 1, Prob: 1},
		},
		Loops: []automaton.Loop{{States: []string{id("a")}, BackEdges: []automaton.EdgeRef{{From: id("a"), Event: s, To: id("a")}},
			Count: 1, Sessions: 1, MaxIterations: 1, P95Iterations: 1}},
		Trunk:       []string{id("a")},
		Variants:    2,
		TopVariants: []automaton.Variant{{Count: 1, States: []string{id("a")}}, {Count: 1, States: []string{id("a"), id("b")}}},
	}
	if labels, err := json.Marshal(map[string]string{s: s}); err == nil {
		m.Params.Labels = labels
	}
	var buf bytes.Buffer
	if err := m.Write(&buf); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// FuzzExporters reads arbitrary model files and writes every one that loads
// with every exporter (the formats of render, and the HTML report), checking
// that each output parses in its own language: DOT by Graphviz's dot when
// it is installed, SVG and SCXML as XML, PNG as PNG, XState as JSON,
// Mermaid by the line grammar of its writer, LangGraph's Python by python3's
// ast module when python3 is installed, and the report holding no script
// but its own. Every field of a model file is an attacker's.
func FuzzExporters(f *testing.F) {
	if testing.Short() {
		f.Skip("every exporter on hostile models, laid out by the built-in Graphviz: skipped in -short mode")
	}
	for _, name := range []string{"orders", "support", "weird", "report/returns", "report/hostile"} {
		data, err := os.ReadFile(filepath.Join("testdata", name+".model.json"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range hostileStrings {
		f.Add(hostileModel(s))
	}
	dot, _ := exec.LookPath("dot")
	python := pythonExecutable()
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := automaton.Decode(bytes.NewReader(data))
		if err != nil || len(m.States) > 200 || len(m.Transitions) > 400 {
			t.Skip()
		}
		out := func(name string) []byte {
			var buf bytes.Buffer
			if err := Formats[name](&buf, m, Options{}); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return buf.Bytes()
		}

		if dot != "" {
			src := out("dot")
			if msg, err := runTool(dot, src, "-Tcanon"); err != nil {
				t.Errorf("dot does not read the DOT: %v\n%s\n%s", err, msg, src)
			}
		}
		for _, name := range []string{"svg", "scxml"} {
			if err := wellFormedXML(out(name)); err != nil {
				t.Errorf("%s is not well-formed XML: %v", name, err)
			}
		}
		if _, err := png.Decode(bytes.NewReader(out("png"))); err != nil {
			t.Errorf("png: %v", err)
		}
		if x := out("xstate"); !json.Valid(x) {
			t.Errorf("xstate is not JSON:\n%s", x)
		}
		mmd := mermaidEntity.ReplaceAllString(string(out("mermaid")), "E")
		for _, line := range strings.Split(strings.TrimSuffix(mmd, "\n"), "\n")[2:] {
			if !mermaidDecl.MatchString(line) && !mermaidTransition.MatchString(line) && !mermaidLabel.MatchString(line) {
				t.Errorf("mermaid line %q", line)
			}
		}
		py := out("langgraph")
		// Without python3: the program's only triple quotes are its own
		// two docstrings', so no text of the model ends one.
		if n := bytes.Count(py, []byte(`"""`)); n != 4 {
			t.Errorf("the LangGraph program has %d triple quotes, want 4:\n%s", n, py)
		}
		if python != "" {
			if msg, err := runTool(python, py, "-c", "import ast, sys; ast.parse(sys.stdin.buffer.read())"); err != nil {
				t.Errorf("python3 does not parse the LangGraph program: %v\n%s\n%s", err, msg, py)
			}
		}
		var page bytes.Buffer
		if err := Report(&page, m, ReportOptions{}); err != nil {
			t.Fatalf("report: %v", err)
		}
		if err := ownScriptOnly(page.String()); err != nil {
			t.Errorf("report: %v", err)
		}
	})
}

// pythonExecutable is the path of the python3 that PATH finds, past any
// shim that would start a shell for every run (pyenv's takes a second);
// "" when there is none.
func pythonExecutable() string {
	out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// urlAttrs are the attributes whose value a browser follows as a URL.
var urlAttrs = map[string]bool{"href": true, "xlink:href": true, "src": true, "action": true, "formaction": true, "data": true}

// runTool runs a program with stdin and returns its error output.
func runTool(bin string, stdin []byte, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = io.Discard
	err := cmd.Run()
	return stderr.String(), err
}

func wellFormedXML(doc []byte) error {
	dec := xml.NewDecoder(bytes.NewReader(doc))
	dec.Strict = true
	for {
		_, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// ownScriptOnly checks that an HTML page holds one script, the report's
// own, and no other way to run code: no event handler attribute and no
// javascript: URL in any tag.
func ownScriptOnly(page string) error {
	lower := strings.ToLower(page)
	if n := strings.Count(lower, "<script"); n != 1 {
		return fmt.Errorf("%d <script elements, want 1", n)
	}
	if !strings.Contains(page, "<script>"+reportScript+"</script>") {
		return fmt.Errorf("the page's script is not its own")
	}
	for rest := page; ; {
		i := strings.IndexByte(rest, '<')
		if i < 0 {
			return nil
		}
		rest = rest[i+1:]
		if strings.HasPrefix(rest, "script>") {
			rest = rest[strings.Index(rest, "</script>")+1:]
			continue
		}
		// Read the tag's name and attributes up to its closing >.
		j := 0
		for j < len(rest) && rest[j] != '>' && rest[j] != ' ' && rest[j] != '\n' && rest[j] != '\t' {
			j++
		}
		for j < len(rest) && rest[j] != '>' {
			for j < len(rest) && (rest[j] == ' ' || rest[j] == '\n' || rest[j] == '\t' || rest[j] == '/') {
				j++
			}
			start := j
			for j < len(rest) && rest[j] != '=' && rest[j] != '>' && rest[j] != ' ' && rest[j] != '\n' && rest[j] != '\t' {
				j++
			}
			name := strings.ToLower(rest[start:j])
			if strings.HasPrefix(name, "on") {
				return fmt.Errorf("an event handler attribute %q", name)
			}
			if j < len(rest) && rest[j] == '=' {
				j++
				var value string
				if j < len(rest) && (rest[j] == '"' || rest[j] == '\'') {
					q := rest[j]
					end := strings.IndexByte(rest[j+1:], q)
					if end < 0 {
						return fmt.Errorf("an unterminated attribute %q", name)
					}
					value = rest[j+1 : j+1+end]
					j += end + 2
				} else {
					start := j
					for j < len(rest) && rest[j] != '>' && rest[j] != ' ' {
						j++
					}
					value = rest[start:j]
				}
				if v := strings.ToLower(strings.TrimSpace(value)); urlAttrs[name] && strings.HasPrefix(v, "javascript:") {
					return fmt.Errorf("a javascript: URL in %q", name)
				}
			}
		}
		rest = rest[j:]
	}
}
