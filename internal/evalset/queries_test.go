package evalset

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLoadQueries(t *testing.T) {
	in := "\n" +
		`{"query":"ping the team about the outage","expected":["slack_post_message"]}` + "\n" +
		"   \r\n" +
		`{"query":"upload to a bucket","expected":["s3_upload","gcs_upload"],"note":"either cloud"}` + "\r\n"
	got, err := LoadQueries(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Query{
		{Text: "ping the team about the outage", Expected: []string{"slack_post_message"}, Line: 2},
		{Text: "upload to a bucket", Expected: []string{"s3_upload", "gcs_upload"}, Line: 4},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("queries (-want +got):\n%s", diff)
	}
}

func TestLoadQueriesErrors(t *testing.T) {
	good := `{"query":"q","expected":["t"]}`
	tests := []struct {
		name  string
		in    string
		line  int
		field string
	}{
		{"not json", "query: x", 1, ""},
		{"string line", `"q"`, 1, ""},
		{"missing query", good + "\n" + `{"expected":["t"]}`, 2, "query"},
		{"query not string", `{"query":1,"expected":["t"]}`, 1, "query"},
		{"blank query", `{"query":"  ","expected":["t"]}`, 1, "query"},
		{"missing expected", `{"query":"q"}`, 1, "expected"},
		{"expected a string", `{"query":"q","expected":"t"}`, 1, "expected"},
		{"expected empty", good + "\n\n" + `{"query":"q","expected":[]}`, 3, "expected"},
		{"expected item not string", `{"query":"q","expected":["t",2]}`, 1, "expected[1]"},
		{"expected item empty", `{"query":"q","expected":[""]}`, 1, "expected[0]"},
		{"expected repeated", `{"query":"q","expected":["t","u","t"]}`, 1, "expected[2]"},
		{"duplicate key", `{"query":"q","query":"r","expected":["t"]}`, 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadQueries(strings.NewReader(tt.in))
			if !errors.Is(err, ErrBadQueries) || errors.Is(err, ErrBadCatalog) {
				t.Fatalf("err = %v, want ErrBadQueries only", err)
			}
			var le *LineError
			if !errors.As(err, &le) {
				t.Fatalf("err = %T %v, want *LineError", err, err)
			}
			if le.Line != tt.line || le.Field != tt.field || le.Detail == "" {
				t.Errorf("line %d field %q, want line %d field %q (%v)", le.Line, le.Field, tt.line, tt.field, err)
			}
		})
	}
}

func TestLoadQueriesEmpty(t *testing.T) {
	if _, err := LoadQueries(strings.NewReader("\n \n")); !errors.Is(err, ErrBadQueries) {
		t.Errorf("err = %v, want ErrBadQueries", err)
	}
}

func FuzzLoadQueries(f *testing.F) {
	f.Add(`{"query":"q","expected":["t"]}`)
	f.Add(`{"query":"restart the pod","expected":["k8s.restart_pod","kubectl_rollout_restart"],"note":"x"}` + "\n\n")
	f.Add(`{"query":"q","expected":[]}`)
	f.Add(`{"query":"q","expected":["a","a"]}`)
	f.Add("\xef\xbb\xbf{\"query\":\"\\u00e9\",\"expected\":[\"x\"]}\r\n")
	f.Fuzz(func(t *testing.T, in string) {
		qs, err := LoadQueries(strings.NewReader(in))
		if err != nil {
			if !errors.Is(err, ErrBadQueries) {
				t.Fatalf("err = %v, want one matching ErrBadQueries", err)
			}
			return
		}
		if len(qs) == 0 {
			t.Fatal("no queries and no error")
		}
		for _, q := range qs {
			if strings.TrimSpace(q.Text) == "" || len(q.Expected) == 0 || q.Line < 1 {
				t.Fatalf("accepted bad query %+v", q)
			}
			seen := map[string]bool{}
			for _, name := range q.Expected {
				if checkName(name) != "" || seen[name] {
					t.Fatalf("accepted bad or repeated expected name %q", name)
				}
				seen[name] = true
			}
		}
	})
}
