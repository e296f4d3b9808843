package serve_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/serve"
)

// Example mounts the guard's handler on a test server and steps one
// session: into the model's first state, then along a transition the model
// lacks, which is denied with the moves it would allow.
func Example() {
	m, err := automaton.Load("../guard/testdata/returns.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := serve.New(m, nil, serve.DefaultConfig())
	if err != nil {
		fmt.Println(err)
		return
	}
	ts := httptest.NewServer(s.Handler())
	for _, body := range []string{
		`{"event": "", "next": "agent_msg"}`,
		`{"event": "agent", "next": "get_order_details"}`,
	} {
		resp, err := http.Post(ts.URL+"/v1/sessions/demo/steps", "application/json", strings.NewReader(body))
		if err != nil {
			fmt.Println(err)
			return
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Printf("%d %s", resp.StatusCode, answer)
	}
	ts.Close()
	if err := s.Close(); err != nil {
		fmt.Println(err)
	}
	fmt.Println(s.Stats().Decisions, "decisions")
	// Output:
	// 200 {"session_id":"demo","step":0,"allowed":true,"reason":"","state":"greet","label":"agent_msg","rare":false,"prob":1,"next_moves":[{"event":"agent","to":"find","label":"find_user_id_by_email","prob":1,"rare":false}],"surprise":0.10364,"risk":0.10364}
	// 200 {"session_id":"demo","step":1,"allowed":false,"reason":"illegal_transition","state":"greet","label":"agent_msg","rare":false,"prob":0,"next_moves":[{"event":"agent","to":"find","label":"find_user_id_by_email","prob":1,"rare":false}],"surprise":5.196397,"risk":5.300037}
	// 2 decisions
}
