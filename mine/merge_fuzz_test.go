package mine

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// FuzzMerges mines every merge from arbitrary sessions (each byte a step
// of one of five labels with one of three events, a zero byte ending a
// session) and wants a valid model that accepts every session it was mined
// from (generalize none: its paths are the sessions'), in the same bytes
// when mined again.
func FuzzMerges(f *testing.F) {
	f.Add([]byte("\x01\x02\x03\x00\x01\x02\x02\x03\x00\x04\x04\x04"))
	f.Add([]byte("\x01\x06\x01\x06\x01\x00\x02\x07\x02\x00\x01\x02"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4000 {
			return
		}
		var sessions []string
		for _, s := range bytes.Split(data, []byte{0}) {
			var steps []string
			for _, b := range s {
				steps = append(steps, fmt.Sprintf("l%d:%s", b%5, []string{"ok", "err", "x"}[b/5%3]))
			}
			if len(steps) > 0 {
				sessions = append(sessions, strings.Join(steps, " "))
			}
		}
		if len(sessions) == 0 {
			return
		}
		log := sessionsJSONL(sessions...)
		for _, merge := range Merges {
			for _, gen := range []string{GeneralizeNone, GeneralizeAuto} {
				o := DefaultOptions()
				o.Merge, o.Generalize = merge, gen
				lg, err := Read([]Input{strInput("fuzz.jsonl", log)}, ReadOptions{})
				if err != nil {
					t.Fatal(err)
				}
				m, err := Build(lg, o)
				if err != nil {
					t.Fatalf("%s/%s: %v", merge, gen, err)
				}
				if err := m.Validate(); err != nil {
					t.Fatalf("%s/%s: %v", merge, gen, err)
				}
				if gen == GeneralizeNone {
					for i := range lg.Sessions {
						if !m.Accepts(lg.Moves(&lg.Sessions[i])) {
							t.Fatalf("%s: the model does not accept session %d it was mined from", merge, i)
						}
					}
				}
				lg2, _ := Read([]Input{strInput("fuzz.jsonl", log)}, ReadOptions{})
				m2, err := Build(lg2, o)
				if err != nil {
					t.Fatal(err)
				}
				var a, b bytes.Buffer
				m.Created, m2.Created = "", ""
				if err := m.Write(&a); err != nil {
					t.Fatal(err)
				}
				if err := m2.Write(&b); err != nil {
					t.Fatal(err)
				}
				if a.String() != b.String() {
					t.Fatalf("%s/%s: two builds differ", merge, gen)
				}
			}
		}
	})
}
