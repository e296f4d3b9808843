package mine

import "github.com/fsmine/fsmine/mine/formats"

// The importers live in package formats, with their registry; these names
// keep mine's API for reading logs in every format.

// Format is an input format (see formats.Format).
type Format = formats.Format

// ImportOptions say how the importers of event logs read them (see
// formats.ImportOptions).
type ImportOptions = formats.ImportOptions

// The formats' names (--from).
const (
	FormatAuto         = formats.FormatAuto
	FormatJSONL        = formats.FormatJSONL
	FormatCSV          = formats.FormatCSV
	FormatLangfuse     = formats.FormatLangfuse
	FormatLangSmith    = formats.FormatLangSmith
	FormatOpenAIAgents = formats.FormatOpenAIAgents
	FormatOTLP         = formats.FormatOTLP
	FormatPhoenix      = formats.FormatPhoenix
	FormatTau          = formats.FormatTau
	FormatXES          = formats.FormatXES
)

// The orders ImportOptions.Sort takes, and the lifecycle transitions
// ImportOptions.Lifecycle takes.
const (
	SortTime          = formats.SortTime
	SortFile          = formats.SortFile
	LifecycleAll      = formats.LifecycleAll
	LifecycleComplete = formats.LifecycleComplete
	LifecycleStart    = formats.LifecycleStart
)

// Formats lists the formats' names, FormatAuto first (see formats.Formats).
func Formats() []string { return formats.Formats() }

// DirInput returns the input of a folder in one of the formats that are
// folders (see formats.DirInput).
func DirInput(dir, format string) (Input, bool, error) { return formats.DirInput(dir, format) }

// importOptions are the options the importers get: Import, the fields
// that --field reads from elsewhere, and the longest line as the longest
// item of a span format.
func (o *ReadOptions) importOptions() ImportOptions {
	return o.Import.WithFields(o.Fields).WithMaxItem(o.maxLine())
}

// defaultMaxLine is the longest line a read takes unless told otherwise
// (ReadOptions.MaxLine).
const defaultMaxLine = 64 << 20

// maxLine is MaxLine, or its default of 64 MiB.
func (o *ReadOptions) maxLine() int {
	if o.MaxLine <= 0 {
		return defaultMaxLine
	}
	return o.MaxLine
}
