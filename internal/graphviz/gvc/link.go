package gvc

import (
	_ "unsafe"

	"github.com/fsmine/fsmine/internal/graphviz/cdt"
	"github.com/fsmine/fsmine/internal/graphviz/cgraph"
	"github.com/fsmine/fsmine/internal/graphviz/internal/wasm"
)

//go:linkname toGraph github.com/fsmine/fsmine/internal/graphviz/cgraph.toGraph
func toGraph(*wasm.Graph) *cgraph.Graph

//go:linkname toGraphWasm github.com/fsmine/fsmine/internal/graphviz/cgraph.toGraphWasm
func toGraphWasm(*cgraph.Graph) *wasm.Graph

//go:linkname toNode github.com/fsmine/fsmine/internal/graphviz/cgraph.toNode
func toNode(*wasm.Node) *cgraph.Node

//go:linkname toEdge github.com/fsmine/fsmine/internal/graphviz/cgraph.toEdge
func toEdge(*wasm.Edge) *cgraph.Edge

//go:linkname toDictLink github.com/fsmine/fsmine/internal/graphviz/cdt.toLink
func toDictLink(*wasm.DictLink) *cdt.Link

//go:linkname toDictLinkWasm github.com/fsmine/fsmine/internal/graphviz/cdt.toLinkWasm
func toDictLinkWasm(*cdt.Link) *wasm.DictLink
