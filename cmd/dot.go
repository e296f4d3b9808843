package cmd

import (
	"io"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/render"
)

// writeDOT writes the model's review diagram, drawn at detail, to path
// (atomically), or to stdout for "-".
func writeDOT(path string, stdout io.Writer, m *automaton.Model, detail render.Detail) error {
	return writeOutput(path, stdout, func(w io.Writer) error { return render.DOT(w, m, render.Options{Detail: detail}) })
}
