package index

import (
	"context"
	"fmt"
)

// PackScopes returns, for every pack with skills stored, the scopes they
// are stored at, each list sorted (mode, tenant, project). An embedder
// that moves a pack's skills from one tenant's scope to another's uses it
// to find and drop what an earlier run stored at the old one.
func (s *Store) PackScopes(ctx context.Context) (map[string][]Scope, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT pack, scope_mode, scope_tenant_id, scope_project_id FROM skills
		WHERE origin = 'pack' AND pack != ''
		ORDER BY pack, scope_mode, scope_tenant_id, scope_project_id`)
	if err != nil {
		return nil, s.wrapErr(err)
	}
	defer rows.Close()
	out := map[string][]Scope{}
	for rows.Next() {
		var p string
		var sc Scope
		if err := rows.Scan(&p, &sc.Mode, &sc.TenantID, &sc.ProjectID); err != nil {
			return nil, fmt.Errorf("reading pack scopes: %w", err)
		}
		out[p] = append(out[p], sc)
	}
	return out, s.wrapErr(rows.Err())
}
