package skillhost_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/registry"
)

// Open an engine on the default sources, start a run for a request, give
// its tools to a model and make the call the model asks for. (The README's
// embedding example is this function's body.)
func ExampleOpen() {
	ctx := context.Background()
	e, err := skillhost.Open(ctx, skillhost.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close(ctx)

	// One run per request or session: what its model may see and call.
	run, err := e.NewRun(skillhost.RunContext{Tenant: "acme", Session: "s-1"}, nil)
	if err != nil {
		log.Fatal(err)
	}
	tools := run.Tools()                                     // the visible catalog: built-ins, always-loaded tools, activations
	later := run.Deferred()                                  // reachable through tool_search, activated by their first call
	openai := registry.OpenAITools(tools, e.RenderOptions()) // or OpenAIResponsesTools, AnthropicTools, MCPTools
	fmt.Println(len(openai), "tools shown,", len(later), "to find")

	res, err := run.Call(ctx, "slugify", json.RawMessage(`{"text":"Hello"}`), nil) // the name the model used
	if err != nil {
		log.Fatal(err) // a broken request; a tool's failure is a result
	}
	// res.Output is JSON; res.IsError/res.Error carry a tool failure, bad
	// arguments included (each violation with its JSON path).
	// Renderings name a tool as every API accepts (weather.get becomes
	// weather_get_ and a hash), and a call by that name reaches it; each
	// offers one tool search, and the prompt block for it names it:
	// docs/discovery.md#rendering-a-runs-tools-for-a-model-api.
	fmt.Println(string(res.Output), res.IsError)

	// Re-read the sources; calls in flight finish on the old catalog.
	if err := e.Reload(ctx); err != nil {
		log.Fatal(err)
	}
}
