package gen

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"
	"time"
)

// lineCounter counts the bytes and lines written to it.
type lineCounter struct{ bytes, lines int64 }

func (c *lineCounter) Write(p []byte) (int, error) {
	c.bytes += int64(len(p))
	c.lines += int64(bytes.Count(p, []byte{'\n'}))
	return len(p), nil
}

func BenchmarkGen(b *testing.B) {
	m := ReturnsTruth()
	for _, drift := range []float64{0, 0.05} {
		b.Run(fmt.Sprintf("drift=%v", drift), func(b *testing.B) {
			const sessions = 10000
			newGen := func() *Generator {
				g, err := New(m, Options{Seed: 1, Drift: drift, Start: time.Unix(0, 0)})
				if err != nil {
					b.Fatal(err)
				}
				return g
			}
			var c lineCounter
			if err := newGen().Write(context.Background(), &c, sessions); err != nil {
				b.Fatal(err)
			}
			g := newGen()
			b.ReportAllocs()
			b.SetBytes(c.bytes)
			b.ResetTimer()
			for b.Loop() {
				if err := g.Write(context.Background(), io.Discard, sessions); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(c.lines)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
