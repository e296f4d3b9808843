package cmd

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// loadConn is one keep-alive HTTP/1.1 connection of BenchmarkServe's load
// generator. It writes requests built beforehand and reads the answer with
// no more parsing than the benchmark needs (the status, Content-Length and
// the body), so that the client costs little next to the service it
// measures: net/http's client spends about 80 allocations a request, which
// on a 2-core machine shared with the service shows up in the service's tail
// latency as garbage collection. It sends one request at a time (no
// pipelining), as the agents' HTTP clients do.
type loadConn struct {
	c    net.Conn
	r    *bufio.Reader
	body []byte // the last answer's body, reused
}

// dialLoad connects to the service at base (http://host:port).
func dialLoad(base string) (*loadConn, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" {
		return nil, fmt.Errorf("load generator: %s: only http:// is supported", base)
	}
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		return nil, err
	}
	return &loadConn{c: c, r: bufio.NewReaderSize(c, 4096)}, nil
}

// stepRequestBytes returns the bytes of a POST of body to the steps of session id.
func stepRequestBytes(host, id string, body []byte) []byte {
	b := make([]byte, 0, 160+len(id)+len(body))
	b = append(b, "POST /v1/sessions/"...)
	b = append(b, id...)
	b = append(b, "/steps HTTP/1.1\r\nHost: "...)
	b = append(b, host...)
	b = append(b, "\r\nContent-Type: application/json\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\n\r\n"...)
	return append(b, body...)
}

// roundTrip writes req and reads the answer: its status and its body, which
// stays valid until the next call.
func (lc *loadConn) roundTrip(req []byte) (int, []byte, error) {
	if err := lc.send(req); err != nil {
		return 0, nil, err
	}
	return lc.read()
}

// send writes req.
func (lc *loadConn) send(req []byte) error {
	_, err := lc.c.Write(req)
	return err
}

// read reads an answer: its status and its body, which stays valid until the
// next call.
func (lc *loadConn) read() (int, []byte, error) {
	line, err := lc.r.ReadSlice('\n')
	if err != nil {
		return 0, nil, err
	}
	// "HTTP/1.1 200 OK\r\n"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return 0, nil, fmt.Errorf("load generator: bad status line %q", line)
	}
	status, err := strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, nil, fmt.Errorf("load generator: bad status line %q", line)
	}
	length := -1
	for {
		line, err = lc.r.ReadSlice('\n')
		if err != nil {
			return 0, nil, err
		}
		if len(line) <= 2 { // the blank line after the headers
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return 0, nil, fmt.Errorf("load generator: bad header line %q", line)
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(value)); err != nil || length < 0 {
				return 0, nil, fmt.Errorf("load generator: bad Content-Length %q", value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			return 0, nil, fmt.Errorf("load generator: answer with Transfer-Encoding %q, want a Content-Length", value)
		case bytes.EqualFold(name, []byte("Connection")) && bytes.EqualFold(value, []byte("close")):
			return 0, nil, errors.New("load generator: the service closes the connection")
		}
	}
	if length < 0 {
		if status == 204 || status == 304 {
			return status, nil, nil
		}
		return 0, nil, errors.New("load generator: answer without Content-Length")
	}
	if cap(lc.body) < length {
		lc.body = make([]byte, length)
	}
	lc.body = lc.body[:length]
	if _, err := io.ReadFull(lc.r, lc.body); err != nil {
		return 0, nil, err
	}
	return status, lc.body, nil
}

func (lc *loadConn) Close() error { return lc.c.Close() }

// TestLoadConn checks the load generator's reading of the service's answers
// on one connection: a decision, a bad request and an answer without a body.
func TestLoadConn(t *testing.T) {
	ls := startServe(t, serveOptions{})
	lc, err := dialLoad(ls.url)
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Close()
	host := strings.TrimPrefix(ls.url, "http://")
	tests := []struct {
		name     string
		req      []byte
		status   int
		contains string
	}{
		{"step", stepRequestBytes(host, "lc-1", []byte(`{"event":"","next":"agent_msg"}`)), 200, `"allowed":true`},
		{"bad body", stepRequestBytes(host, "lc-1", []byte(`{"next":1}`)), 400, `"error":"bad step body`},
		{"delete", []byte("DELETE /v1/sessions/lc-1 HTTP/1.1\r\nHost: " + host + "\r\n\r\n"), 204, ""},
		{"after delete", stepRequestBytes(host, "lc-1", []byte(`{"event":"","next":"agent_msg"}`)), 200, `"step":0`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body, err := lc.roundTrip(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if status != tt.status || !bytes.Contains(body, []byte(tt.contains)) {
				t.Errorf("roundTrip = %d %q, want %d with %q", status, body, tt.status, tt.contains)
			}
		})
	}
}
