package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/textio"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/fsmine/fsmine/mine"
)

var (
	input     = flag.String("input", "", "comma-separated log file patterns (JSONL, one record a line; .gz read by extension)")
	output    = flag.String("output", "model.json", "where to write the model")
	labels    = flag.String("label_rules", "", "label rules file (read where the pipeline is launched)")
	fields    = flag.String("fields", "", "comma-separated field remaps, NAME=PATH as fsmine build's --field")
	merge     = flag.String("merge", mine.DefaultOptions().Merge, "state merging: alergia, label or bayes")
	alpha     = flag.Float64("alpha", mine.DefaultOptions().Alpha, "alergia's significance level")
	rareCount = flag.Int("rare_count", 0, "flag transitions taken fewer than this many times")
	rareRatio = flag.Float64("rare_ratio", mine.DefaultOptions().RareRatio, "flag transitions below this share of their source's outflow")
)

func main() {
	flag.Parse()
	beam.Init()
	if err := launch(); err != nil {
		fmt.Fprintf(os.Stderr, "fsmine-beam: %v\n", err)
		os.Exit(2)
	}
}

func launch() error {
	if *input == "" {
		return fmt.Errorf("--input is required")
	}
	opt := Options{Inputs: strings.Split(*input, ","), Merge: *merge, Alpha: *alpha, RareCount: *rareCount, RareRatio: *rareRatio}
	if *labels != "" {
		data, err := os.ReadFile(*labels)
		if err != nil {
			return err
		}
		if _, err := mine.ParseRules(data); err != nil {
			return fmt.Errorf("%s: %w", *labels, err)
		}
		opt.Labels = string(data)
	}
	if *fields != "" {
		m, err := mine.ParseFieldMap(strings.Split(*fields, ","))
		if err != nil {
			return err
		}
		opt.Fields = m
	}
	return run(context.Background(), opt, *output,
		func(ctx context.Context, p *beam.Pipeline) error { return beamx.Run(ctx, p) },
		func(s beam.Scope, glob string) beam.PCollection { return textio.Read(s, glob) },
		func(s beam.Scope, out string, col beam.PCollection) { textio.Write(s, out, col) })
}
