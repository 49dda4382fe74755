package evalset

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// fakeSearch answers each query text with a fixed ranking and records the
// limits it was asked for.
type fakeSearch struct {
	rankings map[string][]string
	limits   []int
}

func (f *fakeSearch) search(_ context.Context, query string, limit int) ([]string, error) {
	f.limits = append(f.limits, limit)
	return f.rankings[query], nil
}

func TestEvaluate(t *testing.T) {
	eleven := strings.Fields("a b c d e f g h i j hit")
	f := &fakeSearch{rankings: map[string][]string{
		"first":    {"want", "x", "y"},             // rank 1
		"third":    {"x", "y", "want"},             // rank 3
		"sixth":    {"a", "b", "c", "d", "e", "w"}, // rank 6
		"any":      {"x", "other", "want"},         // rank 2: "other" is expected too
		"missing":  {"x", "y"},                     // no hit
		"empty":    nil,                            // no hit
		"too many": eleven,                         // hit at 11 is cut off
	}}
	queries := []Query{
		{Text: "first", Expected: []string{"want"}},
		{Text: "third", Expected: []string{"want"}},
		{Text: "sixth", Expected: []string{"w"}},
		{Text: "any", Expected: []string{"want", "other"}},
		{Text: "missing", Expected: []string{"want"}},
		{Text: "empty", Expected: []string{"want"}},
		{Text: "too many", Expected: []string{"hit"}, Line: 9},
	}
	rep, err := Run(context.Background(), queries, f.search)
	if err != nil {
		t.Fatal(err)
	}
	// Ranks 1, 3, 6, 2, 0, 0, 0 over 7 queries, worked out by hand.
	want := Metrics{
		N:          7,
		RecallAt1:  1.0 / 7,
		RecallAt5:  3.0 / 7,
		RecallAt10: 4.0 / 7,
		MRRAt10:    (1 + 1.0/3 + 1.0/6 + 1.0/2) / 7,
	}
	if diff := cmp.Diff(want, rep.Metrics, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	var ranks []int
	for _, r := range rep.Results {
		ranks = append(ranks, r.Rank)
	}
	if diff := cmp.Diff([]int{1, 3, 6, 2, 0, 0, 0}, ranks); diff != "" {
		t.Errorf("ranks (-want +got):\n%s", diff)
	}
	if last := rep.Results[6]; len(last.Got) != Limit || last.Line != 9 {
		t.Errorf("last result got %d names, line %d; want %d names, line 9", len(last.Got), last.Line, Limit)
	}
	for _, l := range f.limits {
		if l != 10 {
			t.Errorf("search asked for limit %d, want 10", l)
		}
	}

	m, err := Evaluate(context.Background(), queries, f.search)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rep.Metrics, m); diff != "" {
		t.Errorf("Evaluate and Run disagree (-run +evaluate):\n%s", diff)
	}
}

func TestEvaluatePerfectAndNone(t *testing.T) {
	queries := []Query{{Text: "q1", Expected: []string{"a"}}, {Text: "q2", Expected: []string{"b"}}}
	echo := func(_ context.Context, q string, _ int) ([]string, error) {
		return []string{map[string]string{"q1": "a", "q2": "b"}[q]}, nil
	}
	m, err := Evaluate(context.Background(), queries, echo)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Metrics{N: 2, RecallAt1: 1, RecallAt5: 1, RecallAt10: 1, MRRAt10: 1}, m); diff != "" {
		t.Errorf("perfect (-want +got):\n%s", diff)
	}
	nothing := func(context.Context, string, int) ([]string, error) { return nil, nil }
	m, err = Evaluate(context.Background(), queries, nothing)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Metrics{N: 2}, m); diff != "" {
		t.Errorf("nothing found (-want +got):\n%s", diff)
	}
	if math.IsNaN(m.MRRAt10) {
		t.Error("MRR is NaN")
	}
}

func TestEvaluateErrors(t *testing.T) {
	queries := []Query{{Text: "q1", Expected: []string{"a"}}, {Text: "q2", Expected: []string{"b"}}}
	ok := func(context.Context, string, int) ([]string, error) { return nil, nil }

	if _, err := Evaluate(context.Background(), nil, ok); !errors.Is(err, ErrNoQueries) {
		t.Errorf("no queries: err = %v, want ErrNoQueries", err)
	}
	if _, err := Evaluate(context.Background(), queries, nil); !errors.Is(err, ErrNilSearch) {
		t.Errorf("nil search: err = %v, want ErrNilSearch", err)
	}

	boom := errors.New("index closed")
	calls := 0
	failing := func(context.Context, string, int) ([]string, error) {
		calls++
		return nil, boom
	}
	if _, err := Evaluate(context.Background(), queries, failing); !errors.Is(err, boom) || calls != 1 {
		t.Errorf("failing search: err = %v after %d calls, want the search error after 1", err, calls)
	}

	ctx, cancel := context.WithCancel(context.Background())
	calls = 0
	cancelling := func(context.Context, string, int) ([]string, error) {
		calls++
		cancel()
		return nil, nil
	}
	if _, err := Evaluate(ctx, queries, cancelling); !errors.Is(err, context.Canceled) || calls != 1 {
		t.Errorf("cancelled: err = %v after %d calls, want context.Canceled after 1", err, calls)
	}
}

func TestValidate(t *testing.T) {
	catalog := []Tool{{Name: "a"}, {Name: "b"}}
	if err := Validate(catalog, []Query{{Text: "q", Expected: []string{"a", "b"}}}); err != nil {
		t.Errorf("all present: %v", err)
	}
	queries := []Query{
		{Text: "fine", Expected: []string{"a"}, Line: 1},
		{Text: "one gone", Expected: []string{"a", "zz"}, Line: 2},
		{Text: "built in code", Expected: []string{"x", "b", "y"}},
	}
	err := Validate(catalog, queries)
	if !errors.Is(err, ErrUnknownTools) {
		t.Fatalf("err = %v, want ErrUnknownTools", err)
	}
	var ue *UnknownToolsError
	if !errors.As(err, &ue) {
		t.Fatalf("err = %T, want *UnknownToolsError", err)
	}
	want := []MissingTools{
		{Line: 2, Index: 1, Query: "one gone", Names: []string{"zz"}},
		{Line: 0, Index: 2, Query: "built in code", Names: []string{"x", "y"}},
	}
	if diff := cmp.Diff(want, ue.Missing); diff != "" {
		t.Errorf("missing (-want +got):\n%s", diff)
	}
	for _, name := range []string{"zz", "x", "y", "line 2", "query 3"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not mention %q", err, name)
		}
	}
}
