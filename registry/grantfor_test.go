package registry_test

import (
	"slices"
	"testing"

	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/registry"
)

// GrantFor sees each module's operator grant with its pack and tool
// names, and what it returns replaces it, marked as the embedder's; a
// module it declines keeps the operator's.
func TestGrantForAdjustsAsGrantsAreComputed(t *testing.T) {
	var sawPack string
	var sawTools []string
	reg, _ := newRegistry(t, registry.Options{GrantFor: func(pack string, tools []string, op host.Grant) (host.Grant, bool) {
		sawPack, sawTools = pack, tools
		op.Tools = nil // the adjusted grant calls nothing
		return op, true
	}})
	if sawPack != "t" || !slices.Contains(sawTools, "echo_args") || !slices.Contains(sawTools, "deferred_echo") {
		t.Fatalf("GrantFor saw pack %q tools %v", sawPack, sawTools)
	}
	tl, ok := reg.Tool("echo_args")
	if !ok {
		t.Fatal("no echo_args")
	}
	if tl.GrantFrom != registry.GrantFromEmbedder || len(tl.Operator.Tools) != 0 || len(tl.Effective.Tools) != 0 {
		t.Fatalf("adjusted: from %s, operator tools %v, effective tools %v", tl.GrantFrom, tl.Operator.Tools, tl.Effective.Tools)
	}
	declined, _ := newRegistry(t, registry.Options{GrantFor: func(string, []string, host.Grant) (host.Grant, bool) {
		return host.Grant{}, false
	}})
	tl, _ = declined.Tool("echo_args")
	if tl.GrantFrom == registry.GrantFromEmbedder && len(tl.Operator.Tools) == 0 {
		t.Fatalf("a declined adjustment replaced the grant: %+v", tl.Operator)
	}
	if !slices.Contains(tl.Operator.Tools, "again") {
		t.Fatalf("the operator's grant after a declined adjustment: %+v", tl.Operator)
	}
}
