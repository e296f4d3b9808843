package cmd

import (
	"os"
	"runtime"
	rtmetrics "runtime/metrics"
	"testing"
)

func TestGCPercentFor(t *testing.T) {
	tests := []struct {
		live uint64
		want int
	}{
		{0, 100},
		{1 << 20, 1600},
		{4 << 20, 1600},
		{16 << 20, 400},
		{48 << 20, 133},
		{64 << 20, 100},
		{1 << 30, 100},
	}
	for _, tt := range tests {
		if got := gcPercentFor(tt.live); got != tt.want {
			t.Errorf("gcPercentFor(%d) = %d, want %d", tt.live, got, tt.want)
		}
	}
}

// TestServeGCHeadroom: with the tuning on, a collection leaves the next
// one about gcHeadroom away (the live heap moves while other tests run, so
// within an eighth over), not the 73–78 MiB the runtime's heap minimum and
// its stacks and globals made of it before they were counted in.
func TestServeGCHeadroom(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set")
	}
	runtime.GC() // so that the tuning starts from a known live heap
	stop := tuneServeGC()
	defer stop()
	runtime.GC()
	s := []rtmetrics.Sample{{Name: "/gc/heap/goal:bytes"}, {Name: "/gc/heap/live:bytes"}}
	rtmetrics.Read(s)
	goal, live := s[0].Value.Uint64(), s[1].Value.Uint64()
	if head := goal - live; head > gcHeadroom+gcHeadroom/8 || head < gcHeadroom/2 {
		t.Errorf("live heap %d, goal %d: headroom %.1f MiB, want about %d MiB", live, goal, float64(head)/(1<<20), gcHeadroom>>20)
	}
}
