package bot

import "sync"

// flight merges concurrent lookups of the same key into one call, so a
// burst of commands does not send the same users.info or agent lookup a
// hundred times. The zero value is ready to use.
type flight[T any] struct {
	mu    sync.Mutex
	calls map[string]*flightCall[T]
}

type flightCall[T any] struct {
	done chan struct{}
	v    T
	err  error
}

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
	defer func() {
		f.mu.Lock()
		delete(f.calls, key)
		f.mu.Unlock()
		close(c.done)
	}()
	c.v, c.err = fn()
	return c.v, c.err
}
