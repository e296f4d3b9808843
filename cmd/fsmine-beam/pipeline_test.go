package main

import (
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/textio"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/direct"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/mine"
)

// TestMain initialises Beam, as a pipeline's main must before it runs on a
// portable runner: the loopback worker Prism starts runs in this process.
func TestMain(m *testing.M) {
	flag.Parse()
	beam.Init()
	os.Exit(m.Run())
}

// TestPipelineMatchesBuild runs the pipeline on the bundled sample with
// Beam's direct (local) runner, which Beam has deprecated, and with Prism,
// the portable runner that speaks the job API Flink, Spark and Dataflow
// speak (started in-process, its SDK worker in this process: the loopback
// environment), and checks that each mines the model fsmine build mines:
// the same digest.
func TestPipelineMatchesBuild(t *testing.T) {
	runners := []struct {
		name    string
		execute func(context.Context, *beam.Pipeline) error
	}{
		{"direct", func(ctx context.Context, p *beam.Pipeline) error { _, err := direct.Execute(ctx, p); return err }},
		{"prism", func(ctx context.Context, p *beam.Pipeline) error { _, err := prism.Execute(ctx, p); return err }},
	}
	for _, r := range runners {
		t.Run(r.name, func(t *testing.T) { testPipelineMatchesBuild(t, r.execute) })
	}
}

func testPipelineMatchesBuild(t *testing.T, execute func(context.Context, *beam.Pipeline) error) {
	sample := filepath.Join("..", "..", "testdata", "returns.jsonl")
	labels, err := os.ReadFile(filepath.Join("..", "..", "testdata", "returns.labels.json"))
	if err != nil {
		t.Fatal(err)
	}
	rules, err := mine.ParseRules(labels)
	if err != nil {
		t.Fatal(err)
	}
	lg, err := mine.Read([]mine.Input{{Name: sample, Open: func() (io.ReadCloser, error) { return os.Open(sample) }}}, mine.ReadOptions{Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	want, err := mine.Build(lg, mine.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}

	out := filepath.Join(t.TempDir(), "model.json")
	opt := Options{Inputs: []string{sample}, Labels: string(labels), RareRatio: mine.DefaultOptions().RareRatio}
	err = run(context.Background(), opt, out, execute,
		func(s beam.Scope, glob string) beam.PCollection { return textio.Read(s, glob) },
		func(s beam.Scope, path string, col beam.PCollection) { textio.Write(s, path, col) })
	if err != nil {
		t.Fatal(err)
	}
	got, err := automaton.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if got.Digest != want.Digest {
		t.Errorf("pipeline digest %s, fsmine build %s", got.Digest, want.Digest)
	}
	if got.Source.Sessions != want.Source.Sessions || got.Source.Events != want.Source.Events || got.Source.Detours != want.Source.Detours {
		t.Errorf("pipeline source %+v, build %+v", got.Source, want.Source)
	}
}
