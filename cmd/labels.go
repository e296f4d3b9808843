package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fsmine/fsmine/internal/text"
	"github.com/fsmine/fsmine/mine"
	"github.com/fsmine/fsmine/mine/stages"
)

func init() { register(newLabelsCmd) }

func newLabelsCmd(streams IO) *cobra.Command {
	c := &cobra.Command{
		Use:   "labels",
		Short: "Work with label rules: suggest task stages for a log",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return usagef("labels needs a subcommand: suggest")
		},
	}
	c.AddCommand(newLabelsSuggestCmd(streams))
	return c
}

type labelsSuggestOptions struct {
	inputs []string
	input  inputFlags // no --labels
	stages int
	out    string
	quiet  bool
}

func newLabelsSuggestCmd(streams IO) *cobra.Command {
	opts := &labelsSuggestOptions{}
	c := &cobra.Command{
		Use:   "suggest [flags] LOG...",
		Short: "Propose label rules that turn node names into 5-12 task stages",
		Long: `Suggest reads trajectory logs (every format build reads, with the same
--from, --field, --sort, --lifecycle and --classifier) and proposes a label
rules file for "fsmine build --labels": message turns dropped (or made
detours), families of tool names and steps that always go together folded
into one stage, read-only steps kept apart from acting ones, and a stage
count between 5 and 12 (besides stages of failures, such as nothing_found,
which no merge to reach the count takes) unless --stages asks for another. Every rule carries
its reason in "why". The stages go to standard error; the rules to -o or
standard output.

Names that differ only in ids (tool_get_7, tool_get_12) are one node,
tool_get_*. Message turns are found by name (agent_msg, user_msg) and by
how they behave (in nearly every session, next to most other records), and
so is free text (next to every step, anywhere in the sessions). Steps on
different branches after one decision (a booking confirmed, nothing found)
are merged only when --stages forces it.

Exit status: 0 ok; 2 trouble (bad flags, unreadable input, a log without
sessions, with a single distinct node, or with more than ` + strconv.Itoa(stages.MaxNodes) + ` distinct
nodes once ids are folded).`,
		Example: `  fsmine labels suggest logs/*.jsonl -o rules.json
  fsmine labels suggest --stages 8 --from tau results.json -o rules.json
  fsmine build --labels rules.json logs/*.jsonl -o model.json`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("labels suggest needs at least one LOG (a file, a glob, or - for standard input)")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			if c.Flags().Changed("stages") && opts.stages <= 0 {
				return usagef("--stages %d: want 1 or more (leave it out to let fsmine choose %d-%d)",
					opts.stages, stages.MinStages, stages.MaxStages)
			}
			opts.inputs = args
			return runLabelsSuggest(c.Context(), opts, streams)
		},
	}
	f := c.Flags()
	f.StringVarP(&opts.out, "output", "o", "-", "write the rules JSON to `FILE` (atomically); - is standard output")
	f.IntVar(&opts.stages, "stages", 0, fmt.Sprintf("number of task stages `N` (default: chosen between %d and %d)", stages.MinStages, stages.MaxStages))
	opts.input.bind(f, false)
	f.BoolVarP(&opts.quiet, "quiet", "q", false, "no stage list on standard error")
	return c
}

func runLabelsSuggest(_ context.Context, opts *labelsSuggestOptions, streams IO) error {
	ropt, err := opts.input.readOptions()
	if err != nil {
		return err
	}
	ropt.NoHash = true // suggesting records no provenance
	if err := checkOutputs(opts.inputs, [][2]string{{"--output", opts.out}}); err != nil {
		return err
	}
	inputs, err := expandInputs(opts.inputs, streams.In, opts.input.from)
	if err != nil {
		return err
	}
	tuneGC(inputs)
	var done func()
	ropt.Progress, done = startProgress(streams, opts.quiet)
	lg, err := mine.Read(inputs, ropt)
	done()
	if err != nil {
		return err
	}
	what := strings.Join(opts.inputs, ", ")
	nodePath := mine.FieldNode
	if p, ok := ropt.Fields[mine.FieldNode]; ok {
		nodePath = p
	}
	s, err := stages.Suggest(lg, stages.Options{Stages: opts.stages, NodePath: nodePath})
	if err != nil {
		if errors.Is(err, mine.ErrNoSessions) {
			return noSessionsError(what, lg)
		}
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := writeOutput(opts.out, streams.Out, func(w io.Writer) error {
		_, err := w.Write(s.JSON())
		return err
	}); err != nil {
		return err
	}
	if !opts.quiet {
		printSuggestion(streams.Err, lg, s)
	}
	return nil
}

// printSuggestion lists the proposed stages, in the order of the flow.
func printSuggestion(w io.Writer, lg *mine.Log, s *stages.Suggestion) {
	fmt.Fprintf(w, "sessions %d, records %d (skipped %d): %d task nodes, %d message-turn nodes\n",
		len(lg.Sessions), lg.Records, lg.Skipped, s.TaskNodes, len(s.Chat))
	fmt.Fprintf(w, "%d stages, by position in the sessions:\n", len(s.Stages))
	for _, st := range s.Stages {
		var marks []string
		if st.Class != "" {
			marks = append(marks, st.Class)
		}
		if st.Fold {
			marks = append(marks, "fold")
		}
		if st.Detour {
			marks = append(marks, "detour")
		}
		mark := ""
		if len(marks) > 0 {
			mark = " [" + strings.Join(marks, ", ") + "]"
		}
		// Names are the log's: each escaped as a cell, so that a newline or
		// tab in one cannot make a line of its own.
		nodes := make([]string, len(st.Nodes))
		for i, n := range st.Nodes {
			nodes[i] = text.Cell(n)
		}
		fmt.Fprintf(w, "  %-28s %.2f %6d records%s: %s\n", text.Cell(st.Name), st.Position, st.Records, mark, strings.Join(nodes, ", "))
	}
	for _, note := range s.Notes {
		fmt.Fprintf(w, "note: %s\n", note)
	}
}
