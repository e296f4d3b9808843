package cgraph

import (
	"context"
	"sync"

	"github.com/fsmine/fsmine/internal/graphviz/internal/wasm"
)

var (
	Directed         *Desc
	StrictDirected   *Desc
	UnDirected       *Desc
	StrictUnDirected *Desc
)

// Init instantiates Graphviz and sets the descriptors above, once; the
// package's exported functions and package gvc's call it first.
//
// fsmine patch: upstream does this in init (see wasm.Init).
func Init() {
	initOnce.Do(func() {
		wasm.Init()
		if err := setGlobalVars(context.Background()); err != nil {
			panic(err)
		}
	})
}

var initOnce sync.Once

// Restart makes Graphviz's instance anew (wasm.Restart) and sets the
// descriptors above in it. Graphs read or made before it must not be used
// after it.
//
// fsmine patch.
func Restart() {
	Init()
	wasm.Restart()
	if err := setGlobalVars(context.Background()); err != nil {
		panic(err)
	}
}

// SetGuarded chooses whether the instances made from now on check their
// context (wasm.SetGuarded); Restart makes one.
//
// fsmine patch.
func SetGuarded(on bool) { wasm.SetGuarded(on) }

// Instance says whether Graphviz's instance is made, whether it runs guarded
// code, and whether it is closed (wasm.Instance).
//
// fsmine patch.
func Instance() (made, guarded, closed bool) { return wasm.Instance() }

func setGlobalVars(ctx context.Context) error {
	// Set MAX to prevent outputting internally generated errors or warnings with agerr to the stderr.
	wasm.SetError(ctx, wasm.MAX)

	directed, err := wasm.NewGraphDescriptor(ctx)
	if err != nil {
		return err
	}
	directed.SetDirected(1)
	directed.SetMaingraph(1)

	strictDirected, err := wasm.NewGraphDescriptor(ctx)
	if err != nil {
		return err
	}
	strictDirected.SetDirected(1)
	strictDirected.SetStrict(1)
	strictDirected.SetMaingraph(1)

	undirected, err := wasm.NewGraphDescriptor(ctx)
	if err != nil {
		return err
	}
	undirected.SetMaingraph(1)

	strictUndirected, err := wasm.NewGraphDescriptor(ctx)
	if err != nil {
		return err
	}
	strictUndirected.SetStrict(1)
	strictUndirected.SetMaingraph(1)

	Directed = toDesc(directed)
	StrictDirected = toDesc(strictDirected)
	UnDirected = toDesc(undirected)
	StrictUnDirected = toDesc(strictUndirected)

	return nil
}
