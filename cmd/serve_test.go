package cmd

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

const (
	fixtureModel  = "../automaton/guard/testdata/returns.json"
	fixturePolicy = "../automaton/guard/testdata/returns.policy.json"
)

// failAfter is how long a test waits for what must happen before it gives
// up: a guard against hanging, not a measurement.
const failAfter = 20 * time.Second

// TestServeCheck runs the command as a user would, in memory.
func TestServeCheck(t *testing.T) {
	var out, errb bytes.Buffer
	code := Run(context.Background(), []string{"serve", "--check", "--model", fixtureModel, "--policy", fixturePolicy}, IO{In: strings.NewReader(""), Out: &out, Err: &errb})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"version 1", "enforce mode", "watchdog 3 turns in one state, then -[escalate]-> human (transfer_to_human_agents)", "order -[ok]-> order  max 2", "return -[error]-> order  max 3"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--check output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestServeRefusesNegativeFlags(t *testing.T) {
	tests := []struct {
		flag, want string
	}{
		{"--history=-1", "fsmine: serve: --history -1: want 0 or more decisions\n"},
		{"--read-timeout=-1s", "fsmine: serve: --read-timeout, --write-timeout, --idle-timeout, --log-hold and --max-conns must not be negative\n"},
		{"--write-timeout=-1s", "fsmine: serve: --read-timeout, --write-timeout, --idle-timeout, --log-hold and --max-conns must not be negative\n"},
		{"--max-conns=-1", "fsmine: serve: --read-timeout, --write-timeout, --idle-timeout, --log-hold and --max-conns must not be negative\n"},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		code := Run(t.Context(), []string{"serve", "--check", "--model", fixtureModel, tt.flag}, IO{In: strings.NewReader(""), Out: &out, Err: &errb})
		if first, _, _ := strings.Cut(errb.String(), "\n"); code != 2 || first+"\n" != tt.want {
			t.Errorf("serve %s: exit %d, stderr %q; want 2, %q", tt.flag, code, first, tt.want)
		}
	}
}
