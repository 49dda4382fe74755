package index

import (
	"context"
	"fmt"
)

// Packs returns the sorted names of the packs that have skills stored in
// exactly the given scope, so a caller can drop a pack that is gone by
// loading it with no skills.
func (s *Store) Packs(ctx context.Context, scope Scope) ([]string, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	sc, err := normScope(scope)
	if err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT pack FROM skills
		WHERE origin = 'pack' AND pack != '' AND scope_mode = ? AND scope_tenant_id = ? AND scope_project_id = ?
		ORDER BY pack`, sc.Mode, sc.TenantID, sc.ProjectID)
	if err != nil {
		return nil, s.wrapErr(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, fmt.Errorf("reading pack names: %w", err)
		}
		out = append(out, p)
	}
	return out, s.wrapErr(rows.Err())
}
