package cmd

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	json "github.com/goccy/go-json"
	"github.com/spf13/pflag"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/internal/text"
	"github.com/fsmine/fsmine/mine"
)

// logFlags say how check, replay and stats read logs: by default as the
// model was built from them (its params.labels, params.fields,
// params.format and params.import); the flags override.
type logFlags struct {
	labels  string
	fields  []string
	from    string
	imports importFlags
	strict  bool
	quiet   bool
	// changed says whether a flag was given (nil: none was, as in tests
	// that fill the struct).
	changed func(name string) bool
}

func (lf *logFlags) bind(f *pflag.FlagSet) {
	f.StringVar(&lf.labels, "labels", "", "label rules `FILE` (default: the rules stored in the model)")
	f.StringArrayVar(&lf.fields, "field", nil, "read a record field from another path, `NAME=PATH` (repeatable; overrides the model's field map name by name)")
	f.StringVar(&lf.from, "from", "", "input format: "+strings.Join(mine.Formats(), ", ")+" (default: the model's)")
	f.BoolVar(&lf.strict, "strict", false, "fail on the first bad line instead of skipping and counting it")
	f.BoolVarP(&lf.quiet, "quiet", "q", false, "no progress line on a terminal")
	lf.imports.bindForModel(f)
	lf.changed = f.Changed
}

// readOptions returns the options that read logs for model m from path.
func (lf *logFlags) readOptions(m *automaton.Model, path string) (mine.ReadOptions, error) {
	ropt := mine.ReadOptions{Strict: lf.strict}
	flagFields, err := mine.ParseFieldMap(lf.fields)
	if err != nil {
		return ropt, usageError{err}
	}
	if ropt.Import, err = lf.imports.optionsOver(m.Params.Import, lf.changed); err != nil {
		return ropt, err
	}
	if err := mine.CheckFieldMap(m.Params.Fields); err != nil {
		return ropt, fmt.Errorf("%s: params.fields: %w", path, err)
	}
	if len(m.Params.Fields)+len(flagFields) > 0 {
		ropt.Fields = map[string]string{}
		for k, v := range m.Params.Fields {
			ropt.Fields[k] = v
		}
		for k, v := range flagFields {
			ropt.Fields[k] = v
		}
	}
	switch {
	case lf.labels != "":
		data, err := os.ReadFile(lf.labels)
		if err != nil {
			return ropt, err
		}
		if ropt.Rules, err = mine.ParseRules(data); err != nil {
			return ropt, fmt.Errorf("%s: %w", lf.labels, err)
		}
	case len(m.Params.Labels) > 0:
		if ropt.Rules, err = mine.ParseStoredRules(m.Params.Labels); err != nil {
			return ropt, fmt.Errorf("%s: params.labels: %w", path, err)
		}
	}
	ropt.Format = lf.from
	if ropt.Format == "" {
		ropt.Format = modelFormat(m)
	}
	if !slices.Contains(mine.Formats(), ropt.Format) {
		return ropt, usagef("unknown --from %q: want one of %s", ropt.Format, strings.Join(mine.Formats(), ", "))
	}
	return ropt, nil
}

// modelFormat is the input format a model was built from when it names one
// format this binary reads; otherwise (several formats joined with "+", an
// older model without one) the format is recognised by content.
func modelFormat(m *automaton.Model) string {
	f := m.Params.Format
	if f == "" || !slices.Contains(mine.Formats(), f) {
		return mine.FormatAuto
	}
	return f
}

// sessionSink takes the sessions of a streaming read with the given window
// as they finish (see mine.ReadOptions.Each); restart is called when the
// read starts over to hold every session, which then come in the Log's
// Sessions. A window of 0 holds every session.
type sessionSink struct {
	window  int
	each    func(*mine.Log, *mine.Session)
	restart func()
}

// readModelLogs loads the model at path and reads logs for it, holding
// every session.
func readModelLogs(path string, args []string, lf *logFlags, stdin io.Reader, streams IO) (*automaton.Model, *mine.Log, []mine.Input, mine.ReadOptions, error) {
	m, err := loadDiffModel(path)
	if err != nil {
		return nil, nil, nil, mine.ReadOptions{}, err
	}
	lg, inputs, ropt, err := readLogs(m, path, args, lf, stdin, streams, nil, "")
	return m, lg, inputs, ropt, err
}

// readLogs reads logs for model m, loaded from path. With a sink, files are
// read streaming into it (the Log holds no sessions, unless the read
// started over). With a session id (only), files and folders are read for
// that session alone (see mine.ReadOptions.Session), so that memory grows
// with the session, not the logs; should the session not be there, or have
// no step, they are read again whole, for the error to say what they hold.
// Standard input, which cannot be read twice, is read whole at once. A
// progress line is drawn on a terminal while the logs are read.
func readLogs(m *automaton.Model, path string, args []string, lf *logFlags, stdin io.Reader, streams IO, sink *sessionSink, only string) (*mine.Log, []mine.Input, mine.ReadOptions, error) {
	ropt, err := lf.readOptions(m, path)
	if err != nil {
		return nil, nil, ropt, err
	}
	inputs, err := expandInputs(args, stdin, ropt.Format)
	if err != nil {
		return nil, nil, ropt, err
	}
	switch {
	case sink == nil && only != "":
		// The read holds one session: the collector needs no tuning.
		ropt.Session = only
	case sink == nil:
		tuneGC(inputs)
	default:
		if err := streamReads(&ropt, inputs, sink.window, sink.restart); err != nil {
			return nil, nil, ropt, err
		}
		if ropt.Stream {
			ropt.Each = sink.each
		}
	}
	ropt.NoHash = true // checking records no provenance
	var done func()
	ropt.Progress, done = startProgress(streams, lf.quiet)
	lg, err := mine.Read(inputs, ropt)
	done()
	once := only != "" && !twiceReadable(inputs)
	if err == nil && once && len(lg.Sessions) == 0 && lg.Records > 0 && !slices.Contains(lg.EmptiedIDs, only) {
		// A stream is read once: its other sessions were counted as
		// records, not kept, and cannot be read again for their ids.
		return nil, nil, ropt, fmt.Errorf("session %q not found in %s (%d records read; a stream is read once and holds the session asked for alone: give a file to have its sessions' ids)", only, strings.Join(args, ", "), lg.Records)
	}
	if err == nil && ropt.Session != "" && len(lg.Sessions) == 0 && !once {
		ropt.Session = ""
		tuneGC(inputs)
		ropt.Progress, done = startProgress(streams, lf.quiet)
		lg, err = mine.Read(inputs, ropt)
		done()
	}
	ropt.Progress, ropt.Each, ropt.Reread, ropt.Session = nil, nil, nil, ""
	if err == nil && lg.NumSessions() == 0 && !(once && slices.Contains(lg.EmptiedIDs, only)) {
		err = noSessionsError(strings.Join(args, ", "), lg)
	}
	if err != nil && lf.from == "" && ropt.Format != mine.FormatAuto {
		// The format came from the model, not from the user.
		return nil, nil, ropt, fmt.Errorf("%w\n(read as %s, the format %s was built from; --from gives another)", err, ropt.Format, text.Terminal(path))
	}
	if err != nil {
		return nil, nil, ropt, err
	}
	return lg, inputs, ropt, nil
}

// writeJSON writes v as the reports' --format json does: indented, with
// no HTML escaping of ids and labels. go-json writes what encoding/json
// wrote for these reports on the real logs, but for a backspace or form
// feed in a string (\u0008 and \u000c, as model files have them, for \b and
// \f) and floats from 1e-10 to 1e-6 (e-07 for e-7): rare here, as check's
// shares and fitness are rounded to 6 decimals (a replayed transition's
// share or a --min-fit that small would show it).
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
