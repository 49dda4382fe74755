package index

import (
	"encoding/hex"
	"strings"
)

// Filter tokens. Each skill row carries, in its search_filter column, single
// FTS5 tokens naming its scope and task type, so that an "fts" search
// filters inside the full-text index: rows the caller may not see are never
// ranked. Every token ends in a digit, so the
// porter stemmer leaves it as it is; identifiers are hex-encoded (as SQL's
// hex() does, for the migration that fills the column), so any identifier
// makes one token.

// taskToken is the filter token of a task type.
func taskToken(t string) string { return "tt" + t + "0" }

func hexID(id string) string { return strings.ToUpper(hex.EncodeToString([]byte(id))) }

// scopeToken is the filter token of a stored scope (normalised by normScope).
func scopeToken(sc Scope) string {
	switch sc.Mode {
	case ScopeGlobal:
		return "sg0"
	case ScopeTenant:
		return "st" + hexID(sc.TenantID) + "0"
	}
	return "sp" + hexID(sc.TenantID) + "x" + hexID(sc.ProjectID) + "0"
}

// skillFilterText is a skill row's search_filter column.
func skillFilterText(sk Skill) string { return scopeToken(sk.Scope) + " " + taskToken(sk.TaskType) }

// visibleScopeTokens are the scope tokens a caller with request scope sc
// may see: global, its tenant, its project (see visibleTo).
func visibleScopeTokens(sc Scope) []string {
	toks := []string{scopeToken(Scope{Mode: ScopeGlobal})}
	if sc.TenantID != "" {
		toks = append(toks, scopeToken(Scope{Mode: ScopeTenant, TenantID: sc.TenantID}))
	}
	if sc.ProjectID != "" {
		toks = append(toks, scopeToken(Scope{Mode: ScopeProject, TenantID: sc.TenantID, ProjectID: sc.ProjectID}))
	}
	return toks
}

// filterExpr restricts an FTS5 expression to rows whose search_filter has
// one token of each group: (expr) AND search_filter : ("a" OR "b") AND ...
func filterExpr(expr string, groups ...[]string) string {
	var b strings.Builder
	b.WriteString("(" + expr + ")")
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		b.WriteString(" AND search_filter : (")
		for i, t := range g {
			if i > 0 {
				b.WriteString(" OR ")
			}
			b.WriteString(quoteFTS(t))
		}
		b.WriteString(")")
	}
	return b.String()
}
