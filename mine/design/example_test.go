package design_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/fsmine/fsmine/automaton/serve"
	"github.com/fsmine/fsmine/mine/design"
)

// Example reads a STAR task graph and enforces the designed machine at run
// time: the designed moves are allowed, a move the designers did not draw
// is denied with the moves the design allows. A design has no counts, so
// every prob is 0 and every step costs the same surprise (3 bits; see
// conform.Risk).
func Example() {
	flow := `{"task": "book_ride", "graph": {
	  "hello": "ask_name",
	  "ask_name": "ride_ask_destination",
	  "ride_ask_destination": "query_check",
	  "query_success": "ride_ask_confirm_booking",
	  "query_failure": "ride_inform_nothing_found"}}`
	m, err := design.Read([]byte(flow), design.Options{Path: "ride_book.flow.json"})
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
	defer ts.Close()
	defer s.Close()
	for _, body := range []string{
		`{"event": "", "next": "hello"}`,
		`{"event": "agent", "next": "ask_name"}`,
		`{"event": "agent", "next": "query:ride_book"}`,
	} {
		resp, err := http.Post(ts.URL+"/v1/sessions/d1/steps", "application/json", strings.NewReader(body))
		if err != nil {
			fmt.Println(err)
			return
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Printf("%d %s", resp.StatusCode, answer)
	}
	// Output:
	// 200 {"session_id":"d1","step":0,"allowed":true,"reason":"","state":"hello","label":"hello","rare":false,"prob":0,"next_moves":[{"event":"agent","to":"ask_name","label":"ask_name","prob":0,"rare":false}],"surprise":3,"risk":3}
	// 200 {"session_id":"d1","step":1,"allowed":true,"reason":"","state":"ask_name","label":"ask_name","rare":false,"prob":0,"next_moves":[{"event":"agent","to":"ride_ask_destination","label":"ride_ask_destination","prob":0,"rare":false}],"surprise":3,"risk":6}
	// 200 {"session_id":"d1","step":2,"allowed":false,"reason":"illegal_transition","state":"ask_name","label":"ask_name","rare":false,"prob":0,"next_moves":[{"event":"agent","to":"ride_ask_destination","label":"ride_ask_destination","prob":0,"rare":false}],"surprise":3,"risk":9}
}
