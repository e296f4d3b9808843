package cmd

import (
	"syscall"
	"time"
)

// sleepUntil returns at t, or at once if t has passed. It sleeps in
// nanosleep(2), which blocks its thread, rather than in time.Sleep: the Go
// scheduler waits for timers in epoll_wait, whose timeout is whole
// milliseconds, so that an idle process oversleeps a sub-millisecond timer
// by up to a millisecond, which BenchmarkServe would count against the
// service's latency.
func sleepUntil(t time.Time) {
	d := time.Until(t)
	if d <= 0 {
		return
	}
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}
