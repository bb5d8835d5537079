package bot

import (
	"errors"
	"fmt"
	"sync"
)

// flight merges concurrent lookups of the same key into one call, so a
// burst of commands does not send the same users.info or agent lookup a
// hundred times. The zero value is ready to use.
//
// A waiter always gets the leader's result or an error, never a zero value
// with a nil error: when fn panics, the waiters get a *flightPanic and the
// leader panics on with the original value (its own command's recover
// logs it with the stack); when fn ends its goroutine (runtime.Goexit),
// the waiters get errFlightExited. golang.org/x/sync/singleflight is no
// substitute: its Do re-panics in every waiter, and its DoChan crashes the
// process.
type flight[T any] struct {
	mu    sync.Mutex
	calls map[string]*flightCall[T]
}

type flightCall[T any] struct {
	done chan struct{}
	v    T
	err  error
}

// flightPanic is the error waiters get when the leader's call panicked.
type flightPanic struct {
	value any
}

func (p *flightPanic) Error() string { return fmt.Sprintf("panic: %v", p.value) }

// Unwrap returns the panic value when it is an error (a runtime error,
// an error passed to panic).
func (p *flightPanic) Unwrap() error {
	err, _ := p.value.(error)
	return err
}

// errFlightExited is the error waiters get when the leader's call ended
// its goroutine without returning (runtime.Goexit).
var errFlightExited = errors.New("the shared lookup ended without an answer (runtime.Goexit)")

// do runs fn once for all callers that ask for key while it runs.
func (f *flight[T]) do(key string, fn func() (T, error)) (T, error) {
	f.mu.Lock()
	if f.calls == nil {
		f.calls = make(map[string]*flightCall[T])
	}
	if c, ok := f.calls[key]; ok {
		f.mu.Unlock()
		<-c.done
		return c.v, c.err
	}
	c := &flightCall[T]{done: make(chan struct{})}
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
			c.v, c.err = zero, errFlightExited
			v := recover()
			if v != nil {
				c.err = &flightPanic{value: v}
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
func (f *flight[T]) finish(key string, c *flightCall[T]) {
	f.mu.Lock()
	delete(f.calls, key)
	f.mu.Unlock()
	close(c.done)
}
