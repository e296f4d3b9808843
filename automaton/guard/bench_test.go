package guard

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/internal/modeltest"
)

// benchPath is a full returns session through the fixture, ending in
// __end__, so that a session can run it again after End.
var benchPath = [][2]string{
	{"", "agent_msg"}, {"agent", "find_user_id_by_email"}, {"ok", "get_order_details"},
	{"ok", "get_order_details"}, {"ok", "return_delivered_order_items"}, {"ok", "agent_msg"}, {"agent", "__end__"},
}

// BenchmarkGuardStep measures Guard.Step over a pool of sessions that walk
// the fixture's returns flow: serially, and from GOMAXPROCS goroutines.
func BenchmarkGuardStep(b *testing.B) {
	m := modeltest.Returns(b)
	p := guardPolicy(b, `{"watchdog":{"max_turns":5,"fallback":{"event":"escalate","to":"human"}}}`)
	for _, n := range []int{1, 1000, 100000} {
		ids := make([]string, n)
		for i := range ids {
			ids[i] = fmt.Sprintf("session-%06d", i)
		}
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			g, err := New(m, p, Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s := i % n
				st := benchPath[(i/n)%len(benchPath)]
				if d := g.Step(ids[s], st[0], st[1]); !d.Allowed {
					b.Fatalf("step %d of %s denied: %s", i, ids[s], d.Reason)
				}
				if st[1] == automaton.EndID {
					g.End(ids[s])
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
		})
		b.Run(fmt.Sprintf("sessions=%d/parallel", n), func(b *testing.B) {
			if n == 1 {
				b.Skip("one session serialises on its shard")
			}
			g, err := New(m, p, Options{})
			if err != nil {
				b.Fatal(err)
			}
			var worker atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				// each goroutine owns the sessions i*w+k, so no two walk one
				w := int(worker.Add(1)) - 1
				k := 0
				var pos []int
				for pb.Next() {
					if pos == nil {
						pos = make([]int, n)
					}
					s := (k*64 + w) % n
					k++
					st := benchPath[pos[s]%len(benchPath)]
					pos[s]++
					g.Step(ids[s], st[0], st[1])
					if st[1] == automaton.EndID {
						g.End(ids[s])
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
		})
	}
}

// slotsPath is a full session through the slots fixture under
// testdata/slots.policy.json, two of its steps carrying slots.
var slotsPath = []struct {
	event, next string
	slots       []Slot
}{
	{"", "greet", nil},
	{"ok", "collecting_info", nil},
	{"ok", "confirming", []Slot{{Name: "order_id", Value: "AB12345678"}, {Name: "reason", Value: "too small"}}},
	{"confirmed", "refund", []Slot{{Name: "amount", Value: "12", Kind: SlotNumber}}},
	{"ok", automaton.EndID, nil},
}

// BenchmarkGuardStepSlots measures Guard.StepSlots with required slots,
// patterns, rule conditions and instructions, over 1,000 sessions.
func BenchmarkGuardStepSlots(b *testing.B) {
	m := loadSlotsFixture(b)
	p, err := LoadPolicy("testdata/slots.policy.json")
	if err != nil {
		b.Fatal(err)
	}
	const n = 1000
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("session-%06d", i)
	}
	b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
		g, err := New(m, p, Options{})
		if err != nil {
			b.Fatal(err)
		}
		slots := make([]Slot, 0, 4)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			s := i % n
			st := slotsPath[(i/n)%len(slotsPath)]
			slots = append(slots[:0], st.slots...) // the guard writes Valid
			d, err := g.StepSlots(ids[s], st.event, st.next, slots)
			if err != nil || !d.Allowed {
				b.Fatalf("step %d of %s: %v, denied: %s", i, ids[s], err, d.Reason)
			}
			if st.next == automaton.EndID {
				g.End(ids[s])
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
	})
}
