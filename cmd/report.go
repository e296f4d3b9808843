package cmd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/internal/atomicfile"
	"github.com/fsmine/fsmine/internal/text"
	"github.com/fsmine/fsmine/mine"
	"github.com/fsmine/fsmine/mine/stats"
	"github.com/fsmine/fsmine/render"
)

func init() { register(newReportCmd) }

type reportOptions struct {
	model      string
	mapValue   string // --map
	inputs     []string
	measures   []string
	logs       logFlags
	output     string
	title      string
	diagram    string
	clusterSep string
	engine     string
	detail     string
	design     string
	// layoutTimeout limits each picture's layout (--layout-timeout).
	layoutTimeout time.Duration
}

func newReportCmd(streams IO) *cobra.Command {
	opts := &reportOptions{}
	cmd := &cobra.Command{
		Use:   "report MODEL.json [LOG...]",
		Short: "Write a self-contained HTML page for reviewing a model",
		Long: `Report writes one HTML file that a reviewer opens offline: the diagram
(inline SVG), the trunk, the top variants, every rare branch with its count,
share and sessions, the loops with their iterations and back edges, per-state
visits, sessions and dwell, every transition, and the model's provenance
(version, parent, digest, created, generator, source files with their
sha256, counters and parameters, the label rules included). A model built
with --examples lists example sessions per state and per transition, linked
to the trace tool when it was built with --link.

Given logs, the page adds a Cost and latency section: the logs are read as
the model was built from them (--labels, --field and --from override, as
for stats), every session is replayed through the model, and per state
(its visits) and per transition (the visits that left along it) it shows
dwell p50 and p95 and the numeric record fields of --measure (by default
tokens.prompt, tokens.completion, cost and duration_ms, those the records
carry) summed per visit: total, mean and p95.

A model built with --outcome adds a Where sessions fail section: the states
and moves whose sessions fail more often than the log's, as fsmine stats
shows them (one-sided Fisher exact tests, Benjamini-Hochberg adjusted).

The page loads nothing from the network: no scripts, fonts, stylesheets or
images; its style is inline and its one small script (click a column's
heading to sort a table) is allowed by hash in its Content-Security-Policy.
The same model gives the same bytes.

--detail summary (the default) draws a map of at most ten stages besides
start and end and at most 30 edges, the trunk as its spine, and lists the
stages so that each opens to its states, its transitions and a picture of
the transitions inside it; --diagram none leaves the map out. --detail
full draws every state, and then --diagram says which transitions: auto
(every one up to 200 transitions, else the common ones; no picture, and a
note, above 400 common ones), all, common (rare transitions left out of the
picture; the tables still list them) or none; --cluster SEP groups states
by the part of their label before SEP. The picture is laid
out by Graphviz built into fsmine (--engine builtin, the default), or by
Graphviz's dot program on PATH with --engine dot.

--design DESIGN.json (a model from fsmine import) adds a Design vs reality
section: the designed flow drawn beside the map, the designed moves no
session took and the moves sessions took that the design lacks, with counts
and example sessions (as fsmine diff DESIGN.json MODEL.json lists them).

-o writes the file atomically; without it the page goes to standard output.
MODEL.json "-" reads the model from standard input.

Exit status: 0 ok; 2 trouble (bad flags, unreadable model, unwritable
output).`,
		Example: `  fsmine report model.json -o model.html
  fsmine report model.json --diagram common --title "Returns agent, release 12" -o review.html
  fsmine report model.json logs/today.jsonl.gz -o review.html
  fsmine report mined.json --design design.json -o review.html`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("report takes a model file (and optionally logs)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.model, opts.inputs = args[0], args[1:]
			return runReport(cmd.Context(), opts, streams)
		},
	}
	f := cmd.Flags()
	bindMapFlag(f, &opts.mapValue)
	f.StringVarP(&opts.output, "output", "o", "-", "write the page to `FILE` (atomically) instead of standard output")
	f.StringVar(&opts.title, "title", "", "heading of the page (default \"fsmine model vN\")")
	f.StringVar(&opts.diagram, "diagram", string(render.DiagramAuto), "transitions the picture draws: "+diagramModeNames())
	f.StringVar(&opts.clusterSep, "cluster", "", "group the picture's states by the part of their label before `SEP`")
	f.StringVar(&opts.engine, "engine", string(render.EngineBuiltin), "layout of the picture: builtin (Graphviz inside fsmine) or dot (Graphviz's dot on PATH)")
	f.StringVar(&opts.detail, "detail", string(render.DetailSummary), "summary (stages, the trunk and the busiest edges; each stage opens below) or full (every state and transition, as --diagram says)")
	bindLayoutTimeout(f, &opts.layoutTimeout)
	f.StringVar(&opts.design, "design", "", "add the Design vs reality section: the designed model `FILE` (fsmine import) beside the map")
	f.StringArrayVar(&opts.measures, "measure", stats.DefaultMeasures, "with logs: numeric record field `PATH` to sum per visit (repeatable; dotted path)")
	opts.logs.bind(f)
	return cmd
}

func diagramModeNames() string {
	names := make([]string, len(render.DiagramModes))
	for i, m := range render.DiagramModes {
		names[i] = string(m)
	}
	return strings.Join(names, ", ")
}

// diagramMode checks a --diagram value.
func diagramMode(s string) (render.DiagramMode, error) {
	for _, m := range render.DiagramModes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", usagef("unknown --diagram %q: want one of %s", s, diagramModeNames())
}

func runReport(_ context.Context, opts *reportOptions, streams IO) error {
	mode, err := diagramMode(opts.diagram)
	if err != nil {
		return err
	}
	engine := render.Engine(opts.engine)
	if engine != render.EngineBuiltin && engine != render.EngineDot {
		return usagef("unknown engine %q: want builtin or dot", opts.engine)
	}
	detail, err := detailOf(opts.detail)
	if err != nil {
		return err
	}
	if err := checkLayoutTimeout(opts.layoutTimeout); err != nil {
		return err
	}
	if err := checkMeasurePaths(opts.measures); err != nil {
		return err
	}
	var m *automaton.Model
	var measures *render.Measures
	file := opts.model
	read := append([]string{opts.model, opts.logs.labels}, opts.inputs...)
	if err := checkOutputs(read, [][2]string{{"--output", opts.output}}); err != nil {
		return err
	}
	if len(opts.inputs) > 0 {
		if opts.model == "-" {
			return usagef("report reads the model from a file when it reads logs")
		}
		var lg *mine.Log
		var ms *mine.Measures
		m, lg, ms, _, _, err = measuredLogs(opts.model, opts.inputs, &opts.logs, opts.measures, opts.mapValue, streams)
		if err != nil {
			return err
		}
		measures = stats.MeasureLogs(m, lg, ms)
		if lg.Emptied > 0 {
			fmt.Fprintf(streams.Err, "%s with every record dropped by the label rules, left out\n", text.Count(lg.Emptied, "more session"))
		}
	} else if opts.model == "-" {
		file = ""
		m, err = automaton.Read(streams.In)
		if err != nil {
			err = fmt.Errorf("standard input: %w", err)
		}
	} else {
		m, err = automaton.Load(opts.model)
	}
	if err != nil {
		return fmt.Errorf("reading model: %w", err)
	}
	if len(opts.inputs) == 0 {
		if m, err = pickMap(m, opts.model, opts.mapValue, streams.Err); err != nil {
			return err
		}
	}

	ropt := render.ReportOptions{Title: opts.title, File: file, Diagram: mode, ClusterSep: opts.clusterSep, Engine: engine, Detail: detail, Measures: measures, Timeout: opts.layoutTimeout}
	if t := mine.TallyFromModel(m); t != nil {
		ropt.Failures = stats.Failures(m, t, 20, 0)
	}
	if opts.design != "" {
		d, err := loadDiffModel(opts.design)
		if err != nil {
			return fmt.Errorf("reading the design: %w", err)
		}
		if d.Params.Design == "" {
			return fmt.Errorf("%s is a mined model, not a design: make one with fsmine import", opts.design)
		}
		ropt.Design, ropt.DesignFile = d, opts.design
	}
	var page bytes.Buffer
	if err := render.Report(&page, m, ropt); err != nil {
		return err
	}
	if opts.output == "-" {
		_, err := streams.Out.Write(page.Bytes())
		return err
	}
	err = atomicfile.Write(opts.output, func(w io.Writer) error {
		_, err := w.Write(page.Bytes())
		return err
	})
	if err != nil {
		return fmt.Errorf("writing %s: %w", opts.output, err)
	}
	return nil
}
