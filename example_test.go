package skillhost_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/skillhost/skillhost"
)

// A run is what one request's model sees: the tools visible now and the
// deferred ones it may still activate by calling them.
func ExampleEngine_NewRun() {
	ctx := context.Background()
	e, err := skillhost.Open(ctx, skillhost.Config{StateDir: stateDir, NoUserSources: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer e.Close(ctx)
	run, err := e.NewRun(skillhost.RunContext{Tenant: "acme", Session: "s-1"}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("visible:", len(run.Tools()), "deferred:", len(run.Deferred()) > 0)
	// Calling a deferred tool activates it for the rest of the run.
	res, err := run.Call(ctx, "slugify", json.RawMessage(`{"text":"Hello, World"}`), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(res.Output), run.Visible("slugify"))
	// Output:
	// visible: 5 deferred: true
	// {"slug":"hello-world"} true
}

// Arguments that do not match a tool's input schema never reach the
// guest: the model gets a tool error naming each violation.
func ExampleRun_Call() {
	ctx := context.Background()
	e, err := skillhost.Open(ctx, skillhost.Config{StateDir: stateDir, NoUserSources: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer e.Close(ctx)
	run, _ := e.NewRun(skillhost.RunContext{}, nil)
	res, err := run.Call(ctx, "slugify", json.RawMessage(`{"text":5}`), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.IsError, res.Error.Code)
	fmt.Println(res.Error.Message)
	// Output:
	// true invalid_input
	// arguments for "slugify" do not match its input schema: $.text: must be a string, got number
}
