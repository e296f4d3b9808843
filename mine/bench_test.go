package mine

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
)

// benchLog writes n sessions of a returns-like flow (retries, a rare
// escalation, repeated lookups) as JSONL records, interleaved as a shipper
// writes them, from a fixed seed.
func benchLog(sessions int) (data []byte, events int) {
	rng := rand.New(rand.NewPCG(1, 2))
	stages := []string{"greet", "identify_customer", "verify_identity", "lookup_order", "check_eligibility",
		"collect_return_reason", "collect_input", "validate_input", "create_return_label", "issue_refund", "close"}
	type rec struct {
		s, step int
		node    string
		event   string
	}
	var recs []rec
	for s := 0; s < sessions; s++ {
		step := 0
		add := func(node, ev string) { recs = append(recs, rec{s, step, node, ev}); step++ }
		for i, st := range stages {
			for rng.Float64() < 0.12 && i > 0 && i < 9 {
				add(st, "failed")
			}
			if rng.Float64() < 0.02 {
				add(st, "human_requested")
				add("escalate_to_human", "handed_off")
				break
			}
			add(st, "ok")
		}
	}
	// Interleave: sessions overlap in windows of 50.
	rng.Shuffle(len(recs), func(i, j int) {
		if recs[i].s/50 == recs[j].s/50 {
			recs[i], recs[j] = recs[j], recs[i]
		}
	})
	var b bytes.Buffer
	for i, r := range recs {
		fmt.Fprintf(&b, `{"session_id":"s-%06d","step":%d,"ts":"2026-01-05T10:%02d:%02d.%03dZ","node":%q,"event":%q,"duration_ms":%d,"model":"gpt-4o-mini","tokens":{"prompt":%d,"completion":%d}}`+"\n",
			r.s, r.step, (i/60000)%60, (i/1000)%60, i%1000, r.node, r.event, 100+i%900, 1000+i%500, 40+i%80)
	}
	return b.Bytes(), len(recs)
}

func benchInput(data []byte) []Input {
	return []Input{{Name: "bench.jsonl", Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }}}
}

// BenchmarkRead reads a log holding every session (what check and stats
// do) and streaming it into a tally of distinct paths (what build does).
func BenchmarkRead(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		data, events := benchLog(n)
		for _, stream := range []bool{false, true} {
			b.Run(fmt.Sprintf("sessions=%d/stream=%v", n, stream), func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					lg, err := Read(benchInput(data), ReadOptions{Stream: stream, Window: 1 << 16})
					if err != nil {
						b.Fatal(err)
					}
					if lg.Reread != "" {
						b.Fatal(lg.Reread)
					}
				}
				b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
			})
		}
	}
}

func BenchmarkBuild(b *testing.B) {
	data, events := benchLog(100000)
	lg, err := Read(benchInput(data), ReadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for _, merge := range Merges {
		for _, examples := range []int{0, DefaultExamples} {
			b.Run(fmt.Sprintf("merge=%s/examples=%d", merge, examples), func(b *testing.B) {
				o := DefaultOptions()
				o.Merge, o.Examples = merge, examples
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if _, err := Build(lg, o); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
			})
		}
	}
}

// BenchmarkAlergia measures the state merger alone against the size of the
// prefix tree (the number of distinct prefixes), on logs whose sessions are
// random walks of growing diversity: how its cost grows with the tree.
func BenchmarkAlergia(b *testing.B) {
	for _, sessions := range []int{1000, 4000, 16000, 64000} {
		data := diverseLog(sessions)
		lg, err := Read(benchInput(data), ReadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		bd := &builder{lg: lg, opt: DefaultOptions()}
		bd.startLabel = lg.intern("__start__")
		bd.variants()
		nodes := len(buildPTA(bd.vars, bd.startLabel, bd.lessMove).nodes)
		b.Run(fmt.Sprintf("prefixes=%d", nodes), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				p := buildPTA(bd.vars, bd.startLabel, bd.lessMove)
				learnAlergia(p, 0.01)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(nodes), "ns/prefix")
		})
	}
}

// diverseLog writes sessions that wander over 12 stages with retries, so
// that the number of distinct prefixes grows with the number of sessions.
func diverseLog(sessions int) []byte {
	rng := rand.New(rand.NewPCG(3, 4))
	var buf bytes.Buffer
	for s := 0; s < sessions; s++ {
		n := 3 + rng.IntN(15)
		st := 0
		for i := 0; i < n; i++ {
			switch r := rng.Float64(); {
			case r < 0.6:
				st = (st + 1) % 12
			case r < 0.8:
			default:
				st = rng.IntN(12)
			}
			ev := "ok"
			if rng.Float64() < 0.2 {
				ev = "failed"
			}
			fmt.Fprintf(&buf, `{"session_id":"d%06d","step":%d,"node":"stage%02d","event":%q}`+"\n", s, i, st, ev)
		}
	}
	return buf.Bytes()
}

// BenchmarkExamplesCost times what --examples adds to Build, apart from the
// merge it does not touch: tallying the sessions (keeping example ids at
// each distinct path) and walking the variants through the automaton
// (gathering them per state and transition), on the log of BenchmarkBuild.
func BenchmarkExamplesCost(b *testing.B) {
	data, events := benchLog(100000)
	lg, err := Read(benchInput(data), ReadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for _, examples := range []int{0, DefaultExamples} {
		b.Run(fmt.Sprintf("examples=%d", examples), func(b *testing.B) {
			o := DefaultOptions()
			o.Merge, o.Examples = MergeLabel, examples
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				bd := &builder{lg: lg, opt: o}
				bd.startLabel = lg.intern("__start__")
				bd.variants()
				bd.d = learnLabel(bd.vars, bd.startLabel)
				if err := bd.walk(); err != nil {
					b.Fatal(err)
				}
				bd.dwellDone() // the dwell sums run beside walk's caller
			}
			b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
	// The gathering alone, from a tally that kept its examples.
	o := DefaultOptions()
	o.Merge = MergeLabel
	bd := &builder{lg: lg, opt: o}
	bd.startLabel = lg.intern("__start__")
	bd.variants()
	bd.d = learnLabel(bd.vars, bd.startLabel)
	t := bd.tally
	state := make([]int32, len(t.nodes))
	for n := 1; n < len(t.nodes); n++ {
		state[n] = bd.d.next[dkey{state[t.nodes[n].parent], t.nodes[n].mv}]
	}
	// The tally alone, keeping examples or not.
	for _, keep := range []int{0, DefaultExamples} {
		b.Run(fmt.Sprintf("part=tally/examples=%d", keep), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				lg.tallySessions(keep)
			}
		})
	}
	b.Run(fmt.Sprintf("part=gather/nodes=%d", len(t.nodes)), func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			t.examples(state, len(bd.d.label), DefaultExamples)
		}
	})
}

// eventIDLog writes n/3 sessions of three steps over ten node names whose
// every event carries an id (a careless export): nearly n distinct events,
// each label ended by about n/10 of them.
func eventIDLog(n int) []byte {
	return idEventLog(n, 3, n, rand.NewPCG(5, 6))
}

// idEventLog writes n/steps sessions of steps steps over ten node names,
// each record's event an id drawn from values, with src's numbers.
func idEventLog(n, steps, values int, src rand.Source) []byte {
	rng := rand.New(src)
	var buf bytes.Buffer
	for s := 0; s < n/steps; s++ {
		for k := 0; k < steps; k++ {
			fmt.Fprintf(&buf, `{"session_id":"s%d","step":%d,"node":"tool_%d","event":"ev_%d"}`+"\n", s, k, rng.IntN(10), rng.IntN(values))
		}
	}
	return buf.Bytes()
}

// BenchmarkEventIDs builds logs whose events carry ids, with the label
// merge so that the generalisation's edits, not the merge, dominate: how
// the event edit's cost grows with the number of events of a label.
func BenchmarkEventIDs(b *testing.B) {
	for _, n := range []int{3000, 10000, 30000} {
		lg, err := Read(benchInput(eventIDLog(n)), ReadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			o := DefaultOptions()
			o.Merge = MergeLabel
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Build(lg, o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// frequentEventLog writes n/10 sessions of ten steps over ten node names
// whose events carry ids drawn from n/50 values: each label ends about
// n/50 events, each of them some five times, enough for the event edit's
// neutrality test to compare them pairwise.
func frequentEventLog(n int) []byte {
	return idEventLog(n, 10, n/50, rand.NewPCG(7, 8))
}

// BenchmarkFrequentEventIDs builds, with the default options, logs whose
// events carry ids each seen about five times after a label: how the
// neutrality test's cost grows with a label's frequent events.
func BenchmarkFrequentEventIDs(b *testing.B) {
	for _, n := range []int{10000, 30000, 100000} {
		lg, err := Read(benchInput(frequentEventLog(n)), ReadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("steps=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Build(lg, DefaultOptions()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
