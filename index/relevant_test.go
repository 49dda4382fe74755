package index

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// relevantStore holds a few playbooks on different subjects.
func relevantStore(t *testing.T, opts *Options) (*Store, *eventLog) {
	t.Helper()
	s, log := retrievalStore(t, opts)
	put(t, s, loginSkill())
	put(t, s, SkillRecord{Name: "pack.core.api.pagination.cursor_loop", Title: "Handle cursor pagination",
		Trigger: "An API returns results in pages with a next cursor", TaskType: "api",
		Steps: []string{"Request the first page", "Repeat with the returned cursor until it is empty"}})
	put(t, s, SkillRecord{Name: "pack.core.code.parse_iso_dates", Title: "Parse ISO dates",
		Trigger: "Dates arrive as ISO 8601 strings", TaskType: "code", Steps: []string{"Use time.Parse with RFC 3339"}})
	put(t, s, SkillRecord{Name: "pack.docs.release_notes", Title: "Write release notes",
		Trigger: "Summarise the changes of a release", Steps: []string{"Group changes by area"}})
	return s, log
}

func TestRelevant(t *testing.T) {
	for _, fts := range []bool{true, false} {
		t.Run(fmt.Sprint("fts=", fts), func(t *testing.T) {
			s, log := relevantStore(t, &Options{DisableFTS: !fts})
			ctx := context.Background()
			res, err := s.Relevant(ctx, RelevantRequest{Task: "Log in to the vendor portal with the username and password"})
			if err != nil {
				t.Fatal(err)
			}
			if wantType := map[bool]string{true: "fts", false: "regex"}[fts]; res.SearchType != wantType {
				t.Errorf("search type %q, want %q", res.SearchType, wantType)
			}
			if len(res.Skills) == 0 || res.Skills[0].Name != "pack.core.browser_auth.login_basic" {
				t.Fatalf("skills = %+v", res.Skills)
			}
			if !strings.HasPrefix(res.FormattedContext, skillContextOpen) || !strings.HasSuffix(res.FormattedContext, skillContextClose) ||
				!strings.Contains(res.FormattedContext, "1. Fill the username field") {
				t.Errorf("context:\n%s", res.FormattedContext)
			}
			if res.WasSummarized || res.RawTokensEst != res.FinalTokensEst || res.FinalTokensEst != EstimateTokens(res.FormattedContext) {
				t.Errorf("token figures: %+v", res)
			}
			want := map[string]any{
				"skill_count":      len(res.Skills),
				"top_k_used":       DefaultRelevantTopK,
				"raw_tokens_est":   res.RawTokensEst,
				"final_tokens_est": res.FinalTokensEst,
				"was_summarized":   false,
			}
			if diff := cmp.Diff(want, log.last(t, EventSkillsRetrieved).Fields); diff != "" {
				t.Errorf("skills_retrieved event (-want +got):\n%s", diff)
			}

			// Returned skills count as used; the others do not.
			returned := map[string]bool{}
			for _, d := range res.Skills {
				returned[d.Name] = true
			}
			all := []string{"pack.core.browser_auth.login_basic", "pack.core.api.pagination.cursor_loop",
				"pack.core.code.parse_iso_dates", "pack.docs.release_notes"}
			found, err := lookupSkills(ctx, s, Scope{}, all)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range all {
				if got, want := found[n].UseCount, map[bool]int{true: 1, false: 0}[returned[n]]; got != want {
					t.Errorf("%s: use_count %d, want %d", n, got, want)
				}
			}
		})
	}
}

func TestRelevantNothingFound(t *testing.T) {
	s, log := relevantStore(t, nil)
	res, err := s.Relevant(context.Background(), RelevantRequest{Task: "quantum chromodynamics lattice"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&RelevantResult{Skills: []SkillContent{}, SearchType: "fts"}, res); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := log.last(t, EventSkillsRetrieved).Fields["skill_count"]; got != 0 {
		t.Errorf("skill_count = %v", got)
	}
}

func TestRelevantValidation(t *testing.T) {
	s, _ := relevantStore(t, nil)
	ctx := context.Background()
	tests := []struct {
		req  RelevantRequest
		want error
	}{
		{RelevantRequest{Task: "  "}, ErrEmptyQuery},
		{RelevantRequest{Task: "x", TopK: -1}, ErrBadLimit},
		{RelevantRequest{Task: "x", TopK: MaxLimit + 1}, ErrBadLimit},
		{RelevantRequest{Task: "x", MaxTokens: MinRelevantTokens - 1}, ErrBadMaxTokens},
		{RelevantRequest{Task: "x", MaxTokens: MaxRelevantTokens + 1}, ErrBadMaxTokens},
		{RelevantRequest{Task: "x", TaskType: "chess"}, ErrBadTaskType},
		{RelevantRequest{Task: "x", Scope: Scope{Mode: "mars"}}, ErrBadScope},
	}
	for _, tt := range tests {
		if _, err := s.Relevant(ctx, tt.req); !errors.Is(err, tt.want) {
			t.Errorf("%+v: err = %v, want %v", tt.req, err, tt.want)
		}
	}
}

// TestRelevantBudget retrieves many long matching skills into random
// budgets: the block always fits and says when it was compressed.
func TestRelevantBudget(t *testing.T) {
	s, log := retrievalStore(t, nil)
	ctx := context.Background()
	long := strings.Repeat("reconcile the invoice totals against the ledger before export ", 5)
	for i := range 20 {
		sk := SkillRecord{Name: fmt.Sprintf("pack.fin.invoice_%02d", i), Title: "Invoice reconciliation " + fmt.Sprint(i),
			Trigger: "invoice reconciliation " + long, Description: long, TaskType: "domain",
			Instructions: strings.Repeat(long+"\n", 3+i/2)}
		for j := range 5 + i/2 {
			sk.Steps = append(sk.Steps, fmt.Sprintf("step %d: %s", j, long))
			sk.FailureModes = append(sk.FailureModes, long)
			sk.Preconditions = append(sk.Preconditions, long)
		}
		put(t, s, sk)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	budgets := []int{MinRelevantTokens, 101, 250, DefaultRelevantTokens, MaxRelevantTokens}
	for range 7 {
		budgets = append(budgets, MinRelevantTokens+rng.IntN(8000))
	}
	for _, budget := range budgets {
		topK := 1 + rng.IntN(MaxLimit)
		res, err := s.Relevant(ctx, RelevantRequest{Task: "invoice reconciliation", TopK: topK, MaxTokens: budget})
		if err != nil {
			t.Fatal(err)
		}
		if got := EstimateTokens(res.FormattedContext); got > budget || got != res.FinalTokensEst {
			t.Fatalf("budget %d, top_k %d: %d tokens (reported %d)", budget, topK, got, res.FinalTokensEst)
		}
		if len(res.Skills) != topK {
			t.Errorf("top_k %d: %d skills", topK, len(res.Skills))
		}
		if res.WasSummarized != (res.RawTokensEst > budget) {
			t.Errorf("budget %d: raw %d, was_summarized %v", budget, res.RawTokensEst, res.WasSummarized)
		}
		ev := log.last(t, EventSkillsRetrieved)
		if ev.Fields["top_k_used"] != topK || ev.Fields["final_tokens_est"] != res.FinalTokensEst ||
			ev.Fields["was_summarized"] != res.WasSummarized {
			t.Errorf("event %+v for %+v", ev.Fields, res)
		}
	}
}

func TestRelevantScopeLeak(t *testing.T) {
	w := newScopeWorld(t)
	ctx := context.Background()
	for caller, sc := range worldScopes {
		t.Run(caller, func(t *testing.T) {
			// The task names every marker, so every stored skill matches
			// the words; only the scope filter keeps others out.
			var task []string
			for m := range worldScopes {
				task = append(task, mark(m))
			}
			for _, q := range []string{"deploy service " + strings.Join(task, " "), "deploy shared"} {
				res, err := w.s.Relevant(ctx, RelevantRequest{Task: q, TopK: MaxLimit, MaxTokens: MaxRelevantTokens, Scope: sc})
				if err != nil {
					t.Fatal(err)
				}
				checkMarkers(t, caller, "relevant", mustJSON2(t, res))
				if len(res.Skills) == 0 {
					t.Errorf("%q found nothing", q)
				}
			}
		})
	}
}

// benchSkills stores n playbooks of typical size for the benchmarks.
func benchSkills(b *testing.B, n int) *Store {
	b.Helper()
	s := openTest(b, nil)
	ctx := context.Background()
	subjects := []string{"invoice", "login", "deploy", "pagination", "report", "backup", "search", "upload"}
	for i := range n {
		subj := subjects[i%len(subjects)]
		sk := SkillRecord{Name: fmt.Sprintf("pack.bench.%s_%03d", subj, i), Title: "Handle " + subj + " task " + fmt.Sprint(i),
			Trigger: "The task involves " + subj + " work of kind " + fmt.Sprint(i), TaskType: "domain", Origin: OriginPack,
			Preconditions: []string{"Access to the " + subj + " system"},
			FailureModes:  []string{"The " + subj + " system times out: retry once", "Permission denied: ask the user"}}
		for j := range 8 {
			sk.Steps = append(sk.Steps, fmt.Sprintf("Step %d of the %s procedure: check the page, fill the fields and confirm", j+1, subj))
		}
		if err := s.PutSkill(ctx, sk); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

func BenchmarkRelevant(b *testing.B) {
	s := benchSkills(b, 500)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Relevant(ctx, RelevantRequest{Task: "reconcile the invoice totals for March"}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGetSkills(b *testing.B) {
	s := benchSkills(b, 500)
	ctx := context.Background()
	names := []string{"pack.bench.invoice_000", "pack.bench.login_001", "pack.bench.deploy_002"}
	visible := func(string) bool { return true }
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.GetSkills(ctx, SkillGetRequest{Names: names, VisibleTool: visible}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDirectory(b *testing.B) {
	s := benchSkills(b, 500)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		d, err := s.Directory(ctx, DirectoryConfig{}, Scope{TenantID: "t", ProjectID: "p"})
		if err != nil {
			b.Fatal(err)
		}
		d.Render()
	}
}
