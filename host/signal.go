package host

import "sync"

// signal lets goroutines wait for something to change: a waiter takes the
// channel of the moment, looks at what it waits for, and sleeps on the
// channel only if it must; a change closes that channel (the next waiter
// takes a new one). Taking the channel before looking is what makes a
// change between the look and the sleep wake the waiter.
type signal struct {
	mu sync.Mutex
	ch chan struct{}
}

// wait returns the channel the next call of wake closes.
func (s *signal) wait() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

// wake wakes every goroutine sleeping on a channel wait returned.
func (s *signal) wake() {
	s.mu.Lock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
	s.mu.Unlock()
}
