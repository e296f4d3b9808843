package eval_test

import (
	"fmt"
	"io"
	"os"

	"github.com/fsmine/fsmine/mine"
	"github.com/fsmine/fsmine/mine/eval"
)

// Cross-validating two settings on the bundled sample: the share of
// held-out sessions each model accepts, and the share of perturbed ones it
// rejects.
func ExampleRun() {
	path := "../../testdata/returns.jsonl"
	lg, err := mine.Read([]mine.Input{{Name: path, Open: func() (io.ReadCloser, error) { return os.Open(path) }}}, mine.ReadOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	rep, err := eval.Run(lg, eval.Options{Folds: 5, Base: mine.DefaultOptions(), Settings: []eval.Setting{
		{Merge: mine.MergeAlergia, Alpha: 0.01, Generalize: mine.GeneralizeNone},
		{Merge: mine.MergeAlergia, Alpha: 0.01, Generalize: mine.GeneralizeAuto},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range rep.Results {
		fmt.Printf("%s: accepted %.3f, rejected %.3f\n", r.Name, r.Overall.Accepted, r.Overall.Rejected)
	}
	fmt.Println("recommended:", rep.Results[rep.Recommended].Name)
	// Output:
	// alergia alpha=0.01 generalize=none: accepted 0.978, rejected 0.964
	// alergia alpha=0.01 generalize=auto: accepted 0.980, rejected 0.941
	// recommended: alergia alpha=0.01 generalize=auto
}
