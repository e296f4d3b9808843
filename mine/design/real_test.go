package design_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/mine"
	"github.com/fsmine/fsmine/mine/design"
	"github.com/fsmine/fsmine/render"
)

// TestRoundTripRealModels mines the real logs in ../shared/data (skipped
// when they are absent) with default options and reads every machine export
// of the models back: the exports come out byte-identical and the models
// read back keep their digests.
func TestRoundTripRealModels(t *testing.T) {
	data := filepath.Join("..", "..", "..", "shared", "data")
	if _, err := os.Stat(data); err != nil {
		t.Skip("no ../shared/data: ", err)
	}
	logs := []struct{ file, labels string }{
		{"jsonl/tau2_retail.jsonl", "../../testdata/tau2_retail.labels.json"},
		{"jsonl/taubench_airline.jsonl", ""},
		{"jsonl/helpdesk.jsonl.gz", ""},
		{"star/ride_book.jsonl", ""},
	}
	exports := []struct {
		format string
		write  func(io.Writer, *automaton.Model, render.Options) error
		detail render.Detail
	}{
		{design.FormatMermaid, render.Mermaid, render.DetailFull},
		{design.FormatSCXML, render.SCXML, render.DetailFull},
		{design.FormatSCXML, render.SCXML, render.DetailSummary},
		{design.FormatXState, render.XState, render.DetailFull},
		{design.FormatXState, render.XState, render.DetailSummary},
	}
	for _, lg := range logs {
		t.Run(filepath.Base(lg.file), func(t *testing.T) {
			path := filepath.Join(data, lg.file)
			ropt := mine.ReadOptions{}
			if lg.labels != "" {
				raw, err := os.ReadFile(lg.labels)
				if err != nil {
					t.Fatal(err)
				}
				if ropt.Rules, err = mine.ParseRules(raw); err != nil {
					t.Fatal(err)
				}
			}
			l, err := mine.Read([]mine.Input{{Name: path, Open: func() (io.ReadCloser, error) { return os.Open(path) }}}, ropt)
			if err != nil {
				t.Fatal(err)
			}
			m, err := mine.Build(l, mine.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			for _, ex := range exports {
				opt := render.Options{Detail: ex.detail}
				var first, second bytes.Buffer
				if err := ex.write(&first, m, opt); err != nil {
					t.Fatal(err)
				}
				back, err := design.Read(first.Bytes(), design.Options{Path: "export", Format: ex.format})
				if err != nil {
					t.Fatalf("%s %s: reading the export back: %v", ex.format, ex.detail, err)
				}
				if err := ex.write(&second, back, opt); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(first.Bytes(), second.Bytes()) {
					t.Errorf("%s %s: export -> import -> export differs at byte %d: %.80q", ex.format, ex.detail, firstDiff(first.Bytes(), second.Bytes()), first.Bytes()[max(0, firstDiff(first.Bytes(), second.Bytes())-40):])
				}
				if ex.format != design.FormatMermaid && back.Digest != m.Digest {
					t.Errorf("%s %s: digest read back = %s, want %s", ex.format, ex.detail, back.Digest, m.Digest)
				}
			}
		})
	}
}

// firstDiff is the offset of the first byte where a and b differ.
func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestRoundTripRealArgs: a model of a raw tau2 export with argument rules
// (build --args) keeps them, and its digest, through its SCXML and XState
// exports; before, both exports left the rules out, and a guard of the
// model read back stopped no call.
func TestRoundTripRealArgs(t *testing.T) {
	path := filepath.Join("..", "..", "..", "shared", "data", "raw", "tau2", "gpt-4.1_retail_default_gpt-4.1_1trials.json")
	if _, err := os.Stat(path); err != nil {
		t.Skip("no ../shared/data: ", err)
	}
	in := []mine.Input{{Name: path, Open: func() (io.ReadCloser, error) { return os.Open(path) }}}
	ropt := mine.ReadOptions{Import: mine.ImportOptions{Seen: true}}
	l, err := mine.Read(in, ropt)
	if err != nil {
		t.Fatal(err)
	}
	m, err := mine.Build(l, mine.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := mine.ReadArgSessions(in, ropt)
	if err != nil {
		t.Fatal(err)
	}
	if m.Args = mine.LearnArgs(sessions, mine.ArgOptions{}); len(m.Args) == 0 {
		t.Fatal("no argument rule learned from the export")
	}
	m.Digest = m.ComputeDigest()
	for _, ex := range []struct {
		format string
		write  func(io.Writer, *automaton.Model, render.Options) error
	}{{design.FormatSCXML, render.SCXML}, {design.FormatXState, render.XState}} {
		var b bytes.Buffer
		if err := ex.write(&b, m, render.Options{Detail: render.DetailFull}); err != nil {
			t.Fatal(err)
		}
		back, err := design.Read(b.Bytes(), design.Options{Path: "export", Format: ex.format})
		if err != nil {
			t.Fatalf("%s: %v", ex.format, err)
		}
		if back.Digest != m.Digest || len(back.Args) != len(m.Args) {
			t.Errorf("%s: %d argument rules and digest %s read back, want %d and %s", ex.format, len(back.Args), back.Digest, len(m.Args), m.Digest)
		}
	}
}
