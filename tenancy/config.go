package tenancy

import "github.com/skillhost/skillhost/packs"

// FromConfig returns the Set of an operator config's [tenants.<id>]
// sections and [server] shared_packs; a nil config has no tenants.
func FromConfig(op *packs.Config) (*Set, error) {
	if op == nil {
		return nil, nil
	}
	ts := make([]Tenant, 0, len(op.Tenants))
	for _, tc := range op.Tenants {
		ts = append(ts, Tenant{ID: tc.ID, Packs: tc.Packs, Tools: tc.Tools, DenyTools: tc.DenyTools,
			ActivationScope: tc.ActivationScope, Quotas: Quotas(tc.Quotas), Grants: tc.Grants})
	}
	return New(op.Server.SharedPacks, ts...)
}
