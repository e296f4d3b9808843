package check

import (
	"sort"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/conform"
)

// MapCount is how many sessions one map of a conditioned model judged, and
// how many of them fit: Map is automaton.SharedMap or "by:" and a value
// (see automaton.Model.MapName).
type MapCount struct {
	Map      string `json:"map"`
	Sessions int    `json:"sessions"`
	Fit      int    `json:"fit"`
}

// byMaps picks each session's checker in a conditioned model.
type byMaps struct {
	m        *automaton.Model
	values   map[string]string
	checkers *conform.Checkers
}

// ConditionOn has the collector judge each session of a conditioned model
// m (see automaton.By) by the map of its value, values[session id] (see
// mine.SessionValues), with checkers made with opt; a session without a
// value, or whose value has no sub-map, is judged by the shared map, the
// collector's own checker, which must be m's. Each verdict then names its
// map and the summary counts the sessions of each (Summary.Maps). A model
// that is not conditioned leaves the collector as it is.
func (r *Collector) ConditionOn(m *automaton.Model, values map[string]string, opt conform.Options) {
	if m.By == nil {
		return
	}
	cs := conform.NewCheckers(opt)
	cs.Put(m, r.c)
	r.by = &byMaps{m: m, values: values, checkers: cs}
}

// checker returns the checker of session id and the name of its map.
func (b *byMaps) checker(id string) (*conform.Checker, string) {
	v, ok := b.values[id]
	if !ok {
		return b.checkers.For(b.m), automaton.SharedMap
	}
	return b.checkers.For(b.m.For(v)), b.m.MapName(v)
}

// mapCounts sums results by map, the shared map first, then by name.
func mapCounts(results []result) []MapCount {
	idx := map[string]int{}
	var out []MapCount
	for i := range results {
		res := &results[i]
		if res.mapName == "" {
			return nil
		}
		k, ok := idx[res.mapName]
		if !ok {
			k = len(out)
			idx[res.mapName] = k
			out = append(out, MapCount{Map: res.mapName})
		}
		out[k].Sessions++
		if res.place == nil {
			out[k].Fit++
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Map == automaton.SharedMap, out[j].Map == automaton.SharedMap
		if a != b {
			return a
		}
		return out[i].Map < out[j].Map
	})
	return out
}
