package mine

import (
	"bytes"
	"errors"
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
	err := splitLinesFrom(in, 64<<20, func(first int, data []byte) bool {
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
	err = splitLinesFrom(strings.NewReader(long+"\n"), 1<<20, func(int, []byte) bool { return true })
	if !errors.Is(err, errLineTooLong) {
		t.Errorf("a line over the bound: %v, want errLineTooLong", err)
	}
}
