package egress

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// Header names a guest writes in two cases are one header: their values
// combine in the order of the names sorted, every time, and of two bad
// names the first sorted is the one reported.
func TestHeadersCombineInSortedOrder(t *testing.T) {
	for i := range 64 {
		req, _ := http.NewRequest(http.MethodGet, "https://api.example/x", nil)
		if err := setHeaders(req, map[string]string{"x-trace": "2", "X-Trace": "1", "x-TRACE": "3"}); err != nil {
			t.Fatal(err)
		}
		// "X-Trace" < "x-TRACE" < "x-trace" bytewise.
		if got := req.Header.Values("X-Trace"); !slices.Equal(got, []string{"1", "3", "2"}) {
			t.Fatalf("run %d: values %q", i, got)
		}
		err := setHeaders(req, map[string]string{"b d": "x", "a c": "y"})
		if err == nil || !strings.Contains(err.Error(), `"a c"`) {
			t.Fatalf("run %d: %v; want the error to name \"a c\"", i, err)
		}
	}
}
