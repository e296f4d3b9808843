// Package text holds the small wording helpers every human-readable output
// of fsmine shares: counts with their noun, short digests, percentages,
// durations, numbers, moves ("a -[ev]-> b"), aligned tables, and the
// escaping of names for a terminal or a table cell. One rule each, so the
// terminal, Markdown and HTML say a thing the same way. It imports only
// the standard library, so any package of fsmine may use it.
package text

import (
	"math"
	"strconv"
	"strings"
)

// Count is n with its noun, adding an "s" unless n is 1: "1 state",
// "3 states".
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// CountForm is n with the singular or plural form given: "1 match",
// "2 matches".
func CountForm(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// Or lists words as alternatives: "a", "a or b", "a, b or c".
func Or(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// ShortDigest cuts a digest such as "sha256:66025c98d2…" to its algorithm
// and first 12 hex digits; anything without a colon, or already short, is
// returned as is.
func ShortDigest(d string) string {
	for i := 0; i < len(d); i++ {
		if d[i] == ':' {
			if len(d) > i+13 {
				return d[:i+13]
			}
			return d
		}
	}
	return d
}

// Percent shows a share in [0, 1] as a percentage with one decimal,
// "87.5%", but never rounds a share that is not 0 or 1 to "0.0%" or
// "100.0%": "<0.1%", ">99.9%".
func Percent(share float64) string { return PercentTo(share, 1) }

// PercentTo is Percent with the given number of decimals: with 2, "4.96%",
// "<0.01%", ">99.99%".
func PercentTo(share float64, decimals int) string {
	unit := math.Pow10(-decimals) // of the last decimal, in percent
	switch pc := 100 * share; {
	case pc > 0 && pc < unit/2:
		return "<" + strconv.FormatFloat(unit, 'f', decimals, 64) + "%"
	case pc < 100 && pc >= 100-unit/2:
		return ">" + strconv.FormatFloat(100-unit, 'f', decimals, 64) + "%"
	default:
		return strconv.FormatFloat(pc, 'f', decimals, 64) + "%"
	}
}

// Share is n/total, 0 when total is 0.
func Share(n, total int) float64 {
	if total == 0 {
		return 0
	}
	return float64(n) / float64(total)
}

// Duration shows milliseconds in the largest unit that keeps the number
// at least 1: "350 ms", "1.2 s", "4.5 min", "2.0 h", "3.1 d".
func Duration(ms float64) string {
	switch {
	case ms < 1000:
		return strconv.FormatFloat(ms, 'f', 0, 64) + " ms"
	case ms < 60e3:
		return strconv.FormatFloat(ms/1e3, 'f', 1, 64) + " s"
	case ms < 3600e3:
		return strconv.FormatFloat(ms/60e3, 'f', 1, 64) + " min"
	case ms < 86400e3:
		return strconv.FormatFloat(ms/3600e3, 'f', 1, 64) + " h"
	default:
		return strconv.FormatFloat(ms/86400e3, 'f', 1, 64) + " d"
	}
}

// Num shows a number without a fraction when it has none, else with one
// decimal: "3", "2.5".
func Num(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return strconv.FormatInt(int64(x), 10)
	}
	return strconv.FormatFloat(x, 'f', 1, 64)
}
