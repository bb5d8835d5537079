package flight

import (
	"errors"
	"fmt"
	"sync"
)

// Group merges concurrent lookups of the same key into one call, so a
// burst of commands does not send the same users.info or agent lookup a
// hundred times. The zero value is ready to use.
//
// A waiter always gets the leader's result or an error, never a zero value
// with a nil error: when fn panics, the waiters get a *Panic and the
// leader panics on with the original value (its own command's recover
// logs it with the stack); when fn ends its goroutine (runtime.Goexit),
// the waiters get ErrExited. golang.org/x/sync/singleflight is no
// substitute: its Do re-panics in every waiter, and its DoChan crashes the
// process.
type Group[T any] struct {
	mu    sync.Mutex
	calls map[string]*call[T]
}

type call[T any] struct {
	done chan struct{}
	v    T
	err  error
}

// Panic is the error waiters get when the leader's call panicked.
type Panic struct {
	value any
}

// Error says what the leader panicked with.
func (p *Panic) Error() string { return fmt.Sprintf("panic: %v", p.value) }

// Unwrap returns the panic value when it is an error (a runtime error,
// an error passed to panic).
func (p *Panic) Unwrap() error {
	err, _ := p.value.(error)
	return err
}

// ErrExited is the error waiters get when the leader's call ended
// its goroutine without returning (runtime.Goexit).
var ErrExited = errors.New("the shared lookup ended without an answer (runtime.Goexit)")

// Do runs fn once for all callers that ask for key while it runs.
func (f *Group[T]) Do(key string, fn func() (T, error)) (T, error) {
	f.mu.Lock()
	if f.calls == nil {
		f.calls = make(map[string]*call[T])
	}
	if c, ok := f.calls[key]; ok {
		f.mu.Unlock()
		<-c.done
		return c.v, c.err
	}
	c := &call[T]{done: make(chan struct{})}
	f.calls[key] = c
	f.mu.Unlock()
	returned := false
	defer func() {
		if !returned {
			// fn panicked or called runtime.Goexit: the waiters learn
			// that it failed rather than get a zero value and no error.
			// recover stops the panic only to record it; the leader
			// panics on with the same value below.
			var zero T
			c.v, c.err = zero, ErrExited
			v := recover()
			if v != nil {
				c.err = &Panic{value: v}
			}
			f.finish(key, c)
			if v != nil {
				panic(v)
			}
			return
		}
		f.finish(key, c)
	}()
	v, err := fn()
	c.v, c.err = v, err
	returned = true
	return v, err
}

// finish forgets call c of key and releases its waiters.
func (f *Group[T]) finish(key string, c *call[T]) {
	f.mu.Lock()
	delete(f.calls, key)
	f.mu.Unlock()
	close(c.done)
}
