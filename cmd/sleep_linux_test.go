package cmd

import (
	"os"
	"syscall"
	"time"
	"unsafe"
)

// pacer wakes a goroutine at given times, to within the kernel's timer
// slack (50 µs by default), without holding a P while it waits.
//
// time.Sleep will not do: the Go scheduler waits for its timers in
// epoll_wait, whose timeout is whole milliseconds, so that an idle process
// oversleeps a sub-millisecond timer by up to a millisecond, which
// BenchmarkServe would count against the service's latency. Nor will
// nanosleep(2): a goroutine blocked in a system call keeps its P, so that a
// process with two Ps would run the service on one. A timerfd is read
// through the netpoller, which parks the goroutine and wakes it when the
// kernel's timer fires.
type pacer struct {
	f *os.File
}

func newPacer() (*pacer, error) {
	const clockMonotonic, tfdNonblock, tfdCloexec = 1, syscall.O_NONBLOCK, syscall.O_CLOEXEC
	fd, _, errno := syscall.Syscall(syscall.SYS_TIMERFD_CREATE, clockMonotonic, tfdNonblock|tfdCloexec, 0)
	if errno != 0 {
		return nil, os.NewSyscallError("timerfd_create", errno)
	}
	return &pacer{f: os.NewFile(fd, "timerfd")}, nil
}

// sleepUntil returns at t, or at once if t has passed.
func (p *pacer) sleepUntil(t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return nil
	}
	// struct itimerspec: it_interval (0: fire once), it_value (relative)
	spec := [2]syscall.Timespec{{}, syscall.NsecToTimespec(int64(d))}
	rc, err := p.f.SyscallConn()
	if err != nil {
		return err
	}
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall6(syscall.SYS_TIMERFD_SETTIME, fd, 0, uintptr(unsafe.Pointer(&spec)), 0, 0, 0)
	}); err != nil {
		return err
	}
	if errno != 0 {
		return os.NewSyscallError("timerfd_settime", errno)
	}
	var expirations [8]byte
	_, err = p.f.Read(expirations[:])
	return err
}

func (p *pacer) Close() error { return p.f.Close() }
