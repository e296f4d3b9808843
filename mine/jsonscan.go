package mine

// A single-pass JSON scanner that validates a whole line and pulls out the
// values at a fixed set of dotted paths, so that the record parser does not
// decode every field of every line of a log into a struct. The wanted paths
// form a trie; the scanner descends (recursively) only into subtrees the
// trie names and skips everything else with an iterative loop that still
// checks the JSON grammar. Validity agrees with encoding/json.Valid,
// including its nesting limit, so a line is rejected here exactly when the
// standard library would reject it.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth is the deepest nesting of objects and arrays that extract accepts
// (the top-level object counts as 1). It is encoding/json's limit.
const maxDepth = 10000

// valueKind is the JSON type of an extracted value.
type valueKind uint8

const (
	kindMissing valueKind = iota // the path is absent from the line
	kindString
	kindNumber
	kindBool
	kindNull
	kindObject
	kindArray
)

var kindNames = [...]string{"missing", "string", "number", "bool", "null", "object", "array"}

func (k valueKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// value is one extracted value. For a string, raw holds the unescaped bytes
// (without quotes); for a number, bool or null, the literal as written; for
// an object or array, its raw JSON text from the opening to the closing
// bracket. raw is nil for kindMissing.
type value struct {
	kind valueKind
	high bool // a string that may hold bytes at or above 0x80 (scanStringHigh)
	raw  []byte
}

// syntaxError reports invalid JSON: Offset is the index in the line of the
// offending byte, or the line's length when the input ended too soon.
type syntaxError struct {
	Offset int
	Msg    string
}

func (e *syntaxError) Error() string {
	return "invalid JSON at byte " + strconv.Itoa(e.Offset) + ": " + e.Msg
}

// ambiguousError reports JSON whose grammar is sound but whose meaning is
// not one: a wanted key given twice in one object (encoding/json keeps the
// last, other readers the first), or a wanted string holding a lone UTF-16
// surrogate escape (no character; decoders make it U+FFFD, so that two
// different ids would read as one).
type ambiguousError struct {
	Offset int
	Msg    string
	// Paths are the wanted paths the line makes ambiguous, the first the
	// one Msg names.
	Paths []string
}

// ambiguous records that the line makes path ambiguous: the first time, as
// the line's error (at offset off, said by msg), and after it among Paths.
func (x *extractor) ambiguous(off int, path, msg string) {
	if x.amb == nil {
		x.amb = &ambiguousError{Offset: off, Msg: msg}
	}
	if !slices.Contains(x.amb.Paths, path) {
		x.amb.Paths = append(x.amb.Paths, path)
	}
}

// ambiguousUnder reports whether a path at or under one of paths is path.
func ambiguousUnder(paths []string, path string) bool {
	for _, p := range paths {
		if path == p || strings.HasPrefix(path, p+".") {
			return true
		}
	}
	return false
}

func (e *ambiguousError) Error() string {
	return e.Msg + " (at byte " + strconv.Itoa(e.Offset) + ")"
}

// pathNode is a node of the trie of wanted paths; the root stands for the
// top-level object.
type pathNode struct {
	seg      string
	path     string // the wanted path to here, for messages
	seen     uint64 // the extractor's line count when the line last gave this key
	index    int    // the array index seg names, or -1
	maxIndex int    // the largest index among children, or -1
	children []*pathNode
	byKey    map[string]*pathNode // children by segment, when there are many
	slots    []int                // out indexes of the paths ending here
	under    []int                // out indexes of the paths ending here or below
}

// manyChildren is the child count from which a map beats a linear scan.
const manyChildren = 9

func (n *pathNode) child(key []byte) *pathNode {
	if n.byKey != nil {
		return n.byKey[string(key)]
	}
	for _, c := range n.children {
		if c.seg == string(key) {
			return c
		}
	}
	return nil
}

func (n *pathNode) element(k int) *pathNode {
	if k > n.maxIndex {
		return nil
	}
	for _, c := range n.children {
		if c.index == k {
			return c
		}
	}
	return nil
}

// extractor pulls the values at a fixed set of dotted paths out of one JSON
// object. A path's segments split on '.'; a segment matches an object key
// exactly, and a segment in canonical decimal form ("0", "12", not "012")
// also selects that element of an array. An extractor is not safe for
// concurrent use: give each goroutine its own.
type extractor struct {
	paths   []string
	root    *pathNode
	scratch []byte // unescaped string values of the current line
	key     []byte // the current object key, when it has escapes
	stack   []byte // open brackets while skipping a subtree
	line    uint64 // lines extracted, to tell a key given twice in one (pathNode.seen)
	// amb is the line's first ambiguity, returned once the whole line has
	// scanned as JSON (invalid JSON is reported as such first).
	amb *ambiguousError
}

// newExtractor compiles paths. It returns an error for an empty path or a
// path with an empty segment ("a..b", ".a", "a."). Repeated paths are
// allowed and each gets its own slot.
func newExtractor(paths []string) (*extractor, error) {
	root := &pathNode{index: -1, maxIndex: -1}
	for i, p := range paths {
		if p == "" {
			return nil, fmt.Errorf("invalid path %q: empty", p)
		}
		n := root
		for seg := range strings.SplitSeq(p, ".") {
			if seg == "" {
				return nil, fmt.Errorf("invalid path %q: empty segment", p)
			}
			c := n.childByName(seg)
			if c == nil {
				path := seg
				if n != root {
					path = n.path + "." + seg
				}
				c = &pathNode{seg: seg, path: path, index: arrayIndex(seg), maxIndex: -1}
				n.children = append(n.children, c)
				n.maxIndex = max(n.maxIndex, c.index)
			}
			c.under = append(c.under, i)
			n = c
		}
		n.slots = append(n.slots, i)
	}
	root.buildMaps()
	return &extractor{paths: append([]string(nil), paths...), root: root}, nil
}

func (n *pathNode) childByName(seg string) *pathNode {
	for _, c := range n.children {
		if c.seg == seg {
			return c
		}
	}
	return nil
}

// buildMaps builds the key maps of nodes with many children.
func (n *pathNode) buildMaps() {
	if len(n.children) >= manyChildren {
		n.byKey = make(map[string]*pathNode, len(n.children))
		for _, c := range n.children {
			n.byKey[c.seg] = c
		}
	}
	for _, c := range n.children {
		c.buildMaps()
	}
}

// arrayIndex returns the array index seg names in canonical decimal form, or
// -1.
func arrayIndex(seg string) int {
	if len(seg) > 9 || (len(seg) > 1 && seg[0] == '0') {
		return -1
	}
	k := 0
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		if c < '0' || c > '9' {
			return -1
		}
		k = k*10 + int(c-'0')
	}
	return k
}

// extract fills out[i] with the value at paths[i] (kindMissing where absent).
// It validates the whole line as JSON: a single object, optionally surrounded
// by whitespace, with nothing after it. For invalid input it returns a
// *syntaxError and out holds no meaningful values. A wanted key given twice
// in one object, or a wanted string holding a lone surrogate escape, is an
// *ambiguousError (other keys are not looked at). Byte slices in out
// alias line or the extractor's scratch buffer and are valid until the next
// call; extract does not modify line. It panics if len(out) < len(paths).
func (x *extractor) extract(line []byte, out []value) error {
	if len(out) < len(x.paths) {
		panic("mine: extract: out has fewer slots than paths")
	}
	clear(out[:len(x.paths)])
	x.scratch = x.scratch[:0]
	x.line++
	x.amb = nil
	i := skipSpace(line, 0)
	if i >= len(line) {
		return errEnd(line)
	}
	if line[i] != '{' {
		return &syntaxError{Offset: i, Msg: "expected object"}
	}
	var err error
	if len(x.root.children) == 0 {
		i, err = x.skip(line, i, 0)
	} else {
		i, err = x.object(line, i+1, x.root, 1, out)
	}
	if err != nil {
		return err
	}
	if i = skipSpace(line, i); i < len(line) {
		return errChar(line, i, "after top-level value")
	}
	if x.amb != nil {
		return x.amb
	}
	return nil
}

// object scans the members of an object whose '{' is at d[i-1]; n is the
// trie node of the object and depth its nesting depth. It returns the index
// after the closing '}'.
func (x *extractor) object(d []byte, i int, n *pathNode, depth int, out []value) (int, error) {
	if i = skipSpace(d, i); i >= len(d) {
		return i, errEnd(d)
	}
	if d[i] == '}' {
		return i + 1, nil
	}
	for {
		if d[i] != '"' {
			return i, errChar(d, i, "looking for beginning of object key string")
		}
		j, esc, err := scanString(d, i+1)
		if err != nil {
			return j, err
		}
		key := d[i+1 : j-1]
		if esc {
			x.key = appendUnescaped(x.key[:0], key)
			key = x.key
		}
		c := n.child(key)
		if i = skipSpace(d, j); i >= len(d) {
			return i, errEnd(d)
		}
		if d[i] != ':' {
			return i, errChar(d, i, "after object key")
		}
		i = skipSpace(d, i+1)
		if c != nil && c.seen == x.line {
			x.ambiguous(i, c.path, fmt.Sprintf("the key %q is given twice", c.path))
			c = nil // scanned for the line's syntax, and not kept
		}
		if c != nil {
			c.seen = x.line
			i, err = x.value(d, i, c, depth, out)
		} else {
			i, err = x.skip(d, i, depth)
		}
		if err != nil {
			return i, err
		}
		if i = skipSpace(d, i); i >= len(d) {
			return i, errEnd(d)
		}
		switch d[i] {
		case ',':
			if i = skipSpace(d, i+1); i >= len(d) {
				return i, errEnd(d)
			}
		case '}':
			return i + 1, nil
		default:
			return i, errChar(d, i, "after object key:value pair")
		}
	}
}

// array scans the elements of an array whose '[' is at d[i-1], like object.
func (x *extractor) array(d []byte, i int, n *pathNode, depth int, out []value) (int, error) {
	if i = skipSpace(d, i); i >= len(d) {
		return i, errEnd(d)
	}
	if d[i] == ']' {
		return i + 1, nil
	}
	for k := 0; ; k++ {
		var err error
		if c := n.element(k); c != nil {
			i, err = x.value(d, i, c, depth, out)
		} else {
			i, err = x.skip(d, i, depth)
		}
		if err != nil {
			return i, err
		}
		if i = skipSpace(d, i); i >= len(d) {
			return i, errEnd(d)
		}
		switch d[i] {
		case ',':
			i = skipSpace(d, i+1)
		case ']':
			return i + 1, nil
		default:
			return i, errChar(d, i, "after array element")
		}
	}
}

// value scans the value starting at d[i], which n (a wanted path node) names
// inside a container at nesting depth depth, and stores it in n's slots.
func (x *extractor) value(d []byte, i int, n *pathNode, depth int, out []value) (int, error) {
	if i >= len(d) {
		return i, errEnd(d)
	}
	start := i
	var kind valueKind
	var err error
	switch c := d[i]; {
	case c == '"':
		j, esc, high, err := scanStringHigh(d, i+1)
		if err != nil {
			return j, err
		}
		if len(n.slots) > 0 {
			s := d[i+1 : j-1 : j-1]
			if esc {
				k := len(x.scratch)
				var lone bool
				if x.scratch, lone = unescape(x.scratch, s); lone {
					x.ambiguous(i, n.path, fmt.Sprintf("%s holds a lone surrogate escape (\\uD800 to \\uDFFF without its pair), which is no character", n.path))
				}
				s = x.scratch[k:len(x.scratch):len(x.scratch)]
			}
			for _, k := range n.slots {
				out[k] = value{kind: kindString, raw: s, high: high}
			}
		}
		return j, nil
	case c == '{':
		kind = kindObject
		if len(n.children) == 0 {
			i, err = x.skip(d, i, depth)
		} else if depth >= maxDepth {
			return i, errDepth(i)
		} else {
			i, err = x.object(d, i+1, n, depth+1, out)
		}
	case c == '[':
		kind = kindArray
		if n.maxIndex < 0 {
			i, err = x.skip(d, i, depth)
		} else if depth >= maxDepth {
			return i, errDepth(i)
		} else {
			i, err = x.array(d, i+1, n, depth+1, out)
		}
	case c == 't':
		kind = kindBool
		i, err = scanLiteral(d, i, "true")
	case c == 'f':
		kind = kindBool
		i, err = scanLiteral(d, i, "false")
	case c == 'n':
		kind = kindNull
		i, err = scanLiteral(d, i, "null")
	case c == '-' || c >= '0' && c <= '9':
		kind = kindNumber
		i, err = scanNumber(d, i)
	default:
		return i, errChar(d, i, "looking for beginning of value")
	}
	if err != nil {
		return i, err
	}
	for _, k := range n.slots {
		out[k] = value{kind: kind, raw: d[start:i:i]}
	}
	return i, nil
}

// skip validates and steps over the value starting at d[i] inside a
// container at nesting depth depth, and returns the index after it.
func (x *extractor) skip(d []byte, i, depth int) (int, error) {
	if i >= len(d) {
		return i, errEnd(d)
	}
	switch c := d[i]; {
	case c == '"':
		j, _, err := scanString(d, i+1)
		return j, err
	case c == '{' || c == '[':
		return x.skipNested(d, i, depth)
	case c == 't':
		return scanLiteral(d, i, "true")
	case c == 'f':
		return scanLiteral(d, i, "false")
	case c == 'n':
		return scanLiteral(d, i, "null")
	case c == '-' || c >= '0' && c <= '9':
		return scanNumber(d, i)
	}
	return i, errChar(d, i, "looking for beginning of value")
}

// skipNested steps over the object or array opening at d[i] without
// recursion: x.stack holds the open brackets.
func (x *extractor) skipNested(d []byte, i, depth int) (int, error) {
	i, stack, err := skipBrackets(d, i, depth, x.stack[:0])
	x.stack = stack[:0]
	return i, err
}

// skipBrackets is the loop of skipNested; it returns stack for reuse.
func skipBrackets(d []byte, i, depth int, stack []byte) (int, []byte, error) {
	for {
		// d[i] starts a value.
		var err error
		switch c := d[i]; {
		case c == '"':
			i, _, err = scanString(d, i+1)
		case c == '{' || c == '[':
			if depth+len(stack) >= maxDepth {
				return i, stack, errDepth(i)
			}
			stack = append(stack, c)
			if i = skipSpace(d, i+1); i >= len(d) {
				return i, stack, errEnd(d)
			}
			if d[i] == c+2 { // '{'+2 == '}', '['+2 == ']'
				stack = stack[:len(stack)-1]
				i++
				break
			}
			if c == '{' {
				if i, err = skipKey(d, i); err != nil {
					return i, stack, err
				}
			}
			continue
		case c == 't':
			i, err = scanLiteral(d, i, "true")
		case c == 'f':
			i, err = scanLiteral(d, i, "false")
		case c == 'n':
			i, err = scanLiteral(d, i, "null")
		case c == '-' || c >= '0' && c <= '9':
			i, err = scanNumber(d, i)
		default:
			return i, stack, errChar(d, i, "looking for beginning of value")
		}
		if err != nil {
			return i, stack, err
		}
		// A value ended at d[i]: close brackets until another value starts.
		for {
			if len(stack) == 0 {
				return i, stack, nil
			}
			if i = skipSpace(d, i); i >= len(d) {
				return i, stack, errEnd(d)
			}
			open := stack[len(stack)-1]
			if d[i] == ',' {
				if i = skipSpace(d, i+1); i >= len(d) {
					return i, stack, errEnd(d)
				}
				if open == '{' {
					if i, err = skipKey(d, i); err != nil {
						return i, stack, err
					}
				}
				break
			}
			if d[i] == open+2 {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			if open == '{' {
				return i, stack, errChar(d, i, "after object key:value pair")
			}
			return i, stack, errChar(d, i, "after array element")
		}
	}
}

// skipKey steps over an object key at d[i], the colon after it and the
// whitespace around it, and returns the index of the member's value, which
// is within d.
func skipKey(d []byte, i int) (int, error) {
	if d[i] != '"' {
		return i, errChar(d, i, "looking for beginning of object key string")
	}
	i, _, err := scanString(d, i+1)
	if err != nil {
		return i, err
	}
	if i = skipSpace(d, i); i >= len(d) {
		return i, errEnd(d)
	}
	if d[i] != ':' {
		return i, errChar(d, i, "after object key")
	}
	if i = skipSpace(d, i+1); i >= len(d) {
		return i, errEnd(d)
	}
	return i, nil
}

func skipSpace(d []byte, i int) int {
	for i < len(d) {
		c := d[i]
		if c > ' ' || (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
			break
		}
		i++
	}
	return i
}

// SWAR constants: a byte of 1s, and the high bit of every byte.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// stopMask has the high bit set in the byte lanes of w that may end a run of
// plain string bytes: '"', '\\' or a control character. The lowest set bit
// is exact; lanes above it may be false positives from borrows. Flipping
// bit 1 maps '"' (0x22) to 0x20 and keeps control characters below 0x20, so
// one "less than 0x21" test finds both.
func stopMask(w uint64) uint64 {
	x := w ^ (lsb * 0x02)
	b := w ^ (lsb * '\\')
	return ((x-lsb*0x21)&^x | (b-lsb)&^b) & msb
}

// scanString validates the rest of a string whose opening quote is at
// d[i-1] and returns the index after its closing quote and whether it holds
// escapes. Bytes at or above 0x80 pass unchecked, as in encoding/json.
func scanString(d []byte, i int) (int, bool, error) {
	j, esc, _, err := scanStringHigh(d, i)
	return j, esc, err
}

// scanStringHigh is scanString that also says whether the string may hold
// a byte at or above 0x80, which only then need be checked for UTF-8 (it
// may say so of a string that holds none: the bytes after the closing
// quote in its last 8 count too).
func scanStringHigh(d []byte, i int) (int, bool, bool, error) {
	esc := false
	var seen uint64 // the bytes scanned, or'ed
	for {
		if i+8 <= len(d) {
			w := binary.LittleEndian.Uint64(d[i:])
			seen |= w
			m := stopMask(w)
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
		} else {
			for i < len(d) && d[i] >= ' ' && d[i] != '"' && d[i] != '\\' {
				seen |= uint64(d[i])
				i++
			}
			if i >= len(d) {
				return i, esc, seen&msb != 0, errEnd(d)
			}
		}
		switch c := d[i]; c {
		case '"':
			return i + 1, esc, seen&msb != 0, nil
		case '\\':
			esc = true
			if i++; i >= len(d) {
				return i, esc, false, errEnd(d)
			}
			switch d[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				for k := i + 1; k < i+5; k++ {
					if k >= len(d) {
						return k, esc, false, errEnd(d)
					}
					if !isHex(d[k]) {
						return k, esc, false, errChar(d, k, "in \\u hexadecimal character escape")
					}
				}
				i += 5
			default:
				return i, esc, false, errChar(d, i, "in string escape")
			}
		default:
			return i, esc, false, errChar(d, i, "in string literal")
		}
	}
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// scanNumber validates the number starting at d[i] (a '-' or a digit) per
// the JSON grammar and returns the index after it.
func scanNumber(d []byte, i int) (int, error) {
	if d[i] == '-' {
		if i++; i >= len(d) {
			return i, errEnd(d)
		}
	}
	switch c := d[i]; {
	case c == '0':
		i++
	case c >= '1' && c <= '9':
		i++
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	default:
		return i, errChar(d, i, "in numeric literal")
	}
	if i < len(d) && d[i] == '.' {
		if i++; i >= len(d) {
			return i, errEnd(d)
		}
		if !isDigit(d[i]) {
			return i, errChar(d, i, "after decimal point in numeric literal")
		}
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) {
			return i, errEnd(d)
		}
		if !isDigit(d[i]) {
			return i, errChar(d, i, "in exponent of numeric literal")
		}
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	}
	return i, nil
}

// scanLiteral validates the literal lit (true, false or null) whose first
// byte is at d[i] and returns the index after it.
func scanLiteral(d []byte, i int, lit string) (int, error) {
	if i+len(lit) <= len(d) && string(d[i:i+len(lit)]) == lit {
		return i + len(lit), nil
	}
	for k := 1; k < len(lit); k++ {
		if i+k >= len(d) {
			return i + k, errEnd(d)
		}
		if d[i+k] != lit[k] {
			return i + k, errChar(d, i+k, "in literal "+lit+" (expecting "+quoteChar(lit[k])+")")
		}
	}
	return i + len(lit), nil // unreachable: the fast path matched
}

// appendUnescaped appends the string content s (validated by scanString,
// without quotes) to dst with its escapes decoded as encoding/json does: a
// \u escape of a lone or mismatched surrogate becomes U+FFFD. Unlike
// encoding/json, invalid UTF-8 in s is copied as is.
func appendUnescaped(dst, s []byte) []byte {
	dst, _ = unescape(dst, s)
	return dst
}

// unescape is appendUnescaped, and reports whether s held a lone surrogate
// escape (made U+FFFD).
func unescape(dst, s []byte) ([]byte, bool) {
	lone := false
	for len(s) > 0 {
		k := bytes.IndexByte(s, '\\')
		if k < 0 {
			return append(dst, s...), lone
		}
		dst = append(dst, s[:k]...)
		s = s[k:]
		var c byte
		switch s[1] {
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		case 'u':
			r, n := hex4(s[2:6]), 6
			if utf16.IsSurrogate(r) {
				r = utf8.RuneError
				if len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
					if dec := utf16.DecodeRune(hex4(s[2:6]), hex4(s[8:12])); dec != utf8.RuneError {
						r, n = dec, 12
					}
				}
				lone = lone || r == utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
			s = s[n:]
			continue
		default: // '"', '\\', '/'
			c = s[1]
		}
		dst = append(dst, c)
		s = s[2:]
	}
	return dst, lone
}

// hex4 decodes four hexadecimal digits, which scanString has checked.
func hex4(h []byte) rune {
	var r rune
	for _, c := range h[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

//go:noinline
func errEnd(d []byte) error {
	return &syntaxError{Offset: len(d), Msg: "unexpected end of input"}
}

//go:noinline
func errChar(d []byte, i int, context string) error {
	return &syntaxError{Offset: i, Msg: "invalid character " + quoteChar(d[i]) + " " + context}
}

//go:noinline
func errDepth(i int) error {
	return &syntaxError{Offset: i, Msg: "exceeded max depth"}
}

// quoteChar formats c for an error message as encoding/json does, but shows
// a byte at or above 0x80 as a hex escape rather than a Latin-1 rune.
func quoteChar(c byte) string {
	switch c {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	s := strconv.Quote(string([]byte{c}))
	return "'" + s[1:len(s)-1] + "'"
}
