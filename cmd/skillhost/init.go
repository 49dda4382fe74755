package main

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"

	"github.com/spf13/cobra"

	"github.com/skillhost/skillhost"
)

// templates are the files of a new project, by language; {% %} delimit
// the template actions, which Go, Rust, YAML and Makefiles never use.
//
//go:embed templates
var templates embed.FS

// Versions of the Go modules the Go SDK needs, with their go.sum lines:
// those skillhost itself is built with (a test keeps them equal to
// go.mod and go.sum).
const (
	goVersion = "1.26.0"
	goPDK     = "v1.1.3"
	goCmp     = "v0.7.0"
	goSum     = `github.com/extism/go-pdk v1.1.3 h1:hfViMPWrqjN6u67cIYRALZTZLk/enSPpNKa+rZ9X2SQ=
github.com/extism/go-pdk v1.1.3/go.mod h1:Gz+LIU/YCKnKXhgge8yo5Yu1F/lbv7KtKFkiCSzW/P4=
github.com/google/go-cmp v0.7.0 h1:wk8382ETsv4JYUZwIsn6YpYiWiBsYLSJiTsyBybVuN8=
github.com/google/go-cmp v0.7.0/go.mod h1:pXiqmnSA92OHEEa9HXL2W4E7lf9JzCmGVUdgjX3N/iU=`
)

// initLangs are the languages of skillhost init and the template folder
// each uses.
var initLangs = map[string]string{"go": "go", "tinygo": "go", "rust": "rust"}

var projectNameRe = regexp.MustCompile(`^[a-z][a-z0-9]*([_-][a-z0-9]+)*$`)

func newInitCmd(g *globals) *cobra.Command {
	var lang, dir string
	var force bool
	cmd := &cobra.Command{
		Use:   "init NAME",
		Short: "Write a new tool pack project in Go, TinyGo or Rust",
		Long: `Write a working tool pack project into the folder NAME (or --dir): the
source of one example tool, its test, a pack.yaml, a Makefile whose
"make test" builds the module, runs the tests, checks the pack with
skillhost validate and calls the tool, and a short README. The guest SDK is
copied into the project from this binary (third_party/skillhost for Go,
skillhost-guest for Rust), so nothing needs to be published or fetched
but the SDK's own dependencies (for Go, github.com/extism/go-pdk from the
Go module proxy or the module cache).

NAME names the pack and the module: lower-case letters, digits, '-' and
'_', starting with a letter. The folder must not exist or be empty, unless
--force.`,
		Example: `  skillhost init hello --lang go
  skillhost init hello-tiny --lang tinygo
  skillhost init hello-rs --lang rust --dir ./tools/hello-rs`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("init needs a NAME (see skillhost init --help)")
			}
			if dir == "" {
				dir = args[0]
			}
			files, err := initProject(args[0], lang)
			if err != nil {
				return err
			}
			if err := writeProject(dir, files, force); err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "wrote %d files to %s; cd %s && make test\n", len(files), dir, dir)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&lang, "lang", "go", "the project's language `LANG`: go, tinygo or rust")
	f.StringVar(&dir, "dir", "", "write into this `DIR` (default: ./NAME)")
	f.BoolVar(&force, "force", false, "write into a folder that is not empty, replacing files of the same names")
	return cmd
}

// initProject returns the files of a new project, by path.
func initProject(name, lang string) (map[string][]byte, error) {
	if !projectNameRe.MatchString(name) || len(name) > 64 {
		return nil, usageErr("%q cannot name a pack: use lower-case letters, digits, '-' and '_', starting with a letter, at most 64 characters (e.g. my-tools)", name)
	}
	folder, ok := initLangs[lang]
	if !ok {
		return nil, usageErr("--lang %q: use go, tinygo or rust", lang)
	}
	data := map[string]string{
		"Name": name, "Lang": lang, "Crate": strings.ReplaceAll(name, "-", "_"),
		"GoVersion": goVersion, "GoPDK": goPDK, "GoCmp": goCmp, "GoSum": goSum,
	}
	files := map[string][]byte{}
	root := path.Join("templates", folder)
	err := fs.WalkDir(templates, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		src, err := templates.ReadFile(p)
		if err != nil {
			return err
		}
		t, err := template.New(p).Delims("{%", "%}").Option("missingkey=error").Parse(string(src))
		if err != nil {
			return err
		}
		var b bytes.Buffer
		if err := t.Execute(&b, data); err != nil {
			return err
		}
		// Go files and go.mod are stored as .tmpl, so that the go
		// command sees no package or module in the template folder, and
		// dot files as dot-NAME, which embed would leave out.
		name := strings.TrimSuffix(strings.TrimPrefix(p, root+"/"), ".tmpl")
		if dir, base := path.Split(name); strings.HasPrefix(base, "dot-") {
			name = dir + "." + strings.TrimPrefix(base, "dot-")
		}
		files[name] = b.Bytes()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("init: the %s template: %w", lang, err)
	}
	if err := addSDK(files, folder); err != nil {
		return nil, fmt.Errorf("init: copying the SDK: %w", err)
	}
	return files, nil
}

// addSDK adds the guest SDK's sources for folder ("go" or "rust") to
// files, without their tests.
func addSDK(files map[string][]byte, folder string) error {
	sdk := skillhost.GuestSDK()
	copyDir := func(from, to string) error {
		return fs.WalkDir(sdk, from, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasSuffix(p, "_test.go") {
				return err
			}
			b, err := fs.ReadFile(sdk, p)
			if err != nil {
				return err
			}
			files[path.Join(to, p)] = b
			return nil
		})
	}
	switch folder {
	case "go":
		for _, d := range []string{"abi", "internal/goschema", "guests/go/skill"} {
			if err := copyDir(d, "third_party/skillhost"); err != nil {
				return err
			}
		}
		files["third_party/skillhost/go.mod"] = fmt.Appendf(nil, "module github.com/skillhost/skillhost\n\ngo %s\n\nrequire (\n\tgithub.com/extism/go-pdk %s\n\tgithub.com/google/go-cmp %s\n)\n",
			goVersion, goPDK, goCmp)
		files["third_party/skillhost/go.sum"] = []byte(goSum + "\n")
	case "rust":
		for _, d := range []string{"guests/rust/src", "guests/rust/derive"} {
			if err := copyDir(d, "skillhost-guest"); err != nil {
				return err
			}
		}
		// The crate's files move up: skillhost-guest/guests/rust/src → skillhost-guest/src.
		for p, b := range files {
			if rest, ok := strings.CutPrefix(p, "skillhost-guest/guests/rust/"); ok {
				delete(files, p)
				files["skillhost-guest/"+rest] = b
			}
		}
		manifest, err := fs.ReadFile(sdk, "guests/rust/Cargo.toml")
		if err != nil {
			return err
		}
		// Its tests, workspace and profiles are the repository's: the
		// project's Cargo.toml has its own.
		if i := bytes.Index(manifest, []byte("\n[dev-dependencies]")); i >= 0 {
			manifest = manifest[:i+1]
		}
		files["skillhost-guest/Cargo.toml"] = manifest
	}
	return nil
}

// writeProject writes files under dir, which must not exist or be empty
// unless force.
func writeProject(dir string, files map[string][]byte, force bool) error {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 && !force {
		return usageErr("%s is not empty: pick another folder with --dir, or --force to write into it", dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return usageErr("%s: %v", dir, pathErr(err))
	}
	for p, b := range files {
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return usageErr("%v", err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return usageErr("%v", err)
		}
	}
	return nil
}
