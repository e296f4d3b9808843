package render

import (
	"bytes"
	"fmt"
	"image/color"
	"image/png"
	"math"
	"strconv"
	"strings"

	"github.com/fogleman/gg"
	json "github.com/goccy/go-json"
	"github.com/golang/freetype/truetype"
	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/gobolditalic"
	"golang.org/x/image/font/gofont/goitalic"
	"golang.org/x/image/font/gofont/gomono"
	"golang.org/x/image/font/gofont/goregular"
)

// pngDPI is the resolution of PNG pictures, Graphviz's default for PNG.
const pngDPI = 96

// maxPNGPixels bounds the size of a PNG picture (4 bytes a pixel in
// memory); a model that needs more is better read as SVG.
const maxPNGPixels = 64 << 20

// The builtin engine draws PNG from Graphviz's "json" output: the layout
// with its drawing operations in xdot form (https://graphviz.org/docs/outputs/canon/#xdot),
// painted here with gg and the Go fonts. Graphviz compiled to WebAssembly
// has no raster renderer of its own, and go-graphviz's PNG renderer strokes
// nothing, so node outlines and edges go missing there.

// xdotGraph is the part of Graphviz's json output that draws.
type xdotGraph struct {
	BB          string       `json:"bb"`
	Draw        []xdotOp     `json:"_draw_"`
	LDraw       []xdotOp     `json:"_ldraw_"`
	SubgraphCnt int          `json:"_subgraph_cnt"`
	Objects     []xdotObject `json:"objects"`
	Edges       []xdotObject `json:"edges"`
}

type xdotObject struct {
	Draw   []xdotOp `json:"_draw_"`
	LDraw  []xdotOp `json:"_ldraw_"`
	HDraw  []xdotOp `json:"_hdraw_"`
	TDraw  []xdotOp `json:"_tdraw_"`
	HLDraw []xdotOp `json:"_hldraw_"`
	TLDraw []xdotOp `json:"_tldraw_"`
}

type xdotOp struct {
	Op       string       `json:"op"`
	Color    string       `json:"color"`
	Style    string       `json:"style"`
	Points   [][2]float64 `json:"points"`
	Rect     []float64    `json:"rect"`
	Pt       []float64    `json:"pt"`
	Align    string       `json:"align"`
	Text     string       `json:"text"`
	Size     float64      `json:"size"`
	Face     string       `json:"face"`
	Fontchar int          `json:"fontchar"`
}

// drawPNG paints Graphviz's json output as a PNG at pngDPI: white
// background, clusters, edges, then nodes.
func drawPNG(layout []byte) ([]byte, error) {
	var g xdotGraph
	if err := json.Unmarshal(layout, &g); err != nil {
		return nil, fmt.Errorf("reading graphviz's layout: %w", err)
	}
	var llx, lly, urx, ury float64
	if _, err := fmt.Sscanf(g.BB, "%g,%g,%g,%g", &llx, &lly, &urx, &ury); err != nil {
		return nil, fmt.Errorf("reading graphviz's layout: bounding box %q: %w", g.BB, err)
	}
	const pad = 4.0 // points, Graphviz's default pad
	s := pngDPI / 72.0
	w := int(math.Ceil((urx - llx + 2*pad) * s))
	h := int(math.Ceil((ury - lly + 2*pad) * s))
	if w <= 0 || h <= 0 || w*h > maxPNGPixels {
		return nil, fmt.Errorf("a %d×%d pixel PNG is too large: render SVG instead", w, h)
	}
	p := &painter{
		dc:    gg.NewContext(w, h),
		faces: make(map[faceKey]font.Face),
		scale: s,
		x0:    llx - pad,
		y0:    ury + pad,
	}
	p.dc.SetColor(color.White)
	p.dc.Clear()

	p.ops(g.Draw)
	p.ops(g.LDraw)
	n := min(max(g.SubgraphCnt, 0), len(g.Objects))
	for _, c := range g.Objects[:n] {
		p.ops(c.Draw)
		p.ops(c.LDraw)
	}
	for _, e := range g.Edges {
		for _, ops := range [][]xdotOp{e.Draw, e.TDraw, e.HDraw, e.LDraw, e.TLDraw, e.HLDraw} {
			p.ops(ops)
		}
	}
	for _, o := range g.Objects[n:] {
		p.ops(o.Draw)
		p.ops(o.LDraw)
	}
	if p.err != nil {
		return nil, p.err
	}
	// BestSpeed: most of a picture is white, and the default level takes
	// several times as long for files a few per cent smaller.
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, p.dc.Image()); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

type faceKey struct {
	face  string
	chars int
	size  float64
}

// painter paints xdot operations; coordinates are Graphviz points, y up.
type painter struct {
	dc     *gg.Context
	faces  map[faceKey]font.Face
	scale  float64
	x0, y0 float64 // the graph point at the image's top-left corner
	err    error
}

// pen is the drawing state of one list of operations, which xdot starts
// afresh for every attribute (_draw_, _ldraw_, ...).
type pen struct {
	color    color.Color
	fill     color.Color // nil until a C operation: nothing is filled
	width    float64
	dash     []float64
	invis    bool
	face     string
	size     float64
	fontchar int
}

func (p *painter) xy(x, y float64) (float64, float64) {
	return (x - p.x0) * p.scale, (p.y0 - y) * p.scale
}

func (p *painter) ops(ops []xdotOp) {
	st := pen{color: color.Black, width: 1, face: "Times-Roman", size: 14}
	for _, op := range ops {
		switch op.Op {
		case "c":
			st.color = parseColor(op.Color)
		case "C":
			st.fill = parseColor(op.Color)
		case "S":
			st.style(op.Style)
		case "F":
			st.face, st.size = op.Face, op.Size
		case "t":
			st.fontchar = op.Fontchar
		case "E", "e":
			if len(op.Rect) == 4 && !st.invis {
				cx, cy := p.xy(op.Rect[0], op.Rect[1])
				p.dc.NewSubPath()
				p.dc.DrawEllipse(cx, cy, op.Rect[2]*p.scale, op.Rect[3]*p.scale)
				p.paint(&st, op.Op == "E")
			}
		case "P", "p", "L":
			if len(op.Points) > 0 && !st.invis {
				p.dc.NewSubPath()
				for _, q := range op.Points {
					p.dc.LineTo(p.xy(q[0], q[1]))
				}
				if op.Op != "L" {
					p.dc.ClosePath()
				}
				p.paint(&st, op.Op == "P")
			}
		case "B", "b":
			if len(op.Points) > 0 && !st.invis {
				p.dc.NewSubPath()
				p.dc.MoveTo(p.xy(op.Points[0][0], op.Points[0][1]))
				for i := 1; i+2 < len(op.Points); i += 3 {
					x1, y1 := p.xy(op.Points[i][0], op.Points[i][1])
					x2, y2 := p.xy(op.Points[i+1][0], op.Points[i+1][1])
					x3, y3 := p.xy(op.Points[i+2][0], op.Points[i+2][1])
					p.dc.CubicTo(x1, y1, x2, y2, x3, y3)
				}
				p.paint(&st, op.Op == "b")
			}
		case "T":
			if len(op.Pt) == 2 && !st.invis {
				p.text(&st, op)
			}
		}
	}
}

// style applies an xdot style: dashed, dotted, solid, bold, invis or
// setlinewidth(n); others (filled, rounded, ...) only shaped the layout.
func (st *pen) style(s string) {
	switch {
	case s == "dashed":
		st.dash = []float64{5, 2}
	case s == "dotted":
		st.dash = []float64{1, 5}
	case s == "solid":
		st.dash = nil
	case s == "bold":
		st.width = 2
	case s == "invis" || s == "invisible":
		st.invis = true
	case strings.HasPrefix(s, "setlinewidth(") && strings.HasSuffix(s, ")"):
		if w, err := strconv.ParseFloat(s[len("setlinewidth("):len(s)-1], 64); err == nil && w >= 0 {
			st.width = w
		}
	}
}

// paint fills the current path, when filled and a fill colour has been
// set, then strokes it. Graphviz 12 marks edge splines and rounded boxes as
// filled without setting a fill colour: those are lines.
func (p *painter) paint(st *pen, filled bool) {
	if filled && st.fill != nil {
		p.dc.SetColor(st.fill)
		p.dc.FillPreserve()
	}
	p.dc.SetColor(st.color)
	p.dc.SetLineWidth(st.width * p.scale)
	dash := make([]float64, len(st.dash))
	for i, d := range st.dash {
		dash[i] = d * p.scale
	}
	p.dc.SetDash(dash...)
	p.dc.Stroke()
}

// text draws op's text with its baseline at op.Pt, aligned l, c or r.
func (p *painter) text(st *pen, op xdotOp) {
	face, err := p.face(st.face, st.fontchar, st.size*p.scale)
	if err != nil {
		if p.err == nil {
			p.err = err
		}
		return
	}
	x, y := p.xy(op.Pt[0], op.Pt[1])
	ax := 0.5
	switch op.Align {
	case "l":
		ax = 0
	case "r":
		ax = 1
	}
	p.dc.SetColor(st.color)
	p.dc.SetFontFace(face)
	p.dc.DrawStringAnchored(xdotText(op.Text), x, y, ax, 0)
}

// xdotText undoes the extra escaping of backslashes in the text of
// Graphviz 12's json output: a label a\b is drawn a\b in SVG but comes
// as a\\b (TestXDOTTextMatchesSVG keeps this honest).
func xdotText(s string) string {
	return strings.ReplaceAll(s, `\\`, `\`)
}

// face returns a Go font for a Graphviz font name and xdot font
// characteristics (1 bold, 2 italic) at size pixels: monospace for
// Courier-like names, bold and italic as the name or the flags say,
// regular otherwise. Go's fonts are built into fsmine, so the picture does
// not depend on the fonts of the machine.
func (p *painter) face(name string, chars int, size float64) (font.Face, error) {
	k := faceKey{name, chars, size}
	if f, ok := p.faces[k]; ok {
		return f, nil
	}
	lower := strings.ToLower(name)
	bold := chars&1 != 0 || strings.Contains(lower, "bold")
	italic := chars&2 != 0 || strings.Contains(lower, "italic") || strings.Contains(lower, "oblique")
	ttf := goregular.TTF
	switch {
	case strings.Contains(lower, "courier") || strings.Contains(lower, "mono"):
		ttf = gomono.TTF
	case bold && italic:
		ttf = gobolditalic.TTF
	case bold:
		ttf = gobold.TTF
	case italic:
		ttf = goitalic.TTF
	}
	ft, err := truetype.Parse(ttf)
	if err != nil {
		return nil, err
	}
	f := truetype.NewFace(ft, &truetype.Options{Size: size, DPI: 72, Hinting: font.HintingNone})
	p.faces[k] = f
	return f, nil
}

// parseColor reads an xdot colour: #rrggbb, #rrggbbaa, or a few names;
// anything else is black.
func parseColor(s string) color.Color {
	switch strings.ToLower(s) {
	case "white":
		return color.White
	case "transparent", "none", "invis":
		return color.Transparent
	}
	if len(s) == 7 || len(s) == 9 {
		if v, err := strconv.ParseUint(s[1:], 16, 32); err == nil && s[0] == '#' {
			if len(s) == 7 {
				return color.NRGBA{uint8(v >> 16), uint8(v >> 8), uint8(v), 0xff}
			}
			return color.NRGBA{uint8(v >> 24), uint8(v >> 16), uint8(v >> 8), uint8(v)}
		}
	}
	return color.Black
}
