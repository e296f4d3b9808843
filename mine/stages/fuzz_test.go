package stages

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/mine"
	json "github.com/goccy/go-json"
)

// FuzzSuggest gives Suggest logs whose node names come from the fuzzer: it
// must not panic, and its rules must load and label every node as it says
// (Suggest checks that itself and fails if not).
func FuzzSuggest(f *testing.F) {
	f.Add("get_order_details\nget_user_details\nagent_msg\ncancel_order", uint8(0))
	f.Add("a.*b\n^x$\n$1\n(a|b)\nchat_msg\nChatOpenAI", uint8(3))
	f.Add("find_user_id_by_email\nfind_user_id_by_name_zip\n__end__\n__start__", uint8(1))
	f.Add("x\nx_\n_x\n\xff\xfe\n\u00e9_msg", uint8(2))
	f.Fuzz(func(t *testing.T, names string, stages uint8) {
		nodes := strings.Split(names, "\n")
		if len(nodes) > 12 {
			nodes = nodes[:12]
		}
		var b strings.Builder
		for s := range 20 {
			for i := range 6 {
				n := nodes[(s*7+i*(s%3+1))%len(nodes)]
				if n == "" {
					continue
				}
				q, _ := json.Marshal(n)
				fmt.Fprintf(&b, "{\"session_id\":\"s%d\",\"step\":%d,\"node\":%s}\n", s, i, q)
			}
		}
		data := b.String()
		lg, err := mine.Read([]mine.Input{{Name: "f.jsonl", Open: func() (io.ReadCloser, error) {
			return io.NopCloser(strings.NewReader(data)), nil
		}}}, mine.ReadOptions{}) // reserved names are bad lines, skipped
		if err != nil {
			t.Fatal(err)
		}
		var s *Suggestion
		s, err = Suggest(lg, Options{Stages: int(stages % 8)})
		if errors.Is(err, ErrOneNode) || errors.Is(err, mine.ErrNoSessions) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := mine.ParseRules(s.JSON()); err != nil {
			t.Fatal(err)
		}
	})
}
