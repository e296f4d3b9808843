package cmd

import (
	"os"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"time"
)

// gcHeadroom is how much garbage serve lets gather between collections at
// least: the collector's target stays gcHeadroom above the live heap, or
// twice the live heap (Go's default, GOGC=100) when that is more.
//
// The service's live heap is small (its sessions, about 2 KB each) while
// every request leaves about 3 KB of garbage, most of it net/http's. Under
// the default the collector then runs whenever a few megabytes have been
// allocated, several times a second at 5,000 decisions/s, and each cycle
// (two stop-the-world pauses, which take milliseconds on a busy 2-core
// machine, and a mark phase that takes a quarter of the CPUs) lands in the
// latency tail of the requests it meets. With 64 MiB of headroom it runs
// every few seconds instead; the price is about 64 MiB more memory than
// the default, and nothing once the live heap passes 64 MiB (tens of
// thousands of sessions).
const gcHeadroom = 64 << 20

// tuneServeGC keeps the collector's target about gcHeadroom above the live
// heap, unless GOGC is set, by setting the GC percentage from the live heap
// once a second. It returns a function that stops the tuning and puts the
// percentage back.
func tuneServeGC() (stop func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	// The collector's goal is the live heap plus GOGC% of the live heap,
	// the goroutine stacks and the globals. Until the first collection the
	// live heap reads 0: take the heap's objects, live or not, then.
	sample := []rtmetrics.Sample{
		{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"},
	}
	live := func() uint64 {
		rtmetrics.Read(sample)
		n := sample[0].Value.Uint64()
		if n == 0 {
			n = sample[1].Value.Uint64()
		}
		return n + sample[2].Value.Uint64() + sample[3].Value.Uint64()
	}
	set := gcPercentFor(live())
	percent := debug.SetGCPercent(set)
	go func() {
		defer close(finished)
		defer debug.SetGCPercent(percent)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			// a change under an eighth is not worth telling the runtime
			if p := gcPercentFor(live()); p > set+set/8 || p < set-set/8 {
				set = p
				debug.SetGCPercent(p)
			}
		}
	}()
	return func() { close(done); <-finished }
}

// gcPercentFor returns the GC percentage that puts the collector's target
// gcHeadroom above a live heap of live bytes (stacks and globals counted
// in), or 100 when that is more.
func gcPercentFor(live uint64) int {
	if live == 0 || live >= gcHeadroom {
		return 100
	}
	// The runtime never sets its goal under 4 MiB × GOGC/100 (its heap
	// minimum), which would put the goal past the headroom for a smaller
	// heap.
	return int(100 * gcHeadroom / max(live, 4<<20))
}
