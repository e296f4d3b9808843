package cmd

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/internal/text"
)

func init() { register(newSealCmd) }

type sealOptions struct {
	model string
	out   string
}

func newSealCmd(streams IO) *cobra.Command {
	opts := &sealOptions{}
	c := &cobra.Command{
		Use:   "seal [flags] MODEL.json",
		Short: "Record an intended edit of a model: give it the digest of its content",
		Long: `Every command that reads a model checks that its digest is the digest of
its content (the states, transitions and loops the guard enforces; see the
model format), and refuses a model changed after it was mined: a loop's
max_iterations raised by hand enforces another cap under the old digest.

Seal accepts such a change as intended: the model gets the digest of its
content, and when that changes, it becomes the next version of the model it
was (parent: the old version and digest), created now by this fsmine. It
also gives a model of an earlier fsmine, whose digest did not cover loops,
visits and probabilities, a digest that does. The model is rewritten in
place (atomically) unless -o names another file.

Exit status: 0 ok (sealed, or already sealed); 2 trouble (unreadable or
invalid model, bad flags).`,
		Example: `  fsmine seal model.json
  fsmine seal edited.json -o v5.json`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("seal needs one MODEL.json")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.model = args[0]
			return runSeal(c.Context(), opts, streams)
		},
	}
	c.Flags().StringVarP(&opts.out, "output", "o", "", "write the sealed model to `FILE` (atomically; - is standard output) instead of over MODEL.json")
	return c
}

func runSeal(_ context.Context, opts *sealOptions, streams IO) error {
	f, err := os.Open(opts.model)
	if err != nil {
		return err
	}
	m, reordered, err := automaton.DecodeToSeal(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", opts.model, err)
	}
	out := opts.out
	if out == "" {
		out = opts.model
	}
	old := m.Digest
	changed, err := m.Seal()
	if err != nil {
		return fmt.Errorf("%s: %w", opts.model, err)
	}
	if !changed {
		fmt.Fprintf(streams.Err, "%s: v%d %s: the digest is its content's already\n", text.Terminal(opts.model), m.Version, m.Digest)
		if reordered {
			// The digest reads the transitions in order, so it held; the
			// file, out of order, is one no reader takes until written so.
			fmt.Fprintf(streams.Err, "%s: transitions put in the file's order\n", text.Terminal(out))
		} else if out == opts.model {
			return nil
		}
	} else {
		m.Generator, m.Created = "fsmine "+version+" seal", created()
	}
	if err := writeOutput(out, streams.Out, m.Write); err != nil {
		return err
	}
	if changed {
		from := "no digest"
		if old != "" {
			from = fmt.Sprintf("parent v%d %s", m.Parent.Version, old)
		}
		fmt.Fprintf(streams.Err, "%s: sealed as v%d %s (%s)\n", text.Terminal(out), m.Version, m.Digest, from)
	}
	return nil
}
