package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/internal/graphviz"
)

// ErrNoDot is returned (wrapped) by SVG and PNG with EngineDot when
// Graphviz's dot program is not on PATH.
var ErrNoDot = errors.New("graphviz's dot program is not on PATH (install Graphviz, or use the builtin engine)")

// SVG writes m as an SVG picture: the DOT of DOT, laid out by Graphviz's
// dot layout. With opt.Engine EngineBuiltin (or empty) that is Graphviz
// compiled to WebAssembly and run inside fsmine, so nothing needs to be
// installed and the output is the same on every machine; with EngineDot it
// is the dot program on PATH.
func SVG(w io.Writer, m *automaton.Model, opt Options) error {
	return layout(w, m, opt, "svg")
}

// PNG writes m as a PNG picture at 96 dpi, laid out as SVG is. The builtin
// engine paints Graphviz's layout itself with the Go fonts built into
// fsmine, so the image does not depend on the machine's fonts (Go's fonts
// cover Latin, Greek and Cyrillic; other scripts show as boxes: use SVG for
// them). EngineDot uses the dot program's own PNG renderer. A picture of
// more than 64 Mi pixels is refused: render SVG instead.
func PNG(w io.Writer, m *automaton.Model, opt Options) error {
	return layout(w, m, opt, "png")
}

// ErrTooTangled is returned (wrapped) by SVG and PNG with the builtin
// engine for a picture in full of more than MaxBuiltinTangle transitions
// beyond a path through its states.
var ErrTooTangled = errors.New("too tangled for the builtin engine to lay out")

// MaxBuiltinTangle is the most transitions beyond one into each state (the
// transitions less the states) that the builtin engine lays out. Graphviz's
// layout of a tangled graph can take minutes: every transition of the BPI
// 2012 model (813, of 161 states) ran past 120 seconds. A long chain,
// however long, is no tangle. Layout time does not follow the count alone
// (291 transitions of 99 states, a tangle of 192, ran past 400 seconds; 159
// of 55, 8 seconds): below the cap, Options.Timeout stops a long one.
const MaxBuiltinTangle = 2 * AutoDiagramLimit

// tangle is the number of transitions a picture of m in full draws, less
// its states.
func tangle(m *automaton.Model, hideRare bool) int {
	n := 0
	for _, t := range m.Transitions {
		if !hideRare || !t.Rare {
			n++
		}
	}
	return n - len(m.States)
}

// checkTangle refuses, with ErrTooTangled, a picture in full the builtin
// engine should not lay out. design says the model is a design without
// counts, which is always drawn in full and has no rare transitions.
func checkTangle(n int, design bool) error {
	if n <= MaxBuiltinTangle {
		return nil
	}
	advice := "draw the summary, leave rare transitions out, or lay the DOT out with Graphviz's dot program"
	if design {
		advice = "a design is drawn in full; lay its DOT out with Graphviz's dot program (--engine dot)"
	}
	return fmt.Errorf("%w: %d transitions beyond one into each state, more than %d (its layout can take many minutes); %s", ErrTooTangled, n, MaxBuiltinTangle, advice)
}

func layout(w io.Writer, m *automaton.Model, opt Options, format string) error {
	src, err := dotBytes(m, opt) // refuses a nil model
	if err != nil {
		return err
	}
	design := uncounted(m)
	full := opt.Detail != DetailSummary || design
	if opt.Engine.builtin() && full {
		if err := checkTangle(tangle(m, opt.HideRare), design); err != nil {
			return err
		}
	}
	out, err := layOut(src, format, opt, full)
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}

// layOut lays DOT source out in format with opt's engine and timeout. The
// builtin engine guards a picture in full; a summary draws at most a dozen
// boxes, laid out in well under a second, and runs unguarded, which is
// faster.
func layOut(src []byte, format string, opt Options, full bool) ([]byte, error) {
	switch opt.Engine {
	case "", EngineBuiltin:
		return layoutBuiltin(src, format, guard{on: full, timeout: opt.Timeout})
	case EngineDot:
		return layoutDot(src, format, opt.Timeout)
	}
	return nil, fmt.Errorf("unknown layout engine %q: want %s or %s", opt.Engine, EngineBuiltin, EngineDot)
}

// ErrLayoutTimeout is returned (wrapped) by SVG and PNG when a layout
// takes longer than Options.Timeout.
var ErrLayoutTimeout = errors.New("the layout took too long")

// guard says how a builtin layout runs. A guarded one (pictures in full)
// runs Graphviz's guarded code (graphviz.SetGuarded): it stops once
// timeout (if not zero) has passed, and a signal stops fsmine at once even
// while it runs, at 2.2 to 3.3 times the time of unguarded code
// (BenchmarkGuardedLayout; a picture in full of tau-bench airline's model,
// 0.75 s unguarded, 1.8 s guarded).
// Unguarded code runs to its end: a signal waits for it where the
// collector wants to stop the world, or where Go has one processor.
type guard struct {
	on      bool
	timeout time.Duration
}

func timeoutError(d time.Duration, builtin bool) error {
	also := ", or lay the DOT out with Graphviz's dot program"
	if !builtin {
		also = ""
	}
	return fmt.Errorf("%w: past %v (draw the summary, leave rare transitions out, or allow more time%s)", ErrLayoutTimeout, d, also)
}

// builtinMu serialises the builtin engine: go-graphviz runs one WebAssembly
// instance of Graphviz for the whole process. builtinSpoilt, under it,
// says that the instance rendered json since it was made: Graphviz 12.1.2's
// json renderer damages the instance's memory when a label holds a
// character outside ASCII ("·" in every caption), and the fifth or so
// picture after it read no graph or trapped. Such an instance is made
// anew before the next picture (about 0.04 s). A summary map is laid out in
// json before it is drawn, once per pass of untangle, and pays that each
// time.
var (
	builtinMu     sync.Mutex
	builtinSpoilt bool
)

// layoutBuiltin lays src out with Graphviz compiled to WebAssembly. SVG is
// Graphviz's own; PNG is drawn by drawPNG from Graphviz's json output.
func layoutBuiltin(src []byte, format string, g guard) ([]byte, error) {
	gvFormat := format
	if format == "png" {
		gvFormat = "json"
	}
	out, err := runBuiltin(src, gvFormat, g)
	if err != nil {
		return nil, err
	}
	if format == "png" {
		return drawPNG(out)
	}
	return out, nil
}

// readyBuiltin sees, under builtinMu, that the next graphviz.New gives an
// instance of the kind asked for (guarded or not) that can be used: one is
// made anew where the instance is spoilt, of the other kind, or closed (by
// a guarded call whose time ran out, even one that returned).
func readyBuiltin(guarded bool) {
	graphviz.SetGuarded(guarded) // for the instance made next, by New or Restart
	if made, kind, closed := graphviz.Instance(); made && (builtinSpoilt || kind != guarded || closed) {
		graphviz.Restart()
	}
	builtinSpoilt = false
}

// runBuiltin lays src out in format on an instance of the kind gd asks for.
func runBuiltin(src []byte, format string, gd guard) (out []byte, err error) {
	builtinMu.Lock()
	defer builtinMu.Unlock()
	readyBuiltin(gd.on)
	ctx := context.Background()
	if gd.on && gd.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, gd.timeout)
		defer cancel()
		defer func() {
			if err != nil && ctx.Err() != nil { // the instance is closed
				out, err = nil, timeoutError(gd.timeout, true)
			}
		}()
	}
	gv, err := graphviz.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("builtin graphviz: %w", err)
	}
	defer gv.Close()
	g, err := graphviz.ParseBytes(src)
	if err != nil {
		return nil, fmt.Errorf("builtin graphviz: reading the DOT: %w", err)
	}
	if g == nil { // go-graphviz's answer when Graphviz reads nothing and says nothing
		return nil, errors.New("builtin graphviz: reading the DOT: graphviz read no graph")
	}
	defer g.Close()
	if strings.HasPrefix(format, "json") || strings.HasSuffix(format, "_json") {
		builtinSpoilt = true
	}
	var buf bytes.Buffer
	if err := gv.Render(ctx, g, graphviz.Format(format), &buf); err != nil {
		return nil, fmt.Errorf("builtin graphviz: rendering %s: %w", format, err)
	}
	if buf.Len() == 0 {
		return nil, fmt.Errorf("builtin graphviz: rendering %s gave no output", format)
	}
	return buf.Bytes(), nil
}

// layoutDot lays src out with the dot program on PATH, killed past
// timeout unless that is zero.
func layoutDot(src []byte, format string, timeout time.Duration) ([]byte, error) {
	path, err := exec.LookPath("dot")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoDot, err)
	}
	ctx := context.Background()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, path, "-T"+format)
	cmd.Stdin = bytes.NewReader(src)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, timeoutError(timeout, false)
		}
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			return nil, fmt.Errorf("running %s: %w", path, err)
		}
		return nil, fmt.Errorf("running %s: %w: %s", path, err, msg)
	}
	return stdout.Bytes(), nil
}
