// Package mine turns trajectory records into an automaton.Model. Read parses
// and labels JSONL records (in parallel, in input order) and groups them into
// sessions of visits to task stages; Build merges the sessions' move
// sequences into a compact deterministic automaton — a prefix tree folded by
// a state-merging strategy — and counts what sessions did in it: visits,
// transitions, dwell times, loops and their iterations, rare branches, the
// trunk and the variants. A streaming Read (ReadOptions.Stream) folds each
// session into a tally of distinct paths once it has gone idle, so that
// Build's memory grows with the distinct paths rather than with the log. It
// works on readers and values: no flags, no printing.
package mine
