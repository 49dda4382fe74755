package grant_test

import (
	"strings"
	"testing"

	"github.com/skillhost/skillhost/grant"
)

// The filesystem limits read from either file, by the one check both
// share: sizes for max_write, a positive integer up to the ceiling for
// max_open_files, and neither zero.
func TestParseLimitsFilesystem(t *testing.T) {
	tests := []struct {
		name    string
		raw     grant.LimitsText
		want    grant.Limits
		wantErr string
	}{
		{"both", grant.LimitsText{MaxWrite: "1MiB", MaxOpenFiles: "16"}, grant.Limits{MaxWriteBytes: 1 << 20, MaxOpenFiles: 16}, ""},
		{"bytes", grant.LimitsText{MaxWrite: "4096"}, grant.Limits{MaxWriteBytes: 4096}, ""},
		{"the ceiling", grant.LimitsText{MaxOpenFiles: "1048576"}, grant.Limits{MaxOpenFiles: grant.MaxOpenFilesCeiling}, ""},
		{"unset", grant.LimitsText{}, grant.Limits{}, ""},
		{"zero write", grant.LimitsText{MaxWrite: "0"}, grant.Limits{}, `max_write "0" must be a positive size such as 64MiB; to refuse every write, mount the folders read-only`},
		{"zero write with a unit", grant.LimitsText{MaxWrite: "0KiB"}, grant.Limits{}, `max_write "0KiB" must be a positive size`},
		{"negative write", grant.LimitsText{MaxWrite: "-5"}, grant.Limits{}, `max_write: size "-5" must start with a number`},
		{"write too large", grant.LimitsText{MaxWrite: "99999999999GiB"}, grant.Limits{}, `max_write: size "99999999999GiB" is too large`},
		{"zero open", grant.LimitsText{MaxOpenFiles: "0"}, grant.Limits{}, `max_open_files 0 must be a positive number of files, such as 64`},
		{"negative open", grant.LimitsText{MaxOpenFiles: "-1"}, grant.Limits{}, `max_open_files -1 must be a positive number of files`},
		{"very negative open", grant.LimitsText{MaxOpenFiles: "-99999999999999999999"}, grant.Limits{}, `max_open_files -99999999999999999999 must be a positive number of files`},
		{"open above the ceiling", grant.LimitsText{MaxOpenFiles: "1048577"}, grant.Limits{}, `max_open_files 1048577 is above 1048576, the most files a process may hold open`},
		{"open past int64", grant.LimitsText{MaxOpenFiles: "99999999999999999999"}, grant.Limits{}, `max_open_files 99999999999999999999 is above 1048576`},
		{"open not a number", grant.LimitsText{MaxOpenFiles: "many"}, grant.Limits{}, `max_open_files many must be a positive number of files`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := grant.ParseLimits(tt.raw)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v; want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("limits = %+v; want %+v", got, tt.want)
			}
		})
	}
}
