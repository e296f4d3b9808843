package stages_test

import (
	"fmt"
	"io"
	"strings"

	"github.com/fsmine/fsmine/mine"
	"github.com/fsmine/fsmine/mine/stages"
)

// Suggest proposes rules for a log read without rules; JSON is the rules
// file that fsmine build --labels reads.
func ExampleSuggest() {
	var log strings.Builder
	for s := range 12 {
		find := "find_user_by_email"
		if s%3 == 0 {
			find = "find_user_by_phone"
		}
		act := []string{"cancel_order", "refund_order", "update_address"}[s%3]
		for i, node := range []string{"user_msg", find, "agent_msg", "get_order", "get_order", "user_msg", act} {
			fmt.Fprintf(&log, `{"session_id":"s%d","step":%d,"node":%q}`+"\n", s, i, node)
		}
	}
	lg, err := mine.Read([]mine.Input{{Name: "log.jsonl", Open: func() (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(log.String())), nil
	}}}, mine.ReadOptions{})
	if err != nil {
		panic(err)
	}
	s, err := stages.Suggest(lg, stages.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println("message turns:", strings.Join(s.Chat, ", "))
	for _, st := range s.Stages {
		fmt.Printf("%s [%s] fold=%v: %s\n", st.Name, st.Class, st.Fold, strings.Join(st.Nodes, ", "))
	}
	if _, err := mine.ParseRules(s.JSON()); err != nil {
		panic(err)
	}
	// Output:
	// message turns: agent_msg, user_msg
	// find_user [read] fold=false: find_user_by_email, find_user_by_phone
	// get_order [read] fold=true: get_order
	// cancel_order [act] fold=false: cancel_order
	// refund_order [act] fold=false: refund_order
	// update_address [act] fold=false: update_address
}
