// Package cmd is fsmine's command line: cobra commands, flags, streams and
// exit codes. Each command lives in its own file as an options struct, a
// constructor that binds flags to it and a run function that tests call with
// in-memory streams.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"sync/atomic"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/fsmine/fsmine/internal/atomicfile"
)

// Exit codes, as diff(1): 0 ok, 1 something found (differences, deviations
// below the bar), 2 trouble (bad flags, unreadable input).
const (
	exitOK    = 0
	exitFound = 1
	exitError = 2
)

// IO carries a command's streams so that tests can run it in memory.
type IO struct {
	In     io.Reader
	Out    io.Writer
	Err    io.Writer
	IsTTY  bool // Out is a terminal
	ErrTTY bool // Err is a terminal
}

// errFound is returned by a command that ran well and found what it reports
// with exit status 1 (a diff with differences, a check below --min-fit or
// with a session that breaks an argument rule, a replay whose session
// deviates or breaks one).
var errFound = errors.New("found")

// usageError marks bad flags or arguments: usage is printed and the exit
// status is 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// Main runs fsmine with the process's arguments and streams and returns the
// exit status. SIGINT and SIGTERM stop it at once, as they would without a
// handler, but first remove the temporary files of the outputs being
// written; a command that stops gracefully on them (serve) says so with
// handleSignals.
func Main() int {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		for s := range sig {
			if signalsHandled.Load() {
				continue
			}
			atomicfile.RemoveTemps()
			code := 130 // 128 + SIGINT, as a shell reports it
			if s == syscall.SIGTERM {
				code = 143
			}
			os.Exit(code)
		}
	}()
	return Run(context.Background(), os.Args[1:], stdIO())
}

// signalsHandled is set by a command that handles SIGINT and SIGTERM
// itself, which Main then leaves to it.
var signalsHandled atomic.Bool

// handleSignals tells Main that the running command stops on SIGINT and
// SIGTERM by itself.
func handleSignals() { signalsHandled.Store(true) }

func stdIO() IO {
	return IO{
		In:     os.Stdin,
		Out:    os.Stdout,
		Err:    os.Stderr,
		IsTTY:  isTerminal(os.Stdout),
		ErrTTY: isTerminal(os.Stderr),
	}
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Run runs fsmine with args and the given streams and returns the exit status.
// Errors are printed once, here, as "fsmine: <message>".
func Run(ctx context.Context, args []string, streams IO) int {
	// Standard error carries only messages, and their ids, labels, session
	// ids and file names come from logs and models.
	streams.Err = termSafe(streams.Err)
	root := newRootCmd(streams)
	root.SetArgs(args)
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.Err)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	if errors.Is(err, errFound) {
		return exitFound
	}
	fmt.Fprintf(streams.Err, "fsmine: %v\n", err)
	var ue usageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		if cmd != nil {
			fmt.Fprintf(streams.Err, "\n%s", cmd.UsageString())
		}
	}
	return exitError
}

// isCobraUsage tells flag and argument errors that cobra itself produced.
func isCobraUsage(err error) bool {
	var fe *flagError
	return errors.As(err, &fe)
}

type flagError struct{ err error }

func (e *flagError) Error() string { return e.err.Error() }
func (e *flagError) Unwrap() error { return e.err }

func newRootCmd(streams IO) *cobra.Command {
	root := &cobra.Command{
		Use:   "fsmine",
		Short: "Mine agent trajectory logs into a reviewable, versioned state machine",
		Long: `fsmine turns the trajectory logs of LLM agents into a state machine that people
can review, version, diff, check new logs against, and enforce at run time.

Exit status: 0 ok; 1 found something (diff found differences; check fell
below --min-fit, or a session broke an argument rule; replay's session
deviates or breaks an argument rule); 2 trouble (bad flags, unreadable
input); 130 and 143 interrupted by SIGINT and SIGTERM (the temporary files
of outputs being written are removed; serve stops gracefully, with 0).`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Version:       version,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &flagError{err} })
	var cpuProfile string
	var stopProfile func()
	root.PersistentFlags().StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile to `FILE` (for go tool pprof)")
	root.PersistentFlags().MarkHidden("cpuprofile")
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		if cpuProfile == "" {
			return nil
		}
		f, err := os.Create(cpuProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return err
		}
		stopProfile = func() { pprof.StopCPUProfile(); f.Close() }
		return nil
	}
	root.PersistentPostRun = func(*cobra.Command, []string) {
		if stopProfile != nil {
			stopProfile()
		}
	}
	for _, add := range commands {
		root.AddCommand(add(streams))
	}
	return root
}

// commands holds the constructors of fsmine's subcommands; each command's
// file registers itself in an init function.
var commands []func(IO) *cobra.Command

func register(c func(IO) *cobra.Command) { commands = append(commands, c) }

// version is fsmine's version, written into every model's "generator".
var version = "0.1.0"
