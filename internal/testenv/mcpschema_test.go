package testenv_test

import (
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillhost/skillhost/internal/testenv"
)

// Every revision the MCP go-sdk negotiates, and so skillhost serves, has
// its published schema in testdata/mcp-schema, and its Tool and
// ListToolsResult definitions compile.
func TestMCPRevisionsCoverTheSDK(t *testing.T) {
	for _, rev := range mcp.SupportedProtocolVersions() {
		if !slices.Contains(testenv.MCPRevisions, rev) {
			t.Errorf("the go-sdk speaks MCP %s, whose schema.json is not in testdata/mcp-schema", rev)
		}
	}
	for _, rev := range testenv.MCPRevisions {
		for _, def := range []string{"Tool", "ListToolsResult"} {
			if _, err := testenv.MCPSchema(rev, def); err != nil {
				t.Errorf("%s %s: %v", rev, def, err)
			}
		}
	}
}
