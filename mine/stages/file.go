package stages

import (
	"bytes"
	"fmt"
	"regexp"

	json "github.com/goccy/go-json"

	"github.com/fsmine/fsmine/mine"
)

// JSON returns the rules file: one rule a line, in order, then
// "unmatched": "keep" (a node no rule names keeps its name as its stage).
func (s *Suggestion) JSON() []byte {
	var b bytes.Buffer
	b.WriteString("{\n  \"rules\": [\n")
	for i, r := range s.Rules {
		var line bytes.Buffer
		enc := json.NewEncoder(&line)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(r); err != nil {
			panic(err) // strings, bools and a map of strings always encode
		}
		b.WriteString("    ")
		b.Write(bytes.TrimRight(line.Bytes(), "\n"))
		if i+1 < len(s.Rules) {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("  ],\n  \"unmatched\": \"keep\"\n}\n")
	return b.Bytes()
}

// check makes sure the rules load as fsmine reads them and give every
// node of the log the stage the suggestion says: the first rule whose
// pattern matches decides.
func (s *Suggestion) check(a *analysis, nodePath string) error {
	if _, err := mine.ParseRules(s.JSON()); err != nil {
		return fmt.Errorf("the suggested rules do not load (a bug): %w", err)
	}
	want := map[string]string{} // node -> stage, "" for dropped
	for _, st := range s.Stages {
		for _, n := range st.Nodes {
			want[n] = st.Name
		}
	}
	res := make([]*regexp.Regexp, len(s.Rules))
	for i, r := range s.Rules {
		res[i] = regexp.MustCompile(r.Match[nodePath])
	}
	for i, n := range a.all {
		id := a.nodeOf[i]
		got := n
		for r, rule := range s.Rules {
			if res[r].MatchString(n) {
				got = rule.Name
				if rule.Drop {
					got = ""
				}
				break
			}
		}
		w, ok := want[a.names[id]]
		switch {
		case a.chat[id] && (got == "" || got == n || got == a.names[id]):
		case !a.chat[id] && ok && got == w:
		default:
			return fmt.Errorf("the suggested rules label node %q as %q, not %q (a bug)", n, got, w)
		}
	}
	return nil
}
