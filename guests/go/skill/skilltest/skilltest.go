// Package skilltest helps guest authors test their tools natively, without
// building the module.
package skilltest

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skillhost/skillhost/guests/go/skill"
)

// CheckDescription fails t unless the module's describe output lists
// exactly the tools of handles, in that order, each exported under its own
// name and with a description and input and output schemas.
func CheckDescription(t testing.TB, handles ...*skill.Handle) {
	t.Helper()
	var want, got []string
	for _, h := range handles {
		want = append(want, h.Name())
	}
	for _, tool := range skill.Description().Tools {
		got = append(got, tool.Name)
		if tool.Description == "" || len(tool.InputSchema) == 0 || len(tool.OutputSchema) == 0 {
			t.Errorf("tool %s lacks a description or schema", tool.Name)
		}
		if tool.Export != tool.Name {
			t.Errorf("tool %s has export %q", tool.Name, tool.Export)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}
