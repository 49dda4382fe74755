package index

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// eventLog collects events for assertions.
type eventLog struct {
	mu     sync.Mutex
	events []Event
}

func (l *eventLog) add(e Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

// last returns the last event called name.
func (l *eventLog) last(t *testing.T, name string) Event {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.events) - 1; i >= 0; i-- {
		if l.events[i].Name == name {
			return l.events[i]
		}
	}
	t.Fatalf("no %s event", name)
	return Event{}
}

// tickClock is a goroutine-safe clock advancing one second per call.
func tickClock() func() time.Time {
	var mu sync.Mutex
	t0 := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	n := 0
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		n++
		return t0.Add(time.Duration(n) * time.Second)
	}
}

// retrievalStore opens a store with an event log and a ticking clock.
func retrievalStore(t *testing.T, opts *Options) (*Store, *eventLog) {
	t.Helper()
	log := &eventLog{}
	if opts == nil {
		opts = &Options{}
	}
	opts.OnEvent = log.add
	opts.Now = tickClock()
	return openTest(t, opts), log
}

func put(t *testing.T, s *Store, sk SkillRecord) {
	t.Helper()
	if sk.Origin == "" {
		sk.Origin = OriginPack
	}
	if err := s.PutSkill(context.Background(), sk); err != nil {
		t.Fatalf("PutSkill(%s): %v", sk.Name, err)
	}
}

// loginSkill is the playbook used by the golden files.
func loginSkill() SkillRecord {
	return SkillRecord{
		Name:          "pack.core.browser_auth.login_basic",
		Title:         "Login with username/password",
		Description:   "Signs in to a site that shows a plain login form.",
		Trigger:       "The site asks for a username and password",
		TaskType:      "browser",
		Tags:          []string{"auth", "login"},
		Preconditions: []string{"Credentials are available from the vault", "The login page is open"},
		Steps: []string{
			"Fill the username field",
			"Fill the password field",
			"Press Sign in and wait for the dashboard",
		},
		FailureModes: []string{"Captcha shown: stop and ask the user", "Account locked: report it"},
		Origin:       OriginPack,
		OriginRef:    "core@1.0.0",
	}
}

// scopeWorld is a store with skills in several tenants and projects. Each
// non-global skill carries a marker word (MARK<scope>END) in every text
// field, so a leak shows up as the marker in some output.
type scopeWorld struct {
	s      *Store
	log    *eventLog
	scopes map[string]Scope // marker → scope where its skills live
}

var worldScopes = map[string]Scope{
	"GLOBAL": {},
	"T1":     {TenantID: "t1"},
	"T2":     {TenantID: "t2"},
	"T1P1":   {TenantID: "t1", ProjectID: "p1"},
	"T1P2":   {TenantID: "t1", ProjectID: "p2"},
	"T2P1":   {TenantID: "t2", ProjectID: "p1"}, // same project ID, other tenant
	"P1":     {ProjectID: "p1"},                 // single-tenant project
}

// visibleMarkers says which markers a caller in each scope may see.
var visibleMarkers = map[string][]string{
	"GLOBAL": {"GLOBAL"},
	"T1":     {"GLOBAL", "T1"},
	"T2":     {"GLOBAL", "T2"},
	"T1P1":   {"GLOBAL", "T1", "T1P1"},
	"T1P2":   {"GLOBAL", "T1", "T1P2"},
	"T2P1":   {"GLOBAL", "T2", "T2P1"},
	"P1":     {"GLOBAL", "P1"},
}

func newScopeWorld(t *testing.T) *scopeWorld {
	t.Helper()
	s, log := retrievalStore(t, nil)
	w := &scopeWorld{s: s, log: log, scopes: worldScopes}
	for marker, sc := range worldScopes {
		low := strings.ToLower(marker)
		for i := range 3 {
			put(t, s, SkillRecord{
				Name:          fmt.Sprintf("pack.%s.deploy_%d", low, i),
				Title:         "Deploy service " + mark(marker),
				Trigger:       "deploy the service for " + mark(marker),
				Description:   "Deployment runbook " + mark(marker),
				TaskType:      "code",
				Steps:         []string{"build " + mark(marker), "ship " + mark(marker)},
				Preconditions: []string{"access " + mark(marker)},
				FailureModes:  []string{"rollback " + mark(marker)},
				Instructions:  "Deploy notes " + mark(marker),
				Scope:         sc,
				Pinned:        i == 0,
			})
		}
		// The same name in every scope: the most specific visible one wins.
		put(t, s, SkillRecord{
			Name: "pack.shared.deploy", Title: "Shared deploy " + mark(marker),
			Trigger: "deploy shared " + mark(marker), Steps: []string{"step " + mark(marker)}, Scope: sc,
		})
	}
	return w
}

// allNames are the names of every skill in the world.
func (w *scopeWorld) allNames() []string {
	var names []string
	for marker := range worldScopes {
		for i := range 3 {
			names = append(names, fmt.Sprintf("pack.%s.deploy_%d", strings.ToLower(marker), i))
		}
	}
	return names
}

// checkMarkers fails when text shows a marker the caller may not see.
func checkMarkers(t *testing.T, caller, what, text string) {
	t.Helper()
	allowed := map[string]bool{}
	for _, m := range visibleMarkers[caller] {
		allowed[m] = true
	}
	for marker := range worldScopes {
		if allowed[marker] {
			continue
		}
		if strings.Contains(text, mark(marker)) || strings.Contains(text, "pack."+strings.ToLower(marker)+".") {
			t.Errorf("caller %s: %s leaks %s:\n%s", caller, what, marker, text)
		}
	}
}

// mark is the marker word of the skills stored in a world scope.
func mark(marker string) string { return "MARK" + marker + "END" }

func mustJSON2(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// prettyJSON renders v as a golden file shows it: indented, with <, > and
// & as they are.
func prettyJSON(t *testing.T, v any) string {
	t.Helper()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestGetSkillsScopeLeak(t *testing.T) {
	w := newScopeWorld(t)
	ctx := context.Background()
	all := w.allNames()
	for caller, sc := range worldScopes {
		t.Run(caller, func(t *testing.T) {
			var found []string
			for i := 0; i < len(all); i += MaxGetNames {
				names := all[i:min(i+MaxGetNames, len(all))]
				for _, format := range []string{FormatInjection, FormatRaw} {
					res, err := w.s.GetSkills(ctx, SkillGetRequest{Names: names, Format: format, Scope: sc, MaxTokens: MaxGetTokens})
					if err != nil {
						t.Fatal(err)
					}
					// Missing echoes the caller's own names; everything else
					// must come from the caller's scope.
					res.Missing = nil
					checkMarkers(t, caller, "skill_get "+format, mustJSON2(t, res))
					if format == FormatRaw {
						for _, d := range res.Skills {
							found = append(found, d.Name)
						}
					}
				}
			}
			if want := 3 * len(visibleMarkers[caller]); len(found) != want {
				t.Errorf("found %d skills %v, want %d", len(found), found, want)
			}
			// The shadowed name resolves to the most specific visible scope.
			res, err := w.s.GetSkills(ctx, SkillGetRequest{Names: []string{"pack.shared.deploy"}, Scope: sc})
			if err != nil {
				t.Fatal(err)
			}
			vis := visibleMarkers[caller]
			if want := "Shared deploy " + mark(vis[len(vis)-1]); len(res.Skills) != 1 || res.Skills[0].Title != want {
				t.Errorf("shadowed skill = %+v, want title %q", res.Skills, want)
			}
		})
	}
}

// TestGetSkillsMissingIsUniform checks that a name stored only in another
// scope and a name that exists nowhere give identical answers.
func TestGetSkillsMissingIsUniform(t *testing.T) {
	w := newScopeWorld(t)
	ctx := context.Background()
	sc := worldScopes["T1P1"]
	other, err := w.s.GetSkills(ctx, SkillGetRequest{Names: []string{"pack.t2.deploy_1"}, Scope: sc})
	if err != nil {
		t.Fatal(err)
	}
	none, err := w.s.GetSkills(ctx, SkillGetRequest{Names: []string{"pack.nowhere.deploy_1"}, Scope: sc})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&SkillGetResult{Skills: []SkillContent{}, Missing: []string{"pack.t2.deploy_1"}}, other); diff != "" {
		t.Errorf("other scope (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&SkillGetResult{Skills: []SkillContent{}, Missing: []string{"pack.nowhere.deploy_1"}}, none); diff != "" {
		t.Errorf("unknown (-want +got):\n%s", diff)
	}
}

func TestGetSkillsValidation(t *testing.T) {
	s, _ := retrievalStore(t, nil)
	ctx := context.Background()
	eleven := make([]string, 11)
	for i := range eleven {
		eleven[i] = fmt.Sprint("n", i)
	}
	tests := []struct {
		name string
		req  SkillGetRequest
		want error
	}{
		{"no names", SkillGetRequest{}, ErrBadNames},
		{"eleven names", SkillGetRequest{Names: eleven}, ErrBadNames},
		{"blank name", SkillGetRequest{Names: []string{"a", " "}}, ErrBadNames},
		{"long name", SkillGetRequest{Names: []string{strings.Repeat("x", MaxSkillNameLen+1)}}, ErrBadNames},
		{"format", SkillGetRequest{Names: []string{"a"}, Format: "html"}, ErrBadFormat},
		{"tokens low", SkillGetRequest{Names: []string{"a"}, MaxTokens: 199}, ErrBadMaxTokens},
		{"tokens high", SkillGetRequest{Names: []string{"a"}, MaxTokens: 6001}, ErrBadMaxTokens},
		{"tokens negative", SkillGetRequest{Names: []string{"a"}, MaxTokens: -1}, ErrBadMaxTokens},
		{"scope", SkillGetRequest{Names: []string{"a"}, Scope: Scope{Mode: "planet"}}, ErrBadScope},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.GetSkills(ctx, tt.req)
			if !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
		})
	}
	for _, ok := range []SkillGetRequest{
		{Names: []string{"a"}, MaxTokens: 200}, {Names: []string{"a"}, MaxTokens: 6000}, {Names: eleven[:10], Format: FormatRaw},
	} {
		if _, err := s.GetSkills(ctx, ok); err != nil {
			t.Errorf("GetSkills(%+v): %v", ok, err)
		}
	}
	s.Close()
	if _, err := s.GetSkills(ctx, SkillGetRequest{Names: []string{"a"}}); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
}

func TestGetSkillsGoldenAndJSON(t *testing.T) {
	s, log := retrievalStore(t, nil)
	ctx := context.Background()
	put(t, s, loginSkill())
	put(t, s, SkillRecord{
		Name: "pack.docs.release_notes", Title: "Write release notes", Trigger: "Asked to summarise changes for a release",
		Description:  "Asked to summarise changes for a release",
		Instructions: "# Release notes\n\nGroup changes by area.\n\n- Lead with breaking changes\n- Link each entry to its pull request",
	})
	req := SkillGetRequest{Names: []string{"pack.core.browser_auth.login_basic", "PACK.DOCS.RELEASE_NOTES", "pack.core.gone"}}
	res, err := s.GetSkills(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "skill_get_injection.txt", res.FormattedContext)
	checkGolden(t, "skill_get.json", prettyJSON(t, res))

	req.Format = FormatRaw
	raw, err := s.GetSkills(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "skill_get_raw.txt", raw.FormattedContext)
	if diff := cmp.Diff(res.Skills, raw.Skills); diff != "" {
		t.Errorf("skills differ between formats (-injection +raw):\n%s", diff)
	}

	ev := log.last(t, EventSkillGet)
	want := map[string]any{
		"names":            []string{"pack.core.browser_auth.login_basic", "PACK.DOCS.RELEASE_NOTES", "pack.core.gone"},
		"returned_count":   2,
		"max_tokens":       DefaultGetTokens,
		"final_tokens_est": EstimateTokens(raw.FormattedContext),
	}
	if diff := cmp.Diff(want, ev.Fields); diff != "" {
		t.Errorf("skill_get event (-want +got):\n%s", diff)
	}
}

// TestGetSkillsBudget fetches ten very long skills: the formatted context
// stays within every budget while the skills themselves stay whole.
func TestGetSkillsBudget(t *testing.T) {
	s, log := retrievalStore(t, nil)
	ctx := context.Background()
	var names []string
	long := strings.Repeat("carefully check the rendered page and every field on it ", 6)
	for i := range 10 {
		sk := SkillRecord{
			Name: fmt.Sprintf("pack.big.skill_%02d", i), Title: "Big skill " + long[:40], Trigger: "when " + long,
			Description: long, TaskType: "browser", Instructions: strings.Repeat(long+"\n", 12),
		}
		for j := range 25 {
			sk.Steps = append(sk.Steps, fmt.Sprintf("step %d: %s", j, long))
			sk.Preconditions = append(sk.Preconditions, long)
			sk.FailureModes = append(sk.FailureModes, long)
		}
		put(t, s, sk)
		names = append(names, sk.Name)
	}
	for _, budget := range []int{200, 201, 333, 500, 1000, 1500, 2999, 6000} {
		for _, format := range []string{FormatInjection, FormatRaw} {
			res, err := s.GetSkills(ctx, SkillGetRequest{Names: names, MaxTokens: budget, Format: format})
			if err != nil {
				t.Fatal(err)
			}
			if got := EstimateTokens(res.FormattedContext); got > budget {
				t.Errorf("budget %d %s: %d tokens", budget, format, got)
			}
			if len(res.Skills) != 10 || len(res.Skills[9].Steps) != 25 {
				t.Errorf("budget %d: skills shortened", budget)
			}
			if !strings.Contains(res.FormattedContext, names[0]) {
				t.Errorf("budget %d %s: first skill missing from the context", budget, format)
			}
			if ev := log.last(t, EventSkillGet); ev.Fields["final_tokens_est"].(int) > budget {
				t.Errorf("event reports %v tokens", ev.Fields["final_tokens_est"])
			}
		}
	}
}

func TestGetSkillsCountsUse(t *testing.T) {
	s, _ := retrievalStore(t, nil)
	ctx := context.Background()
	put(t, s, loginSkill())
	put(t, s, SkillRecord{Name: "pack.x.other", Trigger: "other"})
	for range 3 {
		if _, err := s.GetSkills(ctx, SkillGetRequest{Names: []string{"pack.core.browser_auth.login_basic", "pack.none"}}); err != nil {
			t.Fatal(err)
		}
	}
	// Two spellings of one name fetch and count the skill once.
	res, err := s.GetSkills(ctx, SkillGetRequest{Names: []string{"pack.core.browser_auth.login_basic", "PACK.CORE.browser_auth.login_basic"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skills) != 1 || len(res.Missing) != 0 || strings.Count(res.FormattedContext, "## ") != 1 {
		t.Errorf("two spellings: %d skills, missing %v:\n%s", len(res.Skills), res.Missing, res.FormattedContext)
	}
	found, err := lookupSkills(ctx, s, Scope{}, []string{"pack.core.browser_auth.login_basic", "pack.x.other"})
	if err != nil {
		t.Fatal(err)
	}
	if got := found["pack.core.browser_auth.login_basic"]; got.UseCount != 4 || got.LastUsed.IsZero() {
		t.Errorf("fetched skill: use_count %d, last_used %v", got.UseCount, got.LastUsed)
	}
	if got := found["pack.x.other"]; got.UseCount != 0 || !got.LastUsed.IsZero() {
		t.Errorf("untouched skill: use_count %d, last_used %v", got.UseCount, got.LastUsed)
	}
}

// leakTools are indexed tools: some visible to the test run, some not.
var leakTools = []ToolRecord{
	{Name: "web_search", Description: "search the web", LoadingMode: "always", SideEffects: "read"},
	{Name: "browser_login_tool", Description: "log in", LoadingMode: "deferred", SideEffects: "external"},
	{Name: "admin.purge_all", Description: "delete everything", LoadingMode: "deferred", SideEffects: "write"},
	{Name: "tool_search", Description: "find tools", LoadingMode: "always", SideEffects: "read"},
}

// deniedNames are tools the run may not see: two indexed, one only passed
// in KnownTools.
var deniedNames = []string{"browser_login_tool", "admin.purge_all", "vault_read_secret"}

func leakVisible(name string) bool { return name == "web_search" || name == "tool_search" }

// TestToolReferenceLeak puts denied tool names in every text field of a
// skill and checks that no output format shows them, while the visible
// tool stays named.
func TestToolReferenceLeak(t *testing.T) {
	s, _ := retrievalStore(t, nil)
	ctx := context.Background()
	if _, err := s.SyncTools(ctx, leakTools); err != nil {
		t.Fatal(err)
	}
	mention := "web_search helps; use `browser_login_tool`, then admin.purge_all and vault_read_secret"
	put(t, s, SkillRecord{
		Name:          "pack.ops.cleanup",
		Title:         "Cleanup with browser_login_tool",
		Trigger:       "cleanup needed; " + mention,
		Description:   mention,
		TaskType:      "api",
		Steps:         []string{mention, "Call `admin.purge_all(force=true)`", "then VAULT_READ_SECRET."},
		Preconditions: []string{mention},
		FailureModes:  []string{mention},
		Instructions:  "## Notes\n" + mention + "\n```\nbrowser_login_tool --user x\n```",
		Pinned:        true,
	})
	known := []string{"vault_read_secret"}
	var outputs []string
	for _, format := range []string{FormatInjection, FormatRaw} {
		res, err := s.GetSkills(ctx, SkillGetRequest{Names: []string{"pack.ops.cleanup"}, Format: format,
			VisibleTool: leakVisible, KnownTools: known})
		if err != nil {
			t.Fatal(err)
		}
		outputs = append(outputs, mustJSON2(t, res), res.FormattedContext)
	}
	list, err := s.ListSkills(ctx, SkillListRequest{VisibleTool: leakVisible, KnownTools: known})
	if err != nil {
		t.Fatal(err)
	}
	outputs = append(outputs, mustJSON2(t, list))
	dir, err := s.Directory(ctx, DirectoryConfig{IncludeFields: DirectoryFields, VisibleTool: leakVisible, KnownTools: known}, Scope{})
	if err != nil {
		t.Fatal(err)
	}
	outputs = append(outputs, dir.Render(), mustJSON2(t, dir.Entries))
	rel, err := s.Relevant(ctx, RelevantRequest{Task: "cleanup needed", VisibleTool: leakVisible, KnownTools: known})
	if err != nil {
		t.Fatal(err)
	}
	if len(rel.Skills) == 0 {
		t.Error("Relevant found nothing for the cleanup task")
	}
	outputs = append(outputs, mustJSON2(t, rel), rel.FormattedContext)
	for i, out := range outputs {
		low := strings.ToLower(out)
		for _, d := range deniedNames {
			if strings.Contains(low, d) {
				t.Errorf("output %d names denied tool %s:\n%s", i, d, out)
			}
		}
		if !strings.Contains(out, "web_search") {
			t.Errorf("output %d lost the visible tool:\n%s", i, out)
		}
	}

	// Without a visibility test nothing is rewritten.
	res, err := s.GetSkills(ctx, SkillGetRequest{Names: []string{"pack.ops.cleanup"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.FormattedContext, "browser_login_tool") {
		t.Error("tool names rewritten without a visibility test")
	}
}

func TestRedactionInOutputs(t *testing.T) {
	sk := SkillRecord{
		Name: "pack.crm.contact", Title: "Contact jane@example.com", Trigger: "call +44 20 7946 0958",
		Steps:        []string{"Send Authorization: Bearer abc123def456ghi", "Open https://crm.example.com/c?session_id=9f8e&x=1"},
		Instructions: "api_key=abcdef123456", Pinned: true,
	}
	secrets := []string{"jane@example.com", "7946", "abc123def456ghi", "session_id", "abcdef123456"}
	for _, disable := range []bool{false, true} {
		t.Run(fmt.Sprint("disable=", disable), func(t *testing.T) {
			s, _ := retrievalStore(t, &Options{DisableRedaction: disable})
			ctx := context.Background()
			put(t, s, sk)
			get, err := s.GetSkills(ctx, SkillGetRequest{Names: []string{sk.Name}})
			if err != nil {
				t.Fatal(err)
			}
			list, err := s.ListSkills(ctx, SkillListRequest{})
			if err != nil {
				t.Fatal(err)
			}
			dir, err := s.Directory(ctx, DirectoryConfig{}, Scope{})
			if err != nil {
				t.Fatal(err)
			}
			outputs := map[string]string{
				"get json": mustJSON2(t, get), "get context": get.FormattedContext,
				"list": mustJSON2(t, list), "directory": dir.Render(),
			}
			rel, err := s.Relevant(ctx, RelevantRequest{Task: "contact crm"})
			if err != nil || len(rel.Skills) != 1 {
				t.Fatalf("Relevant: %+v, %v", rel, err)
			}
			outputs["relevant"] = rel.FormattedContext
			all := strings.Join(func() []string {
				var v []string
				for _, o := range outputs {
					v = append(v, o)
				}
				return v
			}(), "\n")
			for _, secret := range secrets {
				if got := strings.Contains(all, secret); got != disable {
					t.Errorf("secret %q present = %v, want %v", secret, got, disable)
				}
			}
			if !disable {
				for what, out := range outputs {
					if !strings.Contains(out, "[REDACTED_") {
						t.Errorf("%s has no placeholder:\n%s", what, out)
					}
				}
			}
		})
	}
}

// TestRetrievalHammer runs every retrieval call from many goroutines at
// once: under -race this checks the store's locking, and the use counts
// must add up exactly.
func TestRetrievalHammer(t *testing.T) {
	s, _ := relevantStore(t, nil)
	ctx := context.Background()
	const workers, rounds = 8, 15
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				var err error
				switch (w + i) % 4 {
				case 0:
					_, err = s.GetSkills(ctx, SkillGetRequest{Names: []string{"pack.docs.release_notes"}})
				case 1:
					_, err = s.ListSkills(ctx, SkillListRequest{PageSize: 2})
				case 2:
					var d *Directory
					if d, err = s.Directory(ctx, DirectoryConfig{}, Scope{}); err == nil {
						d.Render()
					}
				case 3:
					_, err = s.Relevant(ctx, RelevantRequest{Task: "parse ISO dates"})
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	found, err := lookupSkills(ctx, s, Scope{}, []string{"pack.docs.release_notes", "pack.core.code.parse_iso_dates"})
	if err != nil {
		t.Fatal(err)
	}
	calls := workers * rounds / 4
	if got := found["pack.docs.release_notes"].UseCount; got != calls {
		t.Errorf("release_notes use_count %d, want %d", got, calls)
	}
	if got := found["pack.core.code.parse_iso_dates"].UseCount; got != calls {
		t.Errorf("parse_iso_dates use_count %d, want %d", got, calls)
	}
}

// lookupSkills is skillsByName in a read transaction of its own.
func lookupSkills(ctx context.Context, s *Store, sc Scope, names []string) (found map[string]idSkill, err error) {
	err = s.read(ctx, func(rd *readTx) error {
		found, err = s.skillsByName(ctx, rd, sc, names)
		return err
	})
	return found, err
}
