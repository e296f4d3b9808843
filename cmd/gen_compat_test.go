package cmd

import (
	"context"
	"io"
	"time"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/mine/gen"
)

// The tests of check, eval and the simulations sample logs through these
// names, which the generator had while it lived in cmd; they wrap mine/gen
// until those tests call it directly.

type genConfig struct {
	seed      uint64
	drift     float64
	start     time.Time
	truthAttr bool
}

type generator struct{ g *gen.Generator }

func newGenerator(m *automaton.Model, cfg genConfig) (*generator, error) {
	g, err := gen.New(m, gen.Options{Seed: cfg.seed, Drift: cfg.drift, Start: cfg.start, TruthAttr: cfg.truthAttr})
	if err != nil {
		return nil, err
	}
	return &generator{g}, nil
}

func (g *generator) write(ctx context.Context, w io.Writer, n int) error { return g.g.Write(ctx, w, n) }

func agentTruth() *automaton.Model { return gen.AgentTruth() }
