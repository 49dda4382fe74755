package packs

import (
	"slices"

	"github.com/skillhost/skillhost/abi"
)

// DescribedTool turns what a module's describe export reports about one
// tool into a Tool, not yet completed (see Pack.CompleteTool).
func DescribedTool(td abi.ToolDescriptor) *ToolSpec {
	t := &ToolSpec{
		Name: td.Name, Export: td.Export, Description: td.Description,
		InputSchema: td.InputSchema, OutputSchema: td.OutputSchema,
		Tags: td.Tags, Category: td.Category,
		SideEffects: td.SideEffects, Idempotent: td.Idempotent,
		RequiresNetwork: td.RequiresNetwork, RequiresFilesystem: td.RequiresFilesystem,
	}
	for _, ex := range td.Examples {
		t.Examples = append(t.Examples, Example{Args: ex.Args, Description: ex.Description})
	}
	return t
}

// describedKeys are the manifest keys a describe export can supply too:
// a tool entry that writes all three needs nothing from the module.
var describedKeys = []string{"description", "input_schema", "output_schema"}

// NeedsDescribe reports whether tool entry t leaves out something a
// module's describe export reports (its description or one of its
// schemas), so the registry should merge the two (see MergeTool).
func NeedsDescribe(t *ToolSpec) bool {
	for _, k := range describedKeys {
		if !slices.Contains(t.Written, k) {
			return true
		}
	}
	return false
}

// MergeTool returns the tool a module describes with the fields its
// pack.yaml entry wrote laid over it, field by field: a key the entry
// wrote wins (also a false flag or an empty list written out), every
// other field is the module's. So an entry written only to set
// idempotent keeps the description and schemas the module reports.
// Neither argument is changed; the result is not completed.
func MergeTool(described, entry *ToolSpec) *ToolSpec {
	t := *described
	t.Written = entry.Written
	for _, k := range entry.Written {
		switch k {
		case "name":
			t.Name = entry.Name
		case "export":
			t.Export = entry.Export
		case "display_name":
			t.DisplayName = entry.DisplayName
		case "description":
			t.Description = entry.Description
		case "icon":
			t.Icon = entry.Icon
		case "version":
			t.Version = entry.Version
		case "input_schema":
			t.InputSchema = entry.InputSchema
		case "output_schema":
			t.OutputSchema = entry.OutputSchema
		case "examples":
			t.Examples = entry.Examples
		case "tags":
			t.Tags = entry.Tags
		case "category":
			t.Category = entry.Category
		case "side_effects":
			t.SideEffects = entry.SideEffects
		case "idempotent":
			t.Idempotent = entry.Idempotent
		case "requires_network":
			t.RequiresNetwork = entry.RequiresNetwork
		case "requires_filesystem":
			t.RequiresFilesystem = entry.RequiresFilesystem
		case "risk_level":
			t.RiskLevel = entry.RiskLevel
		case "hidden":
			t.Hidden = entry.Hidden
		case "loading":
			t.Loading = entry.Loading
		case "config_params":
			t.ConfigParams = entry.ConfigParams
		}
	}
	return &t
}
