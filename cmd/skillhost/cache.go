package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
)

func newCacheCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cache info|clean",
		Short: "Show or empty the compilation cache",
		Long: `skillhost keeps the machine code it compiles from modules in a cache folder,
so a module compiles once: the cache subfolder of the state folder when one
is named (--state-dir, state_dir in the operator config,
$SKILLHOST_STATE_DIR), else skillhost in the user's cache folder
($XDG_CACHE_HOME or ~/.cache on Linux, ~/Library/Caches on macOS,
%LocalAppData% on Windows). The discovery index is kept apart, in the state
folder or the user's data folder.

cache info prints where both are, the cache's size and its entries;
cache clean deletes the cache folder (the next call of each module
compiles it again). Neither touches the index.`,
		Example: `  skillhost cache info
  skillhost cache info --json
  skillhost cache clean`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("cache needs info or clean")
			}
			return usageErr("cache %q is not a cache command; give info or clean", args[0])
		},
		RunE: func(cmd *cobra.Command, args []string) error { return nil },
	}
	var asJSON bool
	info := &cobra.Command{
		Use:   "info",
		Short: "Print where the compilation cache and the index are, and the cache's size and entries",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := stateOf(g)
			if err != nil {
				return err
			}
			files, size, err := dirUsage(st.Cache)
			if err != nil {
				return usageErr("reading the cache %s: %v", st.Cache, pathErr(err))
			}
			var idxSize int64
			idxExists := false
			if fi, err := os.Stat(st.Index); err == nil {
				idxSize, idxExists = fi.Size(), true
			}
			if asJSON {
				b, _ := json.MarshalIndent(struct {
					Cache        string `json:"cache"`
					Entries      int    `json:"entries"`
					Bytes        int64  `json:"bytes"`
					Index        string `json:"index"`
					IndexExists  bool   `json:"index_exists"`
					IndexBytes   int64  `json:"index_bytes"`
					StateDirFrom string `json:"state_dir,omitempty"`
				}{st.Cache, files, size, st.Index, idxExists, idxSize, st.Dir}, "", "  ")
				fmt.Fprintln(g.stdout, string(b))
				return nil
			}
			fmt.Fprintf(g.stdout, "cache:   %s\n         %d entr%s, %s\n", st.Cache, files, plural(files, "y", "ies"), size64(size))
			if idxExists {
				fmt.Fprintf(g.stdout, "index:   %s\n         %s\n", st.Index, size64(idxSize))
			} else {
				fmt.Fprintf(g.stdout, "index:   %s\n         not created yet (skillhost index or search creates it)\n", st.Index)
			}
			return nil
		},
	}
	info.Flags().BoolVar(&asJSON, "json", false, "print as JSON: {cache, entries, bytes, index, index_exists, index_bytes, state_dir}")
	clean := &cobra.Command{
		Use:   "clean",
		Short: "Delete the compilation cache",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := stateOf(g)
			if err != nil {
				return err
			}
			files, size, err := dirUsage(st.Cache)
			if err != nil {
				return usageErr("reading the cache %s: %v", st.Cache, pathErr(err))
			}
			if err := os.RemoveAll(st.Cache); err != nil {
				return usageErr("deleting the cache %s: %v", st.Cache, pathErr(err))
			}
			fmt.Fprintf(g.stdout, "deleted %s: %d entr%s, %s\n", st.Cache, files, plural(files, "y", "ies"), size64(size))
			return nil
		},
	}
	cmd.AddCommand(info, clean)
	return cmd
}

// dirUsage counts the regular files under dir and their bytes; a folder
// that does not exist holds none.
func dirUsage(dir string) (files int, size int64, err error) {
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path == dir {
				return fs.SkipAll
			}
			return err
		}
		if d.Type().IsRegular() {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			files++
			size += fi.Size()
		}
		return nil
	})
	return files, size, err
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
