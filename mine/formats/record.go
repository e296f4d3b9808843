package formats

import "io"

// Field names of fsmine's record format, the fields an importer writes.
const (
	FieldSession  = "session_id"
	FieldNode     = "node"
	FieldEvent    = "event"
	FieldStep     = "step"
	FieldTime     = "ts"
	FieldDuration = "duration_ms"
)

// Input is one log to read: a name for messages and the model's source list,
// and a function that opens it. Gzip-compressed input is recognised by its
// magic bytes and read transparently.
type Input struct {
	Name string
	Open func() (io.ReadCloser, error)
	// Format, when set, is this input's format whatever ReadOptions.Format
	// says (a folder, see DirInput, has the format of its files).
	Format string

	// Convert, when set, converts what Open gives instead of the format's
	// Convert (a folder, whose files the converter tells apart).
	Convert func(r io.Reader, w io.Writer, opt ImportOptions) error

	// Files, when set, lists the files Open reads (a folder's, see
	// DirInput), so that a command can refuse to write over one of them;
	// without it the input is the file Name alone.
	Files func() ([]string, error)
}

// MaxSeenText is how many bytes of attrs.seen a record keeps (the text a
// step brought into its session; see mine.LearnArgs).
const MaxSeenText = 64 << 10
