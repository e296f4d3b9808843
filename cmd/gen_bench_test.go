package cmd

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
	m, err := loadGenModel("", "returns")
	if err != nil {
		b.Fatal(err)
	}
	for _, drift := range []float64{0, 0.05} {
		b.Run(fmt.Sprintf("drift=%v", drift), func(b *testing.B) {
			const sessions = 10000
			newGen := func() *generator {
				g, err := newGenerator(m, genConfig{seed: 1, drift: drift, start: time.Unix(0, 0)})
				if err != nil {
					b.Fatal(err)
				}
				return g
			}
			var c lineCounter
			if err := newGen().write(context.Background(), &c, sessions); err != nil {
				b.Fatal(err)
			}
			g := newGen()
			b.ReportAllocs()
			b.SetBytes(c.bytes)
			b.ResetTimer()
			for b.Loop() {
				if err := g.write(context.Background(), io.Discard, sessions); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(c.lines)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
