// Command fsmine-beam is fsmine's sharded build as an Apache Beam pipeline
// (Go SDK), so that it runs on the runners an organisation already has
// (Flink, Spark, Dataflow) rather than on a scheduler of fsmine's own. It
// reads the logs, groups the records by session, reads each session as
// fsmine build does (same parser, label rules and ordering), and combines
// the sessions into one log that is mined into the model: the model, and
// its digest, that fsmine build gives on the same logs.
//
// It lives in its own module so that the fsmine binary stays small and its
// build fast.
package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/goccy/go-json"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/mine"
)

func init() {
	register.DoFn2x1[string, func(string, string), error](&keyBySessionFn{})
	register.Emitter2[string, string]()
	register.DoFn3x1[string, func(*string) bool, func([]byte), error](&readSessionFn{})
	register.Emitter1[[]byte]()
	register.Emitter1[string]()
	register.DoFn3x1[int, func(*[]byte) bool, func(string), error](&buildModelFn{})
	register.Iter1[string]()
	register.Iter1[[]byte]()
}

// Options are what shapes the model, as fsmine build's flags do.
type Options struct {
	// Inputs names the logs (file patterns the runner's file systems know).
	Inputs []string
	// Labels is the label rules file's content, or empty.
	Labels string
	// SessionPath is the dotted path of the session id (--field session_id=...).
	SessionPath string
	// Fields remaps record fields, as --field does.
	Fields map[string]string
	Merge  string
	Alpha  float64
	// RareCount and RareRatio flag rare transitions.
	RareCount int
	RareRatio float64
}

// badKey groups the lines whose session id cannot be read: read as one
// session, they are skipped and counted as fsmine build skips bad lines.
const badKey = "\x00bad"

// keyBySessionFn keys each line by its session id.
type keyBySessionFn struct {
	SessionPath string
}

func (f *keyBySessionFn) ProcessElement(line string, emit func(string, string)) error {
	if strings.TrimSpace(line) == "" {
		return nil
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(line), &rec); err != nil {
		emit(badKey, line)
		return nil
	}
	var cur any = rec
	for _, seg := range strings.Split(f.SessionPath, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			cur = nil
			break
		}
		cur = m[seg]
	}
	switch id := cur.(type) {
	case string:
		emit(id, line)
	case json.Number, float64:
		emit(fmt.Sprint(id), line)
	default:
		emit(badKey, line)
	}
	return nil
}

// readSessionFn reads one session's lines as fsmine build reads a log and
// emits the session as a partial result (mine.PartialSchema).
type readSessionFn struct {
	Labels string
	Fields map[string]string
}

func (f *readSessionFn) ProcessElement(id string, lines func(*string) bool, emit func([]byte)) error {
	var all []string
	var l string
	for lines(&l) {
		all = append(all, l)
	}
	// The order of a group is the runner's: sort, so that records without
	// step or time order alike on every run.
	sort.Strings(all)
	data := strings.Join(all, "\n") + "\n"
	ropt := mine.ReadOptions{Fields: f.Fields, Format: mine.FormatJSONL, NoHash: true, Workers: 1}
	if f.Labels != "" {
		rules, err := mine.ParseRules([]byte(f.Labels))
		if err != nil {
			return err
		}
		ropt.Rules = rules
	}
	lg, err := mine.Read([]mine.Input{{Name: "session " + id, Open: func() (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(data)), nil
	}}}, ropt)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := lg.WritePartial(&buf); err != nil {
		return err
	}
	emit(buf.Bytes())
	return nil
}

// buildModelFn merges every session's partial result and mines the model.
type buildModelFn struct {
	Opt    Options
	Source string
}

func (f *buildModelFn) ProcessElement(_ int, partials func(*[]byte) bool, emit func(string)) error {
	var logs []*mine.Log
	var names []string
	var p []byte
	for partials(&p) {
		lg, err := mine.ReadPartial(bytes.NewReader(p), "partial")
		if err != nil {
			return err
		}
		logs = append(logs, lg)
		names = append(names, fmt.Sprint("session group ", len(names)+1))
	}
	merged, err := mine.MergeLogs(logs, names)
	if err != nil {
		return err
	}
	// One source entry for the whole input, as the partials of sessions
	// each named their own.
	src := automaton.SourceFile{Path: f.Source, Format: mine.FormatJSONL}
	for _, fl := range merged.Files {
		src.Records += fl.Records
		src.Skipped += fl.Skipped
		src.Duplicates += fl.Duplicates
	}
	merged.Files = []automaton.SourceFile{src}
	o := mine.DefaultOptions()
	if f.Opt.Merge != "" {
		o.Merge = f.Opt.Merge
	}
	if f.Opt.Alpha > 0 {
		o.Alpha = f.Opt.Alpha
	}
	o.RareCount, o.RareRatio = f.Opt.RareCount, f.Opt.RareRatio
	m, err := mine.Build(merged, o)
	if err != nil {
		return err
	}
	m.Version = 1
	m.Generator = "fsmine-beam"
	var out bytes.Buffer
	if err := m.Write(&out); err != nil {
		return err
	}
	emit(strings.TrimSuffix(out.String(), "\n"))
	return nil
}

// Pipeline adds the sharded build to s over lines (one log record each) and
// returns a PCollection holding the model file's text.
func Pipeline(s beam.Scope, lines beam.PCollection, opt Options) beam.PCollection {
	s = s.Scope("fsmine")
	if opt.SessionPath == "" {
		opt.SessionPath = mine.FieldSession
		if p, ok := opt.Fields[mine.FieldSession]; ok {
			opt.SessionPath = p
		}
	}
	keyed := beam.ParDo(s, &keyBySessionFn{SessionPath: opt.SessionPath}, lines)
	sessions := beam.GroupByKey(s, keyed)
	partials := beam.ParDo(s, &readSessionFn{Labels: opt.Labels, Fields: opt.Fields}, sessions)
	one := beam.AddFixedKey(s, partials)
	all := beam.GroupByKey(s, one)
	return beam.ParDo(s, &buildModelFn{Opt: opt, Source: strings.Join(opt.Inputs, ",")}, all)
}

// run is main's body: it builds and runs the pipeline with the given
// runner function.
func run(ctx context.Context, opt Options, output string, execute func(context.Context, *beam.Pipeline) error, read func(beam.Scope, string) beam.PCollection, write func(beam.Scope, string, beam.PCollection)) error {
	p, s := beam.NewPipelineWithRoot()
	var parts []beam.PCollection
	for _, in := range opt.Inputs {
		parts = append(parts, read(s, in))
	}
	lines := beam.Flatten(s, parts...)
	write(s, output, Pipeline(s, lines, opt))
	return execute(ctx, p)
}
