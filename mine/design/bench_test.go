package design_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/mine/design"
)

// BenchmarkReadSTAR reads STAR graphs of many keys that took time
// quadratic in the keys: words of the task's own, each leading to a node
// of its own (each word was tied to a question by a pass over every open
// node), info_missing2, info_missing3, ... all leading into one long
// branch (each walked it again), and each into a branch of its own that
// joins one long tail (each walked the tail to its end).
func BenchmarkReadSTAR(b *testing.B) {
	graphs := map[string]func(g *strings.Builder, keys int){
		"words": func(g *strings.Builder, keys int) {
			g.WriteString(`"hello":"a0"`)
			for i := range keys {
				fmt.Fprintf(g, `,"k%d":"t%d"`, i, i)
			}
		},
		"info_missing": func(g *strings.Builder, keys int) {
			g.WriteString(`"hello":"ask_pin","ask_pin":"query","info_missing":"n0"`)
			for i := range keys / 2 {
				fmt.Fprintf(g, `,"n%d":"n%d"`, i, i+1)
			}
			fmt.Fprintf(g, `,"n%d":"query"`, keys/2)
			for k := 2; k < keys/2; k++ {
				fmt.Fprintf(g, `,"info_missing%d":"n0"`, k)
			}
		},
		"branches": func(g *strings.Builder, keys int) {
			// info_missingK leads to sK, and every sK into one long tail
			g.WriteString(`"hello":"ask_pin","ask_pin":"m","m":"c0","info_missing":"s1"`)
			for i := range keys / 3 {
				fmt.Fprintf(g, `,"c%d":"c%d"`, i, i+1)
			}
			fmt.Fprintf(g, `,"c%d":"query"`, keys/3)
			for k := 1; k < keys/3; k++ {
				fmt.Fprintf(g, `,"s%d":"m"`, k)
				if k > 1 {
					fmt.Fprintf(g, `,"info_missing%d":"s%d"`, k, k)
				}
			}
		},
	}
	for _, kind := range []string{"words", "info_missing", "branches"} {
		for _, keys := range []int{1000, 4000, 16000} {
			var g strings.Builder
			g.WriteString(`{"graph":{`)
			graphs[kind](&g, keys)
			g.WriteString(`}}`)
			data := []byte(g.String())
			b.Run(fmt.Sprintf("graph=%s/keys=%d", kind, keys), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					if _, err := design.Read(data, design.Options{Path: "s.flow.json"}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
