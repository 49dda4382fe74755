package server

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillhost/skillhost/host"
)

// progressReporter sends each log entry of a call as a progress
// notification of the request that asked for progress (with token tok):
// a guest that logs as it works shows its client that it is working.
func progressReporter(ctx context.Context, ss *mcp.ServerSession, tok any) func(host.LogEntry) {
	var mu sync.Mutex
	n := 0
	return func(e host.LogEntry) {
		mu.Lock()
		n++
		p := &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(n), Message: e.Message}
		mu.Unlock()
		ss.NotifyProgress(ctx, p) // a client gone away is not the call's failure
	}
}
