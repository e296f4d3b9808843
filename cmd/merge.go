package cmd

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fsmine/fsmine/mine"
)

func init() { register(newMergeCmd) }

type mergeOptions struct {
	partials []string
	model    modelOptions
}

func newMergeCmd(streams IO) *cobra.Command {
	opts := &mergeOptions{}
	c := &cobra.Command{
		Use:   "merge [flags] PARTIAL...",
		Short: "Build one model from the partial results of sharded builds",
		Long: `Merge combines partial results written by "fsmine build --partial" on shards
of a log and builds the model from them: the same model, with the same digest,
as one build over all the logs, when sessions do not cross shards. Shard by
session id; a session found in two shards is refused, naming it and both.
The shards must have been read with the same --labels, --field and import
options (--sort, --lifecycle, --classifier, --keep-spans).

Exit status: 0 ok; 2 trouble (unreadable or mismatched partials, a session
in two shards, bad flags).`,
		Example: `  fsmine build --partial shard-07.fsp logs/shard-07/*.jsonl
  fsmine merge shard-*.fsp -o model.json --dot model.dot`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("merge needs at least one PARTIAL file")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.partials = args
			if err := opts.model.idle(c.Flags().Changed); err != nil {
				return err
			}
			return runMerge(c.Context(), opts, streams)
		},
	}
	bindModelFlags(c.Flags(), &opts.model)
	return c
}

func runMerge(ctx context.Context, opts *mergeOptions, streams IO) error {
	if err := opts.model.prepare(); err != nil {
		return err
	}
	paths, err := expandPaths(opts.partials)
	if err != nil {
		return err
	}
	if err := checkOutputs(append([]string{opts.model.parent}, paths...), opts.model.outputs()); err != nil {
		return err
	}
	logs := make([]*mine.Log, 0, len(paths))
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		lg, err := mine.ReadPartial(f, p)
		f.Close()
		if err != nil {
			return err
		}
		logs = append(logs, lg)
	}
	lg, err := mine.MergeLogs(logs, paths)
	if err != nil {
		return err
	}
	if !opts.model.quiet {
		fmt.Fprintf(streams.Err, "merged %d partial results\n", len(paths))
	}
	return buildModel(lg, strings.Join(paths, ", "), &opts.model, streams)
}
