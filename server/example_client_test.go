package server_test

import (
	"context"
	"fmt"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Any MCP client that speaks streamable HTTP reaches skillhost serve at
// /mcp; with the official Go SDK, connect and call a tool. (The README's
// client example is this function's body.)
func ExampleServer_client() {
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "my-agent", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://127.0.0.1:8787/mcp"}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slugify", Arguments: map[string]any{"text": "Hello"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.StructuredContent, res.IsError)
}
