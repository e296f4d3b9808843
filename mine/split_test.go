package mine

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// readCounter counts the Read calls on r, which fills each buffer it is
// given in one call (strings.Reader does): one per round of splitLinesFrom.
type readCounter struct {
	r     io.Reader
	calls int
}

func (c *readCounter) Read(p []byte) (int, error) {
	c.calls++
	return c.r.Read(p)
}

// TestSplitLinesLongLineGeometric: a line much longer than a chunk is read
// in a number of rounds logarithmic in its length, each copying what came
// before; growing the buffer by half a chunk a round read a 64 MiB line in
// 512 rounds, copying it each time (about 8 s).
func TestSplitLinesLongLineGeometric(t *testing.T) {
	const size = 16 << 20 // 128 chunks of 128 KiB
	long := strings.Repeat("x", size)
	in := &readCounter{r: strings.NewReader("a\n" + long + "\nb\n")}
	var got [][]byte
	var firsts []int
	err := splitLinesFrom(in, 64<<20, nil, func(first int, data []byte, _ []int) bool {
		got = append(got, bytes.Clone(data))
		firsts = append(firsts, first)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if joined := string(bytes.Join(got, nil)); joined != "a\n"+long+"\nb\n" {
		t.Fatalf("the chunks do not add up to the input (%d bytes, want %d)", len(joined), size+6)
	}
	// log2(16 MiB / 128 KiB) = 7 doublings, and a few rounds around them.
	if in.calls > 16 {
		t.Errorf("%d rounds of reading for a %d-byte line, want at most 16 (the buffer grows geometrically)", in.calls, size)
	}
	if firsts[0] != 1 || firsts[len(firsts)-1] > 3 {
		t.Errorf("first lines of the chunks = %v", firsts)
	}
	// The bound still holds.
	err = splitLinesFrom(strings.NewReader(long+"\n"), 1<<20, nil, func(int, []byte, []int) bool { return true })
	if !errors.Is(err, errLineTooLong) {
		t.Errorf("a line over the bound: %v, want errLineTooLong", err)
	}
}

// TestSplitLinesSkipsLongLines: a line longer than the bound is skipped,
// one bytes past it (a 100 MB line in 64 MiB was taken, as its end came in
// the buffer that doubled past the bound) or many (read through, not
// held): emit is given its newline alone in its place and its number, and
// the skipped bytes go to skipped, so that the two add up to the input.
func TestSplitLinesSkipsLongLines(t *testing.T) {
	const maxLine = 100
	mid := strings.Repeat("m", maxLine+1)    // found within a buffer
	huge := strings.Repeat("h", 3*chunkSize) // runs past the bound unread
	tests := []struct {
		name, in string
		long     []int
	}{
		{"within", "a\n" + mid + "\nb\n", []int{2}},
		{"at the bound", "a\n" + mid[1:] + "\nb\n", nil},
		{"past", "a\n" + huge + "\nb\n" + mid + "\n", []int{2, 4}},
		{"last, no newline", "a\n" + huge, []int{2}},
		{"first, then another", huge + "\n" + huge + "\nc", []int{1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var all, emitted, skipped bytes.Buffer
			var long []int
			lines := 0
			err := splitLinesFrom(strings.NewReader(tt.in), maxLine, writerFunc(func(p []byte) (int, error) {
				all.Write(p)
				return skipped.Write(p)
			}), func(first int, data []byte, l []int) bool {
				if first != lines+1 {
					t.Errorf("chunk from line %d, want %d", first, lines+1)
				}
				lines += bytes.Count(data, []byte{'\n'})
				all.Write(data)
				emitted.Write(data)
				long = append(long, l...)
				return true
			})
			if err != nil {
				t.Fatal(err)
			}
			if all.String() != tt.in {
				t.Errorf("emitted and skipped bytes (%d) are not the input's (%d)", all.Len(), len(tt.in))
			}
			if fmt.Sprint(long) != fmt.Sprint(tt.long) {
				t.Errorf("long lines %v, want %v", long, tt.long)
			}
			if strings.Contains(tt.in, huge) && strings.Contains(emitted.String(), huge[:maxLine+1]) {
				t.Errorf("a line past the bound was handed on (%d bytes emitted)", emitted.Len())
			}
		})
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
