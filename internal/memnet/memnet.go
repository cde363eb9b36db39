// Package memnet is a net.Listener of in-memory connections (net.Pipe), for tests that run an
// HTTP server in a testing/synctest bubble: a goroutine waiting on a TCP socket is not durably
// blocked, so the bubble's clock would not move while it waits; one waiting on a pipe is.
package memnet

import (
	"context"
	"net"
	"net/http"
	"sync"
)

// Listener hands the server's end of each Dial's pipe to Accept.
type Listener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

// Listen returns a listener with no connections yet.
func Listen() *Listener {
	return &Listener{conns: make(chan net.Conn), done: make(chan struct{})}
}

// Accept waits for a Dial, or for Close.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close makes Accept and Dial fail from now on; connections already made stay open.
func (l *Listener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr is the same for every listener: Dial ignores the address.
func (l *Listener) Addr() net.Addr { return addr{} }

// Dial connects to the listener, once a server Accepts; network and address are ignored.
func (l *Listener) Dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	var err error
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		err = net.ErrClosed
	case <-ctx.Done():
		err = ctx.Err()
	}
	client.Close()
	server.Close()
	return nil, err
}

// Client is an HTTP client whose every connection is a Dial of l, whatever the URL's host.
func (l *Listener) Client() *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: l.Dial}}
}

// addr names the in-memory listener; .invalid is never a real host (RFC 6761).
type addr struct{}

func (addr) Network() string { return "memnet" }
func (addr) String() string  { return "memnet.invalid" }
