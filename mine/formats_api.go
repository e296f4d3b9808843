package mine

import (
	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/mine/formats"
)

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

// ImportParams returns the options of o that are not the defaults, as a
// model records them (automaton.Params.Import): nil when all are. Seen is
// left out: argument rules ask for it whatever the model says.
func ImportParams(o ImportOptions) *automaton.Import {
	im := automaton.Import{Classifier: o.Classifier, KeepSpans: o.KeepSpans}
	if o.Sort == SortFile {
		im.Sort = o.Sort
	}
	if o.Lifecycle != LifecycleAll {
		im.Lifecycle = o.Lifecycle
	}
	if im == (automaton.Import{}) {
		return nil
	}
	return &im
}

// WithImportParams returns o with the options p records (see ImportParams)
// set, each as p has it or at its default.
func WithImportParams(o ImportOptions, p *automaton.Import) ImportOptions {
	o.Sort, o.Lifecycle, o.Classifier, o.KeepSpans = SortTime, LifecycleAll, "", false
	if p == nil {
		return o
	}
	if p.Sort != "" {
		o.Sort = p.Sort
	}
	if p.Lifecycle != "" {
		o.Lifecycle = p.Lifecycle
	}
	o.Classifier, o.KeepSpans = p.Classifier, p.KeepSpans
	return o
}

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
