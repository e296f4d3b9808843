package cmd

import (
	"io"

	"github.com/fsmine/fsmine/internal/text"
)

// termSafe returns a writer that shows the control characters of what is
// written through it as Go escapes (ESC as \x1b, DEL as \x7f, C1 controls
// as \u0080 ...), keeping newlines and tabs: text output carries ids, labels,
// events, session ids and file names from logs and models, whose escape
// sequences must not reach a terminal. Each Write must hold whole UTF-8
// characters, as fmt's writes do. Escapes written this way inside a JSON
// string read back as the same characters.
func termSafe(w io.Writer) io.Writer { return termWriter{w} }

type termWriter struct{ w io.Writer }

func (t termWriter) Write(p []byte) (int, error) {
	plain := true
	for _, c := range p {
		if (c < 0x20 || c >= 0x7f) && c != '\n' && c != '\t' {
			plain = false
			break
		}
	}
	if plain {
		return t.w.Write(p)
	}
	if _, err := t.w.Write([]byte(text.Terminal(string(p)))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// rawWriter is the writer under termSafe, for what writes its own
// terminal codes (the progress lines, which pass any text from inputs
// through text.Terminal); other writers as they are.
func rawWriter(w io.Writer) io.Writer {
	if t, ok := w.(termWriter); ok {
		return t.w
	}
	return w
}
