// Package registry is where a tool becomes callable: it joins what the
// catalog of packs declares, what the operator grants and what the host
// runs, and serves the tools to models through runs.
//
// A Registry (New) holds every tool after the operator's ToolPolicy: the
// Wasm tools of the packs, each with its grant (the pack's request
// intersected with the operator's ceilings), native Go tools (Func,
// Native) and skillhost's built-in tools (Builtins): tool_search and one
// family of skill tools. It is immutable and safe for concurrent use; a
// reloaded catalog gets a new Registry.
//
// A Run (Registry.NewRun) is one request's or session's view: the tools
// its model sees now (Run.Tools), those it may activate by calling them
// (Run.Deferred), its visibility policy and the tenant, project and session
// it belongs to. Run.Call finds a tool the run may use (an unknown or
// hidden one answers as ErrToolNotFound, never hinting that it exists),
// checks the arguments against the tool's input schema, dispatches it and
// normalises the result; a tool's failure is a result with IsError set,
// shown to the model, and only a broken request is a Go error. A guest's
// tool_call goes through the run of its caller, under the same rules.
//
// The renderings (OpenAITools, OpenAIResponsesTools, AnthropicTools,
// MCPTools and the prompt blocks) show a run's tools in the form each
// model API accepts, under one API name per tool.
package registry
