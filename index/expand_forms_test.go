package index

import (
	"context"
	"slices"
	"testing"

	"github.com/skillhost/skillhost/packs"
)

// TestExpansionSmallCatalogue: on a small catalogue where most tools
// mention files, a four-letter typo, a letters-and-digits name written
// without its hyphen still find their tool first, and "save" brings the
// writing tool up (second: "daylight saving" is a literal match of save).
func TestExpansionSmallCatalogue(t *testing.T) {
	s := openTest(t, nil)
	tools := []ToolRecord{
		{Name: "read_file", Description: "Read a text file from the granted folder, a window of lines at a time."},
		{Name: "write_file", Description: "Write text to a file in the granted folder: overwrite or append."},
		{Name: "list_dir", Description: "List the files and folders in a directory."},
		{Name: "file_info", Description: "Report whether a path is a file or directory, with its size."},
		{Name: "search_files", Description: "Search the text files under a directory for matching lines."},
		{Name: "json_query", Description: "Select values from a JSON document with a path."},
		{Name: "tz_convert", Description: "Convert a date and time between time zones (daylight saving aware)."},
		{Name: "hash", Description: "Compute the SHA-256 or SHA-512 digest of a text, as hex."},
	}
	for i := range tools {
		tools[i].LoadingMode = packs.LoadingDeferred
	}
	if _, err := s.SyncTools(context.Background(), tools); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{
		"reed a file":        "read_file", // reed → read, a four-letter slip
		"sha256 of a string": "hash",      // sha256 → "sha 256"
		"SHA512 digest":      "hash",      //
	} {
		if got := searchNames(t, s, q); len(got) == 0 || got[0] != want {
			t.Errorf("%q: got %v, want %s first", q, got, want)
		}
	}
	if got := searchNames(t, s, "save this text to a file"); !slices.Contains(got[:min(2, len(got))], "write_file") {
		t.Errorf("save this text to a file: got %v, want write_file in the first two", got)
	}
	if got := searchNames(t, s, "sha256"); !slices.Contains(got, "hash") {
		t.Errorf("sha256: got %v, want hash", got)
	}
}
