package skillhost

import (
	"github.com/skillhost/skillhost/index"
	"github.com/skillhost/skillhost/tenancy"
)

// owner is whose the skills of pack are under the engine's tenants
// (Config.Tenants): every tenant's for the embedder's Go skills, which
// have no pack.
func (e *Engine) owner(pack string) tenancy.Owner {
	if pack == goSkillsPack {
		return tenancy.Everyone
	}
	return e.tenants.Owner(pack)
}

// skillScope is where the skills of pack are stored in the index, and
// which runs may use them: the owning tenant's scope for a pack of a
// tenant, else the scope its scope_mode gives (packScope). ok is false
// for a pack of no tenant, whose skills are not stored at all.
func (e *Engine) skillScope(pack string) (sc index.Scope, ok bool) {
	switch o := e.owner(pack); o {
	case tenancy.Everyone:
		return e.packScope(e.packScopeMode(e.op.Pack(pack))), true
	case tenancy.NoOne:
		return index.Scope{}, false
	default:
		id, _ := o.Tenant()
		return tenancy.ScopeOf(id, ""), true
	}
}

// ownsPacks reports whether some pack belongs to a tenant or to none,
// judged over the packs named: then skills stored at tenant scopes are the
// engine's to keep in step with the owners.
func (e *Engine) ownsPacks(names []string) bool {
	for _, p := range names {
		if e.owner(p) != tenancy.Everyone {
			return true
		}
	}
	return false
}

// Tenants returns the tenants whose packs' skills the engine keeps apart
// (Config.Tenants, or the operator config's): a server checks them against
// its own, so that its tools and skills follow one rule. It is nil when
// there are none.
func (e *Engine) Tenants() *tenancy.Set { return e.tenants }
