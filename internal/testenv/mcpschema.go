package testenv

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// MCPRevisions are the revisions of the Model Context Protocol whose
// published JSON Schema is kept under testdata/mcp-schema, oldest first.
// TestMCPRevisionsCoverTheSDK holds it to the revisions the MCP go-sdk
// negotiates.
var MCPRevisions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}

// MCPSchemaDir is the folder of the published MCP schemas, one
// <revision>/schema.json each.
func MCPSchemaDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "mcp-schema")
}

var mcpSchemas sync.Map // revision + " " + definition → *mcpSchemaResult

type mcpSchemaResult struct {
	once sync.Once
	s    *jsonschema.Schema
	err  error
}

// MCPSchema returns the definition def ("Tool", "ListToolsResult") of the
// published JSON Schema of MCP revision rev, compiled once per process.
// The revisions before 2025-11-25 keep their definitions under
// "definitions" (draft-07), the later ones under "$defs" (2020-12).
func MCPSchema(rev, def string) (*jsonschema.Schema, error) {
	v, _ := mcpSchemas.LoadOrStore(rev+" "+def, &mcpSchemaResult{})
	r := v.(*mcpSchemaResult)
	r.once.Do(func() { r.s, r.err = compileMCPSchema(rev, def) })
	return r.s, r.err
}

func compileMCPSchema(rev, def string) (*jsonschema.Schema, error) {
	data, err := os.ReadFile(filepath.Join(MCPSchemaDir(), rev, "schema.json"))
	if err != nil {
		return nil, fmt.Errorf("MCP schema of revision %s: %w", rev, err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("MCP schema of revision %s: %w", rev, err)
	}
	root, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("MCP schema of revision %s is not an object", rev)
	}
	defs := "$defs"
	if _, ok := root["definitions"]; ok {
		defs = "definitions"
	}
	url := "https://skillhost.invalid/mcp-schema/" + rev + "/schema.json"
	c := jsonschema.NewCompiler()
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url + "#/" + defs + "/" + def)
}

// ValidateMCP checks the JSON document doc against definition def of MCP
// revision rev (see MCPSchema), and returns the validator's error: nil
// when doc is valid.
func ValidateMCP(rev, def string, doc []byte) error {
	s, err := MCPSchema(rev, def)
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return s.Validate(v)
}
