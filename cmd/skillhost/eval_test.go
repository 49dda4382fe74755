package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const evalCatalog = `{"name":"send_email","description":"Send an email message to one or more recipients.","parameters":{"type":"object","properties":{"to":{"type":"string","description":"recipient address"}}}}
{"type":"function","function":{"name":"get_weather_forecast","description":"Daily weather forecast for a city.","parameters":{"type":"object","properties":{"city":{"type":"string","description":"city name"}}}}}
{"name":"create_invoice","description":"Create an invoice for a customer.","parameters":{"type":"object","properties":{"customer_id":{"type":"string","description":"customer"}}}}
`

func TestEvalJSON(t *testing.T) {
	dir := t.TempDir()
	cat := writeFile(t, dir, "tools.jsonl", evalCatalog)
	qs := writeFile(t, dir, "queries.jsonl", `{"query":"send_email","expected":["send_email"]}
{"query":"weather forecast for paris","expected":["get_weather_forecast"]}
{"query":"bill the customer","expected":["create_invoice","send_email"]}
`)
	r := cli(t, "", "eval", "--catalog", cat, "--queries", qs, "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var m map[string]float64
	if err := json.Unmarshal([]byte(r.stdout), &m); err != nil {
		t.Fatalf("output is not one JSON object: %v\n%s", err, r.stdout)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if got, want := strings.Join(keys, ","), "mrr_at_10,n,recall_at_1,recall_at_10,recall_at_5"; got != want {
		t.Fatalf("keys = %s", got)
	}
	if m["n"] != 3 {
		t.Errorf("n = %v, want 3", m["n"])
	}
	// The exact name and the forecast request are found first.
	if m["recall_at_1"] < 2.0/3-1e-9 {
		t.Errorf("recall_at_1 = %v, want at least 2/3", m["recall_at_1"])
	}
	for k, v := range m {
		if k != "n" && (v < 0 || v > 1) {
			t.Errorf("%s = %v, outside [0,1]", k, v)
		}
	}
}

func TestEvalErrors(t *testing.T) {
	dir := t.TempDir()
	cat := writeFile(t, dir, "tools.jsonl", evalCatalog)
	bad := writeFile(t, dir, "bad.jsonl", "{\"name\":\"ok\",\"description\":\"x\"}\n{not json\n")
	unknown := writeFile(t, dir, "unknown.jsonl", `{"query":"x","expected":["no_such_tool"]}`+"\n")
	tests := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"no flags", []string{"eval"}, "needs --catalog and --queries"},
		{"bad catalog line", []string{"eval", "--catalog", bad, "--queries", unknown}, "line 2"},
		{"unknown expected tool", []string{"eval", "--catalog", cat, "--queries", unknown}, "no_such_tool"},
		{"missing file", []string{"eval", "--catalog", filepath.Join(dir, "nope"), "--queries", unknown}, "nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cli(t, "", tt.args...)
			if r.code != exitUsage {
				t.Fatalf("exit %d, want %d; stderr %s", r.code, exitUsage, r.stderr)
			}
			if !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("stderr %q does not mention %q", r.stderr, tt.stderr)
			}
		})
	}
}

// TestEvalLargeCatalogDeterministic: on a catalogue far larger than the
// index reloads inside a search (thousands of tools), eval ranks with query
// expansion from its first query, and two runs print the same figures.
func TestEvalLargeCatalogDeterministic(t *testing.T) {
	dir := t.TempDir()
	words := []string{"chart", "invoice", "calendar", "photo", "translate", "stock", "ticket", "playlist",
		"recipe", "flight", "currency", "lyrics", "parcel", "garden", "museum", "podcast"}
	var cat, qs strings.Builder
	cat.WriteString(`{"name":"records_purge","description":"Erase stored records permanently."}` + "\n")
	cat.WriteString(`{"name":"weather_outlook","description":"Weather forecast for the next days at a place."}` + "\n")
	for i := range 4500 {
		a, b, c := words[i%len(words)], words[(i/len(words))%len(words)], words[(i*7+3)%len(words)]
		fmt.Fprintf(&cat, `{"name":"f%d_%s_%s","description":"Shows the %s %s of a %s."}`+"\n", i, a, b, a, b, c)
		if i%90 == 0 {
			fmt.Fprintf(&qs, `{"query":"the %s of my %s","expected":["f%d_%s_%s"]}`+"\n", b, c, i, a, b)
		}
	}
	// Found only by expansion: wipe is a synonym of erase, the other two
	// words are typos.
	qs.WriteString(`{"query":"wipe it all","expected":["records_purge"]}` + "\n")
	qs.WriteString(`{"query":"wether tomorow","expected":["weather_outlook"]}` + "\n")
	catFile := writeFile(t, dir, "tools.jsonl", cat.String())
	expFile := writeFile(t, dir, "expanded.jsonl", `{"query":"wipe it all","expected":["records_purge"]}
{"query":"wether tomorow","expected":["weather_outlook"]}
`)
	qFile := writeFile(t, dir, "queries.jsonl", qs.String())

	r := cli(t, "", "eval", "--catalog", catFile, "--queries", expFile, "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var m map[string]float64
	if err := json.Unmarshal([]byte(r.stdout), &m); err != nil {
		t.Fatalf("output is not one JSON object: %v\n%s", err, r.stdout)
	}
	if m["recall_at_1"] != 1 {
		t.Errorf("recall_at_1 = %v on requests found only by expansion, want 1", m["recall_at_1"])
	}
	first := cli(t, "", "eval", "--catalog", catFile, "--queries", qFile, "--json")
	second := cli(t, "", "eval", "--catalog", catFile, "--queries", qFile, "--json")
	if first.code != 0 || second.code != 0 {
		t.Fatalf("exit %d, %d: %s%s", first.code, second.code, first.stderr, second.stderr)
	}
	if first.stdout != second.stdout {
		t.Errorf("two runs differ:\n%s\n%s", first.stdout, second.stdout)
	}
}
