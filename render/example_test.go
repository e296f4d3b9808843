package render_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/render"
)

// Two versions of a model compared and written as fsmine diff prints them
// (without colours): a header, the summary, the tests' level, and a section
// per kind of change.
func ExampleDiffText() {
	dir := filepath.Join("..", "automaton", "testdata", "diff")
	old, err := automaton.Load(filepath.Join(dir, "old.json"))
	if err != nil {
		fmt.Println(err)
		return
	}
	new, err := automaton.Load(filepath.Join(dir, "new.json"))
	if err != nil {
		fmt.Println(err)
		return
	}
	d := automaton.Compare(old, new, automaton.DiffOptions{})
	err = render.DiffText(os.Stdout, d, render.DiffTextOptions{OldFile: "old.json", NewFile: "new.json"})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// --- old.json  v3  sha256:e83be798f3ef  100 sessions
	// +++ new.json  v4  sha256:75865335c14e  100 sessions
	// 14 differences: 1 state added, 1 state removed, 2 transitions added, 3 transitions removed, 2 share changes, 2 outflow shifts, 1 rare flip, 1 loop changed, trunk changed
	// tested at alpha 0.01 (Bonferroni): 6 shared transitions (z-test, p < 0.00167), 3 states (chi-square, p < 0.00333)
	//
	// states
	//   + verify  (40 visits)
	//   - human  (5 visits)
	//
	// transitions
	//   + search -[ok]-> verify  40 (53.3%)
	//   + verify -[ok]-> answer  40 (100.0%)
	//   - answer -[handoff]-> human  5 (5.3%, rare)
	//   - human -[done]-> __end__  5 (100.0%, rare)
	//   - search -[ok]-> answer  75 (68.2%)
	//
	// share changes  (two-proportion z-test, p < 0.00167)
	//   ~ plan -[ok]-> answer  20.0% -> 50.0%  (20/100 -> 50/100)  z=+4.45  p=8.7e-06
	//   ~ plan -[ok]-> search  80.0% -> 50.0%  (80/100 -> 50/100)  z=-4.45  p=8.7e-06
	//
	// outflow shifts  (chi-square, p < 0.00333)
	//   ~ plan  chi2=19.78  df=1  p=8.7e-06  (outflow 100 -> 100)
	//   ~ search  chi2=114.60  df=3  p=1.1e-24  (outflow 110 -> 75)
	//
	// rare flips
	//   ~ search -[timeout]-> __end__  rare -> common  4.5% -> 13.3%  (5 -> 10, p=0.032)
	//
	// loops
	//   ~ {search} grew  max 4 -> 6, p95 2 -> 3
	//
	// trunk
	//   - plan > search > answer
	//   + plan > search > verify > answer
}
