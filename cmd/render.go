package cmd

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/internal/atomicfile"
	"github.com/fsmine/fsmine/render"
)

func init() { register(newRenderCmd) }

type renderOptions struct {
	model      string
	mapValue   string // --map
	format     string
	formatSet  bool
	output     string
	hideRare   bool
	clusterSep string
	title      string
	engine     string
	detail     string
	failures   bool
	// layoutTimeout limits an SVG's or PNG's layout (--layout-timeout).
	layoutTimeout time.Duration
}

func newRenderCmd(streams IO) *cobra.Command {
	opts := &renderOptions{}
	cmd := &cobra.Command{
		Use:   "render MODEL.json",
		Short: "Draw a model or export it to another state-machine format",
		Long: `Render writes a model as Graphviz DOT (the default), an SVG or PNG picture,
Mermaid, W3C SCXML, an XState v5 machine (JSON) or a LangGraph skeleton
(Python), to standard output or, with -o, to a file written atomically.
MODEL.json "-" reads the model from standard input. Without --format, the
format follows the extension of -o (.dot .gv .svg .png .mmd .mermaid .scxml
.py; .json is XState; any other extension is an error, none gives DOT).

SVG and PNG are laid out by Graphviz built into fsmine (--engine builtin,
the default): nothing needs installing. --engine dot runs Graphviz's dot
program from PATH instead. PNG is not written to a terminal.

--detail summary (the default) draws a map a reviewer can read: states
grouped into at most ten stages (Graphviz clusters, Mermaid composite
states), top down with the trunk as a straight spine, at most 30 edges,
and while they cross more than 5 times as the builtin engine lays them
out, the edge off the trunk that crosses most taken out; rare, generalized,
seldom, minor and crossing edges are counted on their box, not drawn.
SCXML and XState then nest each stage's states in a compound state. --detail
full draws every state and transition; with it, --hide-rare leaves rare
transitions out of pictures (DOT, SVG, PNG, Mermaid) and --cluster SEP
groups states by the part of their label before SEP (DOT, SVG, PNG).
The builtin engine refuses an SVG or PNG in full of more than 400
transitions beyond one into each state (a layout of minutes): draw the
summary, --hide-rare, or --engine dot. A layout that takes longer than
--layout-timeout (default 2 minutes; 0 for no limit) stops with an error.
Machine exports (scxml, xstate, langgraph) always keep every transition.

Exit status: 0 ok; 2 trouble (bad flags, unreadable model, unwritable
output).`,
		Example: `  fsmine render model.json > model.dot
  fsmine render model.json -o model.svg
  fsmine render model.json -o model.svg --detail full --hide-rare --cluster _
  fsmine render model.json --format mermaid
  fsmine render model.json -o machine.scxml`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("render takes one model file, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.model = args[0]
			opts.formatSet = cmd.Flags().Changed("format")
			return runRender(cmd.Context(), opts, streams)
		},
	}
	f := cmd.Flags()
	bindMapFlag(f, &opts.mapValue)
	f.StringVar(&opts.format, "format", "dot", "output format: "+strings.Join(render.FormatNames(), ", "))
	f.StringVarP(&opts.output, "output", "o", "-", "write to `FILE` (atomically) instead of standard output")
	f.BoolVar(&opts.hideRare, "hide-rare", false, "leave rare transitions out of the picture")
	f.BoolVar(&opts.failures, "failures", false, "colour each transition by the share of its sessions that failed (a model mined with build --outcome; --detail full; dot, svg, png)")
	f.StringVar(&opts.clusterSep, "cluster", "", "group states by the part of their label before `SEP`")
	f.StringVar(&opts.title, "title", "", "title of the picture")
	f.StringVar(&opts.engine, "engine", string(render.EngineBuiltin), "layout for svg and png: builtin (Graphviz inside fsmine) or dot (Graphviz's dot on PATH)")
	f.StringVar(&opts.detail, "detail", string(render.DetailSummary), "summary (stages, the trunk and the busiest edges) or full (every state and transition)")
	bindLayoutTimeout(f, &opts.layoutTimeout)
	return cmd
}

// defaultLayoutTimeout is --layout-timeout's default: a picture fsmine
// lays out in more than two minutes is no picture to review (the real logs'
// pictures in full take 2 seconds at most; see docs/diff-stats-report-render.md).
const defaultLayoutTimeout = 2 * time.Minute

func bindLayoutTimeout(f *pflag.FlagSet, d *time.Duration) {
	f.DurationVar(d, "layout-timeout", defaultLayoutTimeout, "stop a picture's layout that takes longer than this (0: no limit)")
}

func checkLayoutTimeout(d time.Duration) error {
	if d < 0 {
		return usagef("--layout-timeout %v: want a duration of 0 or more", d)
	}
	return nil
}

// formatByExt maps output file extensions to formats, for -o without
// --format.
var formatByExt = map[string]string{
	".dot":     "dot",
	".gv":      "dot",
	".svg":     "svg",
	".png":     "png",
	".mmd":     "mermaid",
	".mermaid": "mermaid",
	".scxml":   "scxml",
	".json":    "xstate",
	".py":      "langgraph",
}

func runRender(_ context.Context, opts *renderOptions, streams IO) error {
	format := opts.format
	if !opts.formatSet && opts.output != "-" {
		ext := strings.ToLower(filepath.Ext(opts.output))
		f, ok := formatByExt[ext]
		switch {
		case ok:
			format = f
		case ext != "":
			// -o map.pdf is a request for a PDF, not for DOT in a file so
			// named; a name without an extension gets the default.
			return usagef("-o %s: fsmine writes no %s; name the file .dot .gv .svg .png .mmd .mermaid .scxml .json or .py, or give --format", opts.output, ext)
		}
	}
	write, ok := render.Formats[format]
	if !ok {
		return usagef("unknown format %q: want one of %s", format, strings.Join(render.FormatNames(), ", "))
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
	if opts.failures && format != "dot" && format != "svg" && format != "png" {
		return usagef("--failures colours pictures: want --format dot, svg or png, not %s", format)
	}
	if opts.failures && detail != render.DetailFull {
		return usagef("--failures colours every transition: add --detail full")
	}
	// The summary map draws stages and its busiest edges: both flags shape
	// the picture in full only.
	if opts.hideRare && detail != render.DetailFull {
		return usagef("--hide-rare leaves rare transitions out of the picture in full: add --detail full")
	}
	if opts.clusterSep != "" && (detail != render.DetailFull || format != "dot" && format != "svg" && format != "png") {
		return usagef("--cluster groups the states of a picture in full: add --detail full, with --format dot, svg or png")
	}
	if opts.hideRare && format != "dot" && format != "svg" && format != "png" && format != "mermaid" {
		return usagef("--hide-rare leaves rare transitions out of pictures (dot, svg, png, mermaid); %s keeps every transition", format)
	}
	if format == "png" && opts.output == "-" && streams.IsTTY {
		return usagef("not writing PNG to a terminal: use -o FILE or redirect standard output")
	}

	if err := checkOutputs([]string{opts.model}, [][2]string{{"--output", opts.output}}); err != nil {
		return err
	}
	var m *automaton.Model
	if opts.model == "-" {
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
	if m, err = pickMap(m, opts.model, opts.mapValue, streams.Err); err != nil {
		return err
	}
	if opts.failures && (m.Source.Outcome == nil || m.Source.Outcome.Sessions == 0) {
		return fmt.Errorf("%s: --failures: %w", opts.model, render.ErrNoOutcomes)
	}

	ropt := render.Options{HideRare: opts.hideRare, ClusterSep: opts.clusterSep, Title: opts.title, Engine: engine, Detail: detail, Failures: opts.failures, Timeout: opts.layoutTimeout}
	if opts.output == "-" {
		return write(streams.Out, m, ropt)
	}
	if err := atomicfile.Write(opts.output, func(w io.Writer) error { return write(w, m, ropt) }); err != nil {
		return fmt.Errorf("writing %s: %w", opts.output, err)
	}
	return nil
}

// detailOf checks a --detail value; empty means the default, summary.
func detailOf(s string) (render.Detail, error) {
	if s == "" {
		return render.DetailSummary, nil
	}
	for _, d := range render.Details {
		if string(d) == s {
			return d, nil
		}
	}
	return "", usagef("unknown --detail %q: want summary or full", s)
}
