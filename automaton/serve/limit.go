package serve

import (
	"net"
	"sync"
	"sync/atomic"
)

// limitListener accepts at most n connections at once: Accept waits for
// one of them to close before it takes the next from the kernel's queue, so
// that slow clients cannot use up the process's file descriptors.
type limitListener struct {
	net.Listener
	// full, when not nil, is called (with true) when a client has been
	// accepted and waits for a slot, and (with false) once it has one:
	// Serve closes idle keep-alive connections meanwhile, which would
	// otherwise hold their slots for the whole idle timeout. The client
	// in hand is one descriptor past the limit.
	full    func(bool)
	slots   chan struct{}
	closed  chan struct{}
	once    sync.Once
	open    atomic.Int64 // connections accepted and not yet closed
	waiting atomic.Int64 // Accept calls waiting for a free slot
}

func newLimitListener(l net.Listener, n int) *limitListener {
	return &limitListener{Listener: l, slots: make(chan struct{}, n), closed: make(chan struct{})}
}

// Accept waits for a free slot, then accepts a connection that frees its
// slot when it is closed.
func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	default:
		if l.full == nil {
			l.waiting.Add(1)
			select {
			case l.slots <- struct{}{}:
				l.waiting.Add(-1)
			case <-l.closed:
				l.waiting.Add(-1)
				return nil, net.ErrClosed
			}
			break
		}
		// Make room only for a client in hand (one descriptor past the
		// limit): at the limit with no one waiting, idle connections stay.
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.slots <- struct{}{}: // freed meanwhile: no one to close
			l.open.Add(1)
			return &limitConn{Conn: c, l: l}, nil
		default:
		}
		l.waiting.Add(1)
		l.full(true)
		select {
		case l.slots <- struct{}{}:
			l.waiting.Add(-1)
			l.full(false)
		case <-l.closed:
			l.waiting.Add(-1)
			l.full(false)
			c.Close()
			return nil, net.ErrClosed
		}
		l.open.Add(1)
		return &limitConn{Conn: c, l: l}, nil
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	l.open.Add(1)
	return &limitConn{Conn: c, l: l}, nil
}

// Close stops the listener; an Accept waiting for a slot returns
// net.ErrClosed.
func (l *limitListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

type limitConn struct {
	net.Conn
	l    *limitListener
	once sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.open.Add(-1)
		<-c.l.slots
	})
	return err
}
