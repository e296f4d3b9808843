package mine

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Measures are numeric record fields (token counts, latencies) summed over
// the records that make up each visit of a log. A record that is not a
// visit of its own — folded into the visit before it, dropped by a label
// rule, a detour taken out of the flow — counts toward the visit before it
// in the session (toward the first visit when it comes before any), as its
// time counts toward that visit's dwell.
type Measures struct {
	// Paths are the dotted field paths measured, in the order asked.
	Paths []string
	// Found counts, per path, the records that carry a number there;
	// Unusable those that carry something else there (text, true, an
	// object, a negative number, or one above 1e290 such as 1e400), which
	// does not count: a caller says so. Measures are amounts (tokens,
	// cost, milliseconds), and none of their sums passes a float64.
	Found    []int
	Unusable []int
	// UnusableAt names, per path, where the first unusable value was
	// found, as file:line ("" where none was).
	UnusableAt []string

	vals [][]float64 // per session: visit*len(Paths) + path; NaN: no record had it
}

// maxMeasure is the largest value measured: a log holds fewer than 2^32
// records (errTooManyRecords), so no sum of its values, nor the sum
// rounded to 3 decimals (Round3 multiplies it by 1,000), passes a float64.
const maxMeasure = 1e290

// Value returns the sum of field p (an index into Paths) over the records
// of visit vi of session si (indexes into the Log's Sessions and their
// Visits), and whether any of those records carries the field as a number.
func (ms *Measures) Value(si, vi, p int) (float64, bool) {
	v := ms.vals[si][vi*len(ms.Paths)+p]
	return v, !math.IsNaN(v)
}

// measureRec is one record of a session, as Measure needs it to find the
// record's visit.
type measureRec struct {
	step, ts  int64
	pos       int64 // input index << 32 | line: the input order
	hash      uint64
	hasStep   bool
	hasTS     bool
	valOffset int // into the session's values
}

// Measure reads the inputs again, as Read read them into lg (opt must be
// the options Read was given, and inputs the same inputs in the same
// order), and sums the numbers found at paths over the records of each of
// lg's visits. A field that is absent, or not a JSON number from 0 to
// 1e290, does not count (Measures.Unusable counts the second kind). Bad lines are skipped as Read skipped them.
func Measure(inputs []Input, opt ReadOptions, lg *Log, paths []string) (*Measures, error) {
	if len(inputs) != len(lg.Files) {
		return nil, errors.New("measure: the inputs are not those the log was read from")
	}
	x, err := newExtractor(paths)
	if err != nil {
		return nil, fmt.Errorf("measure: %w", err)
	}
	ms := &Measures{Paths: paths, Found: make([]int, len(paths)), Unusable: make([]int, len(paths)), UnusableAt: make([]string, len(paths))}
	bySess := make(map[string]int, len(lg.Sessions))
	for i := range lg.Sessions {
		bySess[lg.Sessions[i].ID] = i
	}
	recs := make([][]measureRec, len(lg.Sessions))
	vals := make([][]float64, len(lg.Sessions))
	out := make([]value, len(paths))
	err = rereadRecords(inputs, opt, func(fi, n, at int, l []byte, r *rec) bool {
		si, ok := bySess[r.session]
		if !ok {
			return true // every record of the session was dropped
		}
		// A line the read took where a measure is ambiguous (a key given
		// twice) counts it as unusable; the others are read.
		var ae *ambiguousError
		if err := x.extract(l, out); err != nil && !errors.As(err, &ae) {
			return true
		}
		recs[si] = append(recs[si], measureRec{
			step: r.step, ts: r.ts, pos: int64(fi)<<32 | int64(n), hash: r.hash,
			hasStep: r.hasStep, hasTS: r.hasTS, valOffset: len(vals[si]),
		})
		for k, v := range out {
			f := math.NaN()
			if ae != nil && ambiguousUnder(ae.Paths, paths[k]) {
				v.kind = kindString // no value: unusable, below
			}
			switch v.kind {
			case kindMissing, kindNull:
			case kindNumber:
				if g, err := strconv.ParseFloat(string(v.raw), 64); err == nil && g >= 0 && g <= maxMeasure {
					f = g
					ms.Found[k]++
					break
				}
				fallthrough
			default:
				if ms.Unusable[k] == 0 {
					ms.UnusableAt[k] = inputs[fi].Name + ":" + strconv.Itoa(at)
				}
				ms.Unusable[k]++
			}
			vals[si] = append(vals[si], f)
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	ms.vals = make([][]float64, len(lg.Sessions))
	for si := range lg.Sessions {
		ms.vals[si] = sumVisits(&lg.Sessions[si], recs[si], vals[si], len(paths))
		recs[si], vals[si] = nil, nil
	}
	return ms, nil
}

// sumVisits orders a session's records as Read orders them, drops exact
// duplicates as Read drops them, and sums each record's values into the
// visit it belongs to.
func sumVisits(s *Session, recs []measureRec, vals []float64, np int) []float64 {
	allStep, allTS := true, true
	for i := range recs {
		allStep = allStep && recs[i].hasStep
		allTS = allTS && recs[i].hasTS
	}
	slices.SortStableFunc(recs, func(a, b measureRec) int {
		if allStep && a.step != b.step {
			return cmp64(a.step, b.step)
		}
		if allTS && a.ts != b.ts {
			return cmp64(a.ts, b.ts)
		}
		return cmp64(a.pos, b.pos)
	})
	starts := make(map[int64]int, len(s.Visits))
	for vi, v := range s.Visits {
		starts[int64(v.File)<<32|int64(v.Line)] = vi
	}
	sums := make([]float64, len(s.Visits)*np)
	for i := range sums {
		sums[i] = math.NaN()
	}
	cur := 0
	type dupKey struct {
		hash     uint64
		step, ts int64
	}
	if allStep || allTS {
		recs = dropDuplicates(recs, func(a, b *measureRec) bool {
			return (allStep && a.step == b.step) || (!allStep && a.ts == b.ts)
		}, func(r *measureRec) dupKey { return dupKey{r.hash, r.step, r.ts} }, nil)
	}
	for _, r := range recs {
		if vi, ok := starts[r.pos]; ok {
			cur = vi
		}
		for k := 0; k < np; k++ {
			f := vals[r.valOffset+k]
			if math.IsNaN(f) {
				continue
			}
			at := &sums[cur*np+k]
			if math.IsNaN(*at) {
				*at = 0
			}
			*at += f
		}
	}
	return sums
}
