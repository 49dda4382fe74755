package host

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"
)

// Closing a host while fresh-state calls run and restore: every call ends
// (with an error or not), nothing races and nothing is mapped over memory
// a closed instance gave back.
func TestCloseWithCallsInFlight(t *testing.T) {
	ctx := context.Background()
	for round := range 5 {
		h, err := New(ctx, NewConfig())
		if err != nil {
			t.Fatal(err)
		}
		wasm, err := os.ReadFile("../testdata/guests/wat/pages.wasm")
		if err != nil {
			t.Fatal(err)
		}
		m, err := h.Load(ctx, wasm, LoadOptions{Name: "pages"})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					export := "touch_one"
					if i%3 == 0 {
						export = "touch_all"
					}
					if _, err := m.Call(ctx, export, nil, nil); err != nil && h.closed.Load() {
						return
					}
				}
			}()
		}
		time.Sleep(time.Duration(10+round*7) * time.Millisecond)
		h.Close(ctx)
		wg.Wait()
	}
}
