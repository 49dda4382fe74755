package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillhost/skillhost/packs"
)

// maxValidateBytes bounds what validate reads of one file.
const maxValidateBytes = 32 << 20

func newValidateCmd(g *globals) *cobra.Command {
	var depth int
	cmd := &cobra.Command{
		Use:   "validate PATH...",
		Short: "Check skills, packs and config files, listing every problem",
		Long: `Check each PATH and list every problem found, one a line, as
FILE:LINE: FIELD MESSAGE. A folder is searched like a skill source: pack.yaml
tool packs, SKILL.md skill folders, flat skills and *.skill.{md,yaml,yml,json,jsonl}
playbook files. A file is checked by its name: pack.yaml, SKILL.md, *.skill.*,
*.toml (an operator config) or any other .md (a flat Agent Skill).
Exits 1 when anything is wrong, 0 when all is well.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("validate needs at least one PATH")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			bad := 0
			for _, path := range args {
				errs, warns, summary := validatePath(cmd.Context(), path, depth)
				for _, w := range warns {
					fmt.Fprintf(g.stdout, "warning: %s\n", w)
				}
				for _, err := range errs {
					fmt.Fprintln(g.stdout, err)
				}
				bad += len(errs)
				if len(errs) == 0 {
					fmt.Fprintf(g.stdout, "ok %s: %s\n", path, summary)
				}
			}
			if bad > 0 {
				return &exitError{code: exitToolError, err: fmt.Errorf("%d problem(s) found", bad)}
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&depth, "max-depth", 0, "how many folders deep (`N`) to search a folder (0: the default 3, -1: unlimited)")
	return cmd
}

// validatePath checks one file or folder.
func validatePath(ctx context.Context, path string, depth int) (errs []error, warns []string, summary string) {
	st, err := os.Stat(path)
	if err != nil {
		return []error{fmt.Errorf("%s: %v", path, pathErr(err))}, nil, ""
	}
	if st.IsDir() {
		if isSkillFolder(path) {
			// A skill folder: check it as one skill with its resources.
			abs := mustAbs(path)
			s, err := packs.LoadSkillDir(os.DirFS(filepath.Dir(abs)), filepath.Base(abs))
			if err != nil {
				for _, e := range flatten(err) {
					// Name files as the user wrote the folder.
					if me, ok := e.(*packs.ManifestError); ok {
						c := *me
						c.File = filepath.Join(filepath.Dir(path), me.File)
						e = &c
					}
					errs = append(errs, e)
				}
			}
			if s != nil {
				warns = append(warns, s.Warnings...)
				return errs, warns, fmt.Sprintf("skill %s, %d resource file(s)", s.Name, len(s.Resources))
			}
			return errs, warns, ""
		}
		sc, err := packs.LoadSource(ctx, packs.SourceSpec{Name: packs.SourceWorkspace, Dir: path, MaxDepth: depth})
		if err != nil {
			errs = flatten(err)
		}
		var count toolCount
		for _, p := range sc.Packs {
			e, w := checkModules(p, p.FS, p.Dir, &count)
			errs, warns = append(errs, e...), append(warns, w...)
		}
		warns = append(warns, sc.Warnings...)
		for _, s := range sc.Skills {
			warns = append(warns, s.Warnings...)
		}
		return errs, warns, fmt.Sprintf("%d pack(s), %s, %d skill(s)", len(sc.Packs), count, len(sc.Skills))
	}
	f, err := os.Open(path)
	if err != nil {
		return []error{err}, nil, ""
	}
	data, err := io.ReadAll(io.LimitReader(f, maxValidateBytes+1))
	f.Close()
	if err != nil {
		return []error{err}, nil, ""
	}
	if len(data) > maxValidateBytes {
		return []error{fmt.Errorf("%s: file is larger than %d MiB", path, maxValidateBytes>>20)}, nil, ""
	}
	base := filepath.Base(path)
	var skills []*packs.SkillSpec
	switch {
	case base == packs.ManifestFile:
		p, err := packs.Parse(data, path)
		if err != nil {
			return flatten(err), nil, ""
		}
		var count toolCount
		errs, warns := checkModules(p, os.DirFS(filepath.Dir(path)), filepath.Dir(path), &count)
		return errs, warns, fmt.Sprintf("pack %s, %d module(s), %s", p.Name, len(p.Modules), count)
	case strings.HasSuffix(base, ".toml"):
		cfg, err := packs.ParseConfig(path, data)
		if err != nil {
			return flatten(err), nil, ""
		}
		return validatePackSettings(ctx, cfg)
	case isPlaybook(base):
		pack := filepath.Base(filepath.Dir(mustAbs(path)))
		skills, err = packs.ParsePlaybook(path, data, pack)
	case packs.IsSkillFile(base):
		var s *packs.SkillSpec
		s, err = packs.ParseSkillMD(path, data, filepath.Base(filepath.Dir(mustAbs(path))))
		if s != nil {
			skills = append(skills, s)
		}
	case strings.HasSuffix(base, ".md"):
		var s *packs.SkillSpec
		s, err = packs.ParseSkillMD(path, data, strings.TrimSuffix(base, ".md"))
		if s != nil {
			skills = append(skills, s)
		}
	default:
		return []error{fmt.Errorf("%s: not a file skillhost reads; expected pack.yaml, SKILL.md, a .md skill, *.skill.{md,yaml,yml,json,jsonl} or a .toml config", path)}, nil, ""
	}
	if err != nil {
		errs = flatten(err)
	}
	for _, s := range skills {
		warns = append(warns, s.Warnings...)
	}
	return errs, warns, fmt.Sprintf("%d skill(s)", len(skills))
}

// toolCount is what validate says a pack's tools will be when loaded:
// those pack.yaml lists, and those the modules without a list describe.
type toolCount struct{ listed, describers int }

func (c toolCount) String() string {
	if c.describers == 0 {
		return fmt.Sprintf("%d tool(s)", c.listed)
	}
	return fmt.Sprintf("%d tool(s) listed and those %d module(s) describe when loaded", c.listed, c.describers)
}

// checkModules judges each module of p from its exports, as loading will
// (packs.CheckModule), reading its file from fsys; nothing is compiled
// or run. dir names the pack's folder in messages. A file that cannot be
// read is reported.
func checkModules(p *packs.Pack, fsys fs.FS, dir string, count *toolCount) (errs []error, warns []string) {
	for _, m := range p.Modules {
		count.listed += len(m.Tools)
		if len(m.Tools) == 0 {
			count.describers++
		}
		wasm, err := fs.ReadFile(fsys, m.Path)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: pack %s module %s: %v", filepath.Join(dir, packs.ManifestFile), p.Name, m.Name, pathErr(err)))
			continue
		}
		if err := packs.CheckModule(m, wasm); err != nil {
			for _, e := range flatten(err) {
				e = fmt.Errorf("%s: pack %s: %w", filepath.Join(dir, packs.ManifestFile), p.Name, e)
				if errors.Is(e, packs.ErrNoExport) {
					// Loading keeps the other tools; this one fails when called.
					warns = append(warns, e.Error())
				} else {
					errs = append(errs, e)
				}
			}
		}
	}
	return errs, warns
}

// isSkillFolder reports whether dir holds a skill's instructions file
// (SKILL.md, or skill.md).
func isSkillFolder(dir string) bool {
	for _, name := range []string{packs.SkillFile, "skill.md"} {
		if st, err := os.Stat(filepath.Join(dir, name)); err == nil && !st.IsDir() {
			return true
		}
	}
	return false
}

func isPlaybook(name string) bool {
	for _, ext := range []string{".skill.md", ".skill.yaml", ".skill.yml", ".skill.json", ".skill.jsonl"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

func mustAbs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// flatten lists the leaves of an errors.Join tree.
func flatten(err error) []error {
	var out []error
	var walk func(error)
	walk = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, c := range j.Unwrap() {
				walk(c)
			}
			return
		}
		out = append(out, e)
	}
	walk(err)
	return out
}

// validatePackSettings checks a config's [packs.<name>.config] values
// against the config_params of the packs its sources hold, as loading the
// engine would. Problems of the skills and packs themselves are left to
// validating their folders.
func validatePackSettings(ctx context.Context, cfg *packs.Config) (errs []error, warns []string, summary string) {
	cat, _ := packs.LoadCatalog(ctx, cfg.SourceSpecs(), &packs.CatalogOptions{Config: cfg})
	if cat == nil {
		return nil, nil, "operator config"
	}
	checked := 0
	for _, p := range cat.Packs() {
		if err := cfg.CheckPackConfig(p); err != nil {
			errs = append(errs, flatten(err)...)
		}
		checked++
	}
	return errs, nil, fmt.Sprintf("operator config, tool settings checked against %d pack(s)", checked)
}
