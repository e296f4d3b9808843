package render

import (
	"fmt"
	"math"

	json "github.com/goccy/go-json"

	"github.com/fsmine/fsmine/automaton"
)

// The screen a picture is read on: ScreenWidth × ScreenHeight pixels. A
// picture larger than that is read scaled down to fit it, and its labels
// with it.
const (
	ScreenWidth  = 1920
	ScreenHeight = 1200
)

// Legibility is what a picture's layout gives a reader, measured on
// Graphviz's layout of the builtin engine (the SVG and PNG pictures): its
// size, its smallest label once fitted to a screen, and how often its
// edges cross.
type Legibility struct {
	// Width and Height are the picture's size in pixels at 96 dpi (the
	// PNG's size; SVG says the same in points).
	Width, Height int
	// Scale is min(1, ScreenWidth/Width, ScreenHeight/Height): how much
	// the picture shrinks to fit a screen.
	Scale float64
	// MinFont is the smallest font of any text drawn, in pixels at 96
	// dpi; MinFontScaled is MinFont·Scale, its size on the screen.
	MinFont, MinFontScaled float64
	// Crossings counts the points where two drawn edges cross, outside
	// the boxes of the nodes (edges meet inside the nodes they join).
	Crossings int
}

// measured is a measured layout: its Legibility, and per line drawn the
// crossing points on it and its edge (an index into edgeIDs, the layout's
// edges' DOT ids).
type measured struct {
	Legibility
	lineCrossings, lineEdge []int
	edgeIDs                 []string
}

// MeasureLayout lays m out as SVG and PNG would under opt (with the
// builtin engine, whatever opt.Engine says) and measures the layout.
func MeasureLayout(m *automaton.Model, opt Options) (Legibility, error) {
	src, err := dotBytes(m, opt)
	if err != nil {
		return Legibility{}, err
	}
	out, err := runBuiltin(src, "json", guard{})
	if err != nil {
		return Legibility{}, err
	}
	l, err := measureLayout(out)
	return l.Legibility, err
}

// layoutObject is a node, cluster or edge of Graphviz's json output with
// what measureLayout reads of it.
type layoutObject struct {
	xdotObject
	ID     string `json:"id"`
	Pos    string `json:"pos"`
	Width  string `json:"width"`
	Height string `json:"height"`
}

type layoutGraph struct {
	xdotGraph
	Objects []layoutObject `json:"objects"`
	Edges   []layoutObject `json:"edges"`
}

// measureLayout measures a layout in Graphviz's json form. Its arithmetic
// rounds every product (explicit float64 conversions, which Go does not
// fuse into a multiply-add): which edges a summary draws depends on its
// crossings, and the same input must draw the same map on every machine.
func measureLayout(data []byte) (measured, error) {
	var g layoutGraph
	if err := json.Unmarshal(data, &g); err != nil {
		return measured{}, fmt.Errorf("reading graphviz's layout: %w", err)
	}
	var llx, lly, urx, ury float64
	if _, err := fmt.Sscanf(g.BB, "%g,%g,%g,%g", &llx, &lly, &urx, &ury); err != nil {
		return measured{}, fmt.Errorf("reading graphviz's layout: bounding box %q: %w", g.BB, err)
	}
	const pad = 4.0 // as drawPNG pads
	px := pngDPI / 72.0
	var l measured
	l.Width = int(math.Ceil((urx - llx + 2*pad) * px))
	l.Height = int(math.Ceil((ury - lly + 2*pad) * px))
	l.Scale = min(1, float64(ScreenWidth)/float64(l.Width), float64(ScreenHeight)/float64(l.Height))

	minFont := math.Inf(1)
	texts := func(ops []xdotOp) {
		size := 14.0 // Graphviz's default, until an F operation
		for _, op := range ops {
			switch op.Op {
			case "F":
				size = op.Size
			case "T":
				if op.Text != "" {
					minFont = min(minFont, size)
				}
			}
		}
	}
	texts(g.LDraw)
	var boxes []rect
	n := min(max(g.SubgraphCnt, 0), len(g.Objects))
	for i, o := range g.Objects {
		texts(o.LDraw)
		if i < n {
			continue // a cluster: edges cross its border freely
		}
		var x, y, w, h float64
		if _, err := fmt.Sscanf(o.Pos, "%g,%g", &x, &y); err != nil {
			continue // an invisible or unplaced object
		}
		fmt.Sscanf(o.Width, "%g", &w)
		fmt.Sscanf(o.Height, "%g", &h)
		w, h = float64(w*72)/2, float64(h*72)/2 // inches to points, halved
		boxes = append(boxes, rect{x - w, y - h, x + w, y + h})
	}
	var lines [][]point
	for i, e := range g.Edges {
		for _, ops := range [][]xdotOp{e.LDraw, e.HLDraw, e.TLDraw} {
			texts(ops)
		}
		for _, op := range e.Draw {
			if (op.Op == "b" || op.Op == "B") && len(op.Points) >= 4 {
				lines = append(lines, flatten(op.Points))
				l.lineEdge = append(l.lineEdge, i)
			}
		}
	}
	if !math.IsInf(minFont, 1) {
		l.MinFont = minFont * px
		l.MinFontScaled = l.MinFont * l.Scale
	}
	l.Crossings, l.lineCrossings = crossings(lines, boxes)
	l.edgeIDs = make([]string, len(g.Edges))
	for i, e := range g.Edges {
		l.edgeIDs[i] = e.ID
	}
	return l, nil
}

// edgeCrossings returns, per edge id (the DOT attribute id), the crossing
// points on that edge's line.
func (l measured) edgeCrossings() map[string]int {
	per := map[string]int{}
	for i, n := range l.lineCrossings {
		if id := l.edgeIDs[l.lineEdge[i]]; id != "" {
			per[id] += n
		}
	}
	return per
}

type point struct{ x, y float64 }

type rect struct{ x0, y0, x1, y1 float64 }

func (r rect) contains(p point) bool {
	return r.x0 <= p.x && p.x <= r.x1 && r.y0 <= p.y && p.y <= r.y1
}

// flatten turns a B-spline of cubic Bézier pieces (xdot's b operation:
// 1 + 3k control points) into a polyline of 16 segments a piece.
func flatten(ps [][2]float64) []point {
	const steps = 16
	out := []point{{ps[0][0], ps[0][1]}}
	for i := 1; i+2 < len(ps); i += 3 {
		p0, p1, p2, p3 := ps[i-1], ps[i], ps[i+1], ps[i+2]
		for k := 1; k <= steps; k++ {
			t := float64(k) / steps
			u := 1 - t
			a, b, c, d := float64(u*u)*u, float64(float64(3*u)*u)*t, float64(float64(3*u)*t)*t, float64(t*t)*t
			out = append(out, point{
				float64(a*p0[0]) + float64(b*p1[0]) + float64(c*p2[0]) + float64(d*p3[0]),
				float64(a*p0[1]) + float64(b*p1[1]) + float64(c*p2[1]) + float64(d*p3[1]),
			})
		}
	}
	return out
}

// crossings counts the points where two of lines cross outside every
// box, in all and per line. Crossings of one pair of lines closer than a
// few points together are one: two splines that touch tangentially may
// intersect at neighbouring segments.
func crossings(lines [][]point, boxes []rect) (int, []int) {
	const near = 3.0 // points
	n := 0
	per := make([]int, len(lines))
	for i := range lines {
		for j := i + 1; j < len(lines); j++ {
			var seen []point
			a, b := lines[i], lines[j]
			for p := 0; p+1 < len(a); p++ {
				for q := 0; q+1 < len(b); q++ {
					x, ok := intersect(a[p], a[p+1], b[q], b[q+1])
					if !ok || inAny(x, boxes) {
						continue
					}
					dup := false
					for _, s := range seen {
						if dx, dy := s.x-x.x, s.y-x.y; float64(dx*dx)+float64(dy*dy) < near*near {
							dup = true
							break
						}
					}
					if !dup {
						seen = append(seen, x)
					}
				}
			}
			n += len(seen)
			per[i] += len(seen)
			per[j] += len(seen)
		}
	}
	return n, per
}

func inAny(p point, boxes []rect) bool {
	for _, r := range boxes {
		if r.contains(p) {
			return true
		}
	}
	return false
}

// intersect returns where segments ab and cd cross, if they do; segments
// that are parallel or only touch at an end point do not cross.
func intersect(a, b, c, d point) (point, bool) {
	rx, ry := b.x-a.x, b.y-a.y
	sx, sy := d.x-c.x, d.y-c.y
	den := float64(rx*sy) - float64(ry*sx)
	if den == 0 {
		return point{}, false
	}
	t := (float64((c.x-a.x)*sy) - float64((c.y-a.y)*sx)) / den
	u := (float64((c.x-a.x)*ry) - float64((c.y-a.y)*rx)) / den
	if t <= 0 || t >= 1 || u <= 0 || u >= 1 {
		return point{}, false
	}
	return point{a.x + float64(t*rx), a.y + float64(t*ry)}, true
}
