package skillhost

import (
	"github.com/skillhost/skillhost/index"
	"github.com/skillhost/skillhost/packs"
)

// HiddenPack is what Config.PackTenant answers for a pack whose skills no
// run may see: with [server] shared_packs set, a pack that neither it nor
// any tenant lists.
const HiddenPack = "(hidden)"

// PackTenantsFrom returns the Config.PackTenant rule of an operator
// config: a pack a [tenants.<id>] section lists belongs to that tenant;
// when tenants are configured and [server] shared_packs is set, a pack
// that neither it nor any tenant lists is HiddenPack; every other pack
// belongs to no tenant. Without [tenants] no pack belongs to anyone.
func PackTenantsFrom(op *packs.Config) func(pack string) string {
	if op == nil || len(op.Tenants) == 0 {
		return func(string) string { return "" }
	}
	owners := map[string]string{}
	for _, t := range op.Tenants {
		for _, p := range t.Packs {
			if _, taken := owners[p]; !taken {
				owners[p] = t.ID
			}
		}
	}
	var shared map[string]bool
	if op.Server.SharedPacks != nil {
		shared = map[string]bool{}
		for _, p := range op.Server.SharedPacks {
			shared[p] = true
		}
	}
	return func(pack string) string {
		if owner, ok := owners[pack]; ok {
			return owner
		}
		if shared != nil && pack != "" && pack != goSkillsPack && !shared[pack] {
			return HiddenPack
		}
		return ""
	}
}

// packTenant is Config.PackTenant for pack: "" for a pack of no tenant
// and for the embedder's Go skills, which have no pack.
func (e *Engine) packTenant(pack string) string {
	if pack == "" || pack == goSkillsPack || e.cfg.PackTenant == nil {
		return ""
	}
	return e.cfg.PackTenant(pack)
}

// skillScope is where the skills of pack are stored in the index, and
// which runs may use them: the owning tenant's scope for a pack of a
// tenant, else the scope its scope_mode gives (packScope). ok is false
// for a hidden pack, whose skills are not stored at all.
func (e *Engine) skillScope(pack string) (sc index.Scope, ok bool) {
	switch owner := e.packTenant(pack); owner {
	case "":
		return e.packScope(e.packScopeMode(e.op.Pack(pack))), true
	case HiddenPack:
		return index.Scope{}, false
	default:
		return index.Scope{Mode: packs.ScopeTenant, TenantID: owner}, true
	}
}

// ownsPacks reports whether some pack belongs to a tenant or is hidden,
// judged over the packs named: then skills stored at tenant scopes are the
// engine's to keep in step with the owners.
func (e *Engine) ownsPacks(names []string) bool {
	for _, p := range names {
		if e.packTenant(p) != "" {
			return true
		}
	}
	return false
}

// PackTenant returns the tenant the skills of pack belong to under the
// engine's Config.PackTenant: "" for none, HiddenPack for no run. A server
// checks it against its own tenants, so that its tools and skills follow
// one rule.
func (e *Engine) PackTenant(pack string) string { return e.packTenant(pack) }
