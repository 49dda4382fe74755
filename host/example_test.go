package host_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/skillhost/skillhost/host"
)

// Run an export of a module directly, outside any pack: it gets exactly
// what the grant names (here nothing but a timeout), and a fresh state.
func ExampleModule_Call() {
	ctx := context.Background()
	h, err := host.New(ctx, host.NewConfig())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer h.Close(ctx)
	wasm, err := os.ReadFile("../testdata/guests/wat/echo.wasm")
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := h.Load(ctx, wasm, host.LoadOptions{Name: "echo.wasm"})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := m.Call(ctx, "echo", []byte("hello"), &host.CallOptions{
		Grant: host.Grant{Limits: host.Limits{Timeout: time.Second}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(res.Output))
	// Output: hello
}

// A failed call is a *CallError that matches a sentinel: here a guest
// spinning past its deadline.
func ExampleCallError() {
	ctx := context.Background()
	h, _ := host.New(ctx, host.NewConfig())
	defer h.Close(ctx)
	wasm, _ := os.ReadFile("../testdata/guests/wat/loop.wasm")
	m, _ := h.Load(ctx, wasm, host.LoadOptions{Name: "loop.wasm"})
	_, err := m.Call(ctx, "spin", nil, &host.CallOptions{Grant: host.Grant{Limits: host.Limits{Timeout: 50 * time.Millisecond}}})
	var ce *host.CallError
	fmt.Println(errors.Is(err, host.ErrTimeout), errors.As(err, &ce) && ce.Code == "timeout")
	// Output: true true
}

// A program that may run calls in worker processes (IsolationProcess)
// calls ServeWorkerIfChild first thing in main: a worker is the program
// itself started again, and this call serves as one and exits. (The
// README's worker example is this function's body, in main.)
func ExampleServeWorkerIfChild() {
	host.ServeWorkerIfChild() // serves as a worker and exits when started as one
	// ...
}
