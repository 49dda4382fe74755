package evalset

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestLoadCatalog(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Tool
	}{
		{
			name: "plain shape",
			in:   `{"name":"git_status","description":"Show the working tree status.","parameters":{"type":"object","properties":{"path":{"type":"string","description":"Repository path."}}}}`,
			want: []Tool{{Name: "git_status", Description: "Show the working tree status.", Line: 1,
				Params: []Param{{"path", "Repository path."}}}},
		},
		{
			name: "wrapped shape",
			in:   `{"type":"function","function":{"name":"k8s.scale_deployment","description":"Scale.","parameters":{"type":"object","properties":{"replicas":{"type":"integer","description":"Desired count."},"name":{"type":"string"}}}}}`,
			want: []Tool{{Name: "k8s.scale_deployment", Description: "Scale.", Line: 1,
				Params: []Param{{"replicas", "Desired count."}, {"name", ""}}}},
		},
		{
			name: "mcp inputSchema and no description",
			in:   `{"name":"ping","inputSchema":{"type":"object","properties":{"host":{"type":"string","description":"Host to reach."}}}}`,
			want: []Tool{{Name: "ping", Line: 1, Params: []Param{{"host", "Host to reach."}}}},
		},
		{
			name: "no parameters, blank lines, BOM and CRLF",
			in:   "\xef\xbb\xbf\r\n{\"name\":\"whoami\",\"description\":\"Current user.\"}\r\n\r\n   \n{\"name\":\"now\",\"description\":null,\"parameters\":null}\n",
			want: []Tool{{Name: "whoami", Description: "Current user.", Line: 2}, {Name: "now", Line: 5}},
		},
		{
			name: "nested objects, array items and anyOf",
			in: `{"name":"send_email","description":"Send.","parameters":{"type":"object","properties":{` +
				`"to":{"type":"array","description":"Recipients.","items":{"type":"object","properties":{"address":{"type":"string","description":"Email address."},"name":{"type":"string"}}}},` +
				`"options":{"type":"object","properties":{"priority":{"type":"string","description":"Priority."},"tracking":{"type":"object","properties":{"opens":{"type":"boolean","description":"Track opens."}}}}},` +
				`"body":{"anyOf":[{"type":"object","properties":{"html":{"type":"string"}}},{"type":"object","properties":{"html":{"type":"string","description":"HTML body."},"text":{"type":"string","description":"Plain body."}}}]},` +
				`"flag":true}}}`,
			want: []Tool{{Name: "send_email", Description: "Send.", Line: 1, Params: []Param{
				{"to", "Recipients."}, {"to.address", "Email address."}, {"to.name", ""},
				{"options", ""}, {"options.priority", "Priority."},
				{"options.tracking", ""}, {"options.tracking.opens", "Track opens."},
				{"body", ""}, {"body.html", "HTML body."}, {"body.text", "Plain body."},
				{"flag", ""},
			}}},
		},
		{
			name: "tuple items",
			in:   `{"name":"pair","parameters":{"type":"object","properties":{"p":{"type":"array","items":[{"type":"object","properties":{"x":{"description":"X."}}},true]}}}}`,
			want: []Tool{{Name: "pair", Line: 1, Params: []Param{{"p", ""}, {"p.x", "X."}}}},
		},
		{
			name: "depth cap",
			in:   `{"name":"deep","parameters":{"properties":{"a":{"properties":{"b":{"properties":{"c":{"properties":{"d":{"properties":{"e":{"properties":{"f":{"properties":{"g":{}}}}}}}}}}}}}}}}`,
			want: []Tool{{Name: "deep", Line: 1, Params: []Param{
				{"a", ""}, {"a.b", ""}, {"a.b.c", ""}, {"a.b.c.d", ""}, {"a.b.c.d.e", ""}, {"a.b.c.d.e.f", ""},
			}}},
		},
		{
			name: "extra keys are ignored",
			in:   `{"name":"x","description":"d","strict":true,"parameters":{"type":"object","properties":{},"additionalProperties":false}}`,
			want: []Tool{{Name: "x", Description: "d", Line: 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LoadCatalog(strings.NewReader(tt.in))
			if err != nil {
				t.Fatalf("LoadCatalog: %v", err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(Tool{}, "Parameters"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadCatalogKeepsSchema(t *testing.T) {
	schema := `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`
	got, err := LoadCatalog(strings.NewReader(`{"name":"s","parameters":` + schema + `}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(got[0].Parameters) != schema {
		t.Errorf("Parameters = %s, want %s", got[0].Parameters, schema)
	}
}

func TestLoadCatalogErrors(t *testing.T) {
	good := `{"name":"ok","description":"fine"}`
	tests := []struct {
		name      string
		in        string
		line      int
		field     string
		firstLine int
	}{
		{"not json", "nope", 1, "", 0},
		{"array line", `[1,2]`, 1, "", 0},
		{"truncated", `{"name":"x"`, 1, "", 0},
		{"trailing data", `{"name":"x"} {}`, 1, "", 0},
		{"duplicate key", `{"name":"x","name":"y"}`, 1, "", 0},
		{"missing name", good + "\n" + `{"description":"d"}`, 2, "name", 0},
		{"name not string", `{"name":7}`, 1, "name", 0},
		{"empty name", `{"name":""}`, 1, "name", 0},
		{"name with space", `{"name":"send email"}`, 1, "name", 0},
		{"name too long", `{"name":"` + strings.Repeat("a", 300) + `"}`, 1, "name", 0},
		{"description not string", `{"name":"x","description":["a"]}`, 1, "description", 0},
		{"wrapped bad type", `{"type":"tool","function":{"name":"x"}}`, 1, "type", 0},
		{"wrapped function not object", `{"type":"function","function":"x"}`, 1, "function", 0},
		{"wrapped missing function", `{"type":"function"}`, 1, "function", 0},
		{"wrapped missing name", `{"type":"function","function":{"description":"d"}}`, 1, "function.name", 0},
		{"parameters not object", `{"name":"x","parameters":"{}"}`, 1, "parameters", 0},
		{"two schemas", `{"name":"x","parameters":{},"inputSchema":{}}`, 1, "inputSchema", 0},
		{"properties not object", `{"name":"x","parameters":{"properties":[]}}`, 1, "parameters.properties", 0},
		{"property not schema", `{"name":"x","parameters":{"properties":{"a":"string"}}}`, 1, "parameters.properties.a", 0},
		{"empty property name", `{"name":"x","parameters":{"properties":{"":{}}}}`, 1, "parameters.properties", 0},
		{"property description not string", `{"type":"function","function":{"name":"x","parameters":{"properties":{"a":{"description":1}}}}}`, 1, "function.parameters.properties.a.description", 0},
		{"items not schema", `{"name":"x","parameters":{"properties":{"a":{"items":"x"}}}}`, 1, "parameters.properties.a.items", 0},
		{"anyOf not array", `{"name":"x","parameters":{"anyOf":{}}}`, 1, "parameters.anyOf", 0},
		{"anyOf item not schema", `{"name":"x","parameters":{"anyOf":[1]}}`, 1, "parameters.anyOf[0]", 0},
		{"duplicate name", good + "\n\n" + `{"name":"ok"}`, 3, "name", 1},
		{"duplicate wrapped name", good + "\n" + `{"type":"function","function":{"name":"ok"}}`, 2, "function.name", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadCatalog(strings.NewReader(tt.in))
			if !errors.Is(err, ErrBadCatalog) {
				t.Fatalf("err = %v, want ErrBadCatalog", err)
			}
			if errors.Is(err, ErrBadQueries) {
				t.Errorf("err %v also matches ErrBadQueries", err)
			}
			var le *LineError
			if !errors.As(err, &le) {
				t.Fatalf("err = %T %v, want *LineError", err, err)
			}
			got := [3]any{le.Line, le.Field, le.FirstLine}
			want := [3]any{tt.line, tt.field, tt.firstLine}
			if got != want {
				t.Errorf("line, field, first line = %v, want %v (%v)", got, want, err)
			}
			if le.Detail == "" {
				t.Errorf("no detail in %v", err)
			}
		})
	}
}

func TestLoadCatalogEmpty(t *testing.T) {
	for _, in := range []string{"", "\n\n  \n"} {
		if _, err := LoadCatalog(strings.NewReader(in)); !errors.Is(err, ErrBadCatalog) {
			t.Errorf("LoadCatalog(%q) err = %v, want ErrBadCatalog", in, err)
		}
	}
}

func TestLoadCatalogLongLine(t *testing.T) {
	in := `{"name":"a"}` + "\n" + `{"name":"b","description":"` + strings.Repeat("x", maxLineBytes) + `"}`
	_, err := LoadCatalog(strings.NewReader(in))
	var le *LineError
	if !errors.As(err, &le) || le.Line != 2 {
		t.Fatalf("err = %v, want a *LineError on line 2", err)
	}
}

func FuzzLoadCatalog(f *testing.F) {
	f.Add(`{"name":"a","description":"d","parameters":{"type":"object","properties":{"x":{"type":"string","description":"X"}}}}`)
	f.Add(`{"type":"function","function":{"name":"b","parameters":{"properties":{"o":{"type":"object","properties":{"y":{}}},"l":{"items":{"properties":{"z":{}}}}}}}}`)
	f.Add(`{"name":"c","inputSchema":{"anyOf":[{"properties":{"p":true}},true]}}` + "\n" + `{"name":"c"}`)
	f.Add("\xef\xbb\xbf{\"name\":\"d\"}\r\n\r\n")
	f.Add(`{"name":"e","parameters":{"properties":{"a":{"items":[{"properties":{"b":{}}}]}}}}`)
	f.Add(`{"name":1}`)
	f.Fuzz(func(t *testing.T, in string) {
		tools, err := LoadCatalog(strings.NewReader(in))
		if err != nil {
			if !errors.Is(err, ErrBadCatalog) {
				t.Fatalf("err = %v, want one matching ErrBadCatalog", err)
			}
			return
		}
		if len(tools) == 0 {
			t.Fatal("no tools and no error")
		}
		seen := map[string]bool{}
		for _, tool := range tools {
			if msg := checkName(tool.Name); msg != "" {
				t.Fatalf("accepted bad name: %s", msg)
			}
			if seen[tool.Name] {
				t.Fatalf("duplicate name %q accepted", tool.Name)
			}
			seen[tool.Name] = true
			if tool.Line < 1 {
				t.Fatalf("tool %q has line %d", tool.Name, tool.Line)
			}
			params := map[string]bool{}
			for _, p := range tool.Params {
				if p.Name == "" || params[p.Name] {
					t.Fatalf("tool %q: empty or repeated param %q", tool.Name, p.Name)
				}
				params[p.Name] = true
			}
		}
	})
}
