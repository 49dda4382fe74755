// Command mutate is skillhost's mutation tester: it makes small changes
// to the security-critical code (a guard turned off, one check of several
// dropped, a bound moved by one, an error returned as success) one at a
// time, runs the tests that hold that code, and reports each change the
// tests did not notice. `make mutate` runs it over every target in
// targets.go; RATIONALE.md says why it is not an off-the-shelf tool.
//
// Each mutant is compiled through `go test -overlay`, so the working tree
// is never written: others may build and test in it meanwhile. A mutant
// that does not compile is counted apart (not viable); one whose tests
// run past the timeout counts as killed.
//
// Survivors listed in survivors.txt, with the reason each is harmless,
// are reported as explained; any other survivor makes the command exit
// with status 1.
//
// Usage:
//
//	go run ./internal/mutate [-target egress,host] [-j 2] [-list] [-without file,...]
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Outcomes of a mutant.
const (
	killed   = "killed"
	timedOut = "timed out"
	// With -new, a mutant only the new tests kill: one that survived
	// the tests before them.
	killedNew   = "killed (new tests)"
	timedOutNew = "timed out (new tests)"
	survived    = "SURVIVED"
	explained   = "survived (explained)"
	notViable   = "not viable"
)

func main() {
	var (
		only    = flag.String("target", "", "comma-separated targets to run (default: all)")
		jobs    = flag.Int("j", 2, "mutants tested at once")
		list    = flag.Bool("list", false, "list the mutants and run nothing")
		without = flag.String("without", "", "comma-separated test files (from the module root) to leave out, to measure the tests before them")
		verbose = flag.Bool("v", false, "print every mutant's outcome, not only survivors")
		keys    = flag.String("keys", "", "a file of mutant keys, one a line: run only those mutants")
		record  = flag.String("o", "", "write every mutant's outcome and key to this file, one a line")
		newer   = flag.String("new", "", "comma-separated test files (from the module root) whose tests are new: report the kill rate without them too")
		each    = flag.Bool("each", false, "build each mutant on its own (go test -overlay) instead of all in one binary")
	)
	flag.Parse()
	root, err := moduleRoot()
	if err != nil {
		fatal(err)
	}
	explainedKeys, err := readSurvivors(filepath.Join(root, "internal", "mutate", "survivors.txt"))
	if err != nil {
		fatal(err)
	}
	// The targets to run, in the order -target names them.
	chosen := targets
	if *only != "" {
		chosen = nil
		for _, n := range strings.Split(*only, ",") {
			i := slices.IndexFunc(targets, func(t target) bool { return t.name == n })
			if i < 0 {
				fatal(fmt.Errorf("no target %q", n))
			}
			chosen = append(chosen, targets[i])
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tmp, err := os.MkdirTemp("", "skillhost-mutate-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(tmp)

	r := &runner{root: root, tmp: tmp, jobs: max(*jobs, 1), explained: explainedKeys, verbose: *verbose, perMutant: *each}
	if *keys != "" {
		data, err := os.ReadFile(*keys)
		if err != nil {
			fatal(err)
		}
		r.keys = map[string]bool{}
		for _, k := range strings.Split(string(data), "\n") {
			if k = strings.TrimSpace(k); k != "" {
				r.keys[k] = true
			}
		}
	}
	for _, f := range strings.Split(*newer, ",") {
		if f == "" {
			continue
		}
		src, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			fatal(err)
		}
		if r.newTests == nil {
			r.newTests = map[string]bool{}
		}
		for _, m := range testFunc.FindAllSubmatch(src, -1) {
			r.newTests[string(m[1])] = true
		}
	}
	if *record != "" {
		f, err := os.Create(*record)
		if err != nil {
			fatal(err)
		}
		defer f.Close()
		r.record = f
	}
	for _, f := range strings.Split(*without, ",") {
		if f != "" {
			r.without = append(r.without, filepath.Join(root, f))
		}
	}
	start := time.Now()
	unexplained := 0
	var summary []string
	for _, t := range chosen {
		ms, err := r.mutants(t)
		if err != nil {
			fatal(err)
		}
		if len(ms) == 0 {
			continue
		}
		if *list {
			for _, m := range ms {
				fmt.Printf("%s:%d:%d\t%s\n", m.file, m.line, m.col, m.key)
			}
			fmt.Printf("%s: %d mutants\n", t.name, len(ms))
			continue
		}
		s, err := r.run(ctx, t, ms)
		if ctx.Err() != nil {
			os.RemoveAll(tmp)
			fmt.Fprintln(os.Stderr, "mutate: interrupted")
			os.Exit(2)
		}
		if err != nil {
			os.RemoveAll(tmp)
			fatal(fmt.Errorf("%s: %w", t.name, err))
		}
		unexplained += s.counts[survived]
		summary = append(summary, s.String())
	}
	if *list {
		return
	}
	fmt.Println()
	for _, s := range summary {
		fmt.Println(s)
	}
	fmt.Printf("mutate: %v in all\n", time.Since(start).Round(time.Second))
	if unexplained > 0 {
		fmt.Printf("mutate: %d mutants survived: add a test that kills each, or say in internal/mutate/survivors.txt why it is harmless\n", unexplained)
		os.Exit(1)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "mutate:", err)
	os.Exit(2)
}

// moduleRoot is the folder of the go.mod the go command uses.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside a Go module")
	}
	return filepath.Dir(gomod), nil
}

// readSurvivors reads the keys of the explained survivors: each line that
// is not blank or a # comment is a mutant's key, then " -- " and why the
// mutant is harmless.
func readSurvivors(path string) (map[string]bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	keys := map[string]bool{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, why, ok := strings.Cut(line, " -- ")
		if !ok || strings.TrimSpace(why) == "" {
			return nil, fmt.Errorf("%s:%d: want `key -- why the mutant is harmless`", path, n)
		}
		keys[strings.TrimSpace(key)] = true
	}
	return keys, sc.Err()
}

type runner struct {
	root, tmp string
	jobs      int
	without   []string
	explained map[string]bool
	verbose   bool
	perMutant bool            // build each mutant on its own instead of schemata
	keys      map[string]bool // when set, the only mutants run
	newTests  map[string]bool // with -new, the names of the new tests
	record    io.Writer       // when set, receives every outcome
	mu        sync.Mutex      // serialises output
}

// mutants returns t's mutants, in file order.
func (r *runner) mutants(t target) ([]mutant, error) {
	var files []extra
	for _, f := range t.files {
		files = append(files, extra{file: filepath.ToSlash(filepath.Join(t.pkg, f)), funcs: t.funcs})
	}
	files = append(files, t.also...)
	var all []mutant
	for _, f := range files {
		src, err := os.ReadFile(filepath.Join(r.root, f.file))
		if err != nil {
			return nil, err
		}
		var funcs, match *regexp.Regexp
		if f.funcs != "" {
			if funcs, err = regexp.Compile(f.funcs); err != nil {
				return nil, fmt.Errorf("%s: funcs: %w", t.name, err)
			}
		}
		if f.match != "" {
			if match, err = regexp.Compile(f.match); err != nil {
				return nil, fmt.Errorf("%s: match: %w", t.name, err)
			}
		}
		ms, err := findMutants(f.file, src, funcs)
		if err != nil {
			return nil, err
		}
		if funcs != nil && len(ms) == 0 {
			return nil, fmt.Errorf("%s: no mutants in %s for %s: a function was renamed?", t.name, f.file, f.funcs)
		}
		for _, m := range ms {
			if (match == nil || match.MatchString(m.orig)) && (r.keys == nil || r.keys[m.key] || r.keys[unranked(m.key)]) {
				all = append(all, m)
			}
		}
	}
	return all, nil
}

// summary counts the outcomes of one target's mutants.
type summary struct {
	name     string
	counts   map[string]int
	duration time.Duration
}

// String reports the kill rate: killed (and timed out) over every mutant
// that compiled and was not explained; with -new, also the rate without
// the new tests.
func (s summary) String() string {
	old := s.counts[killed] + s.counts[timedOut]
	k := old + s.counts[killedNew] + s.counts[timedOutNew]
	total := k + s.counts[survived]
	rate := func(n int) float64 {
		if total == 0 {
			return 100
		}
		return 100 * float64(n) / float64(total)
	}
	before := ""
	if s.counts[killedNew]+s.counts[timedOutNew] > 0 {
		before = fmt.Sprintf(" (%.1f%% without the new tests)", rate(old))
	}
	return fmt.Sprintf("%-10s kill rate %5.1f%%%s (%d of %d; %d timed out), %d survived unexplained, %d explained, %d not viable, %v",
		s.name, rate(k), before, k, total, s.counts[timedOut]+s.counts[timedOutNew], s.counts[survived], s.counts[explained], s.counts[notViable], s.duration.Round(time.Second))
}

// A tester runs a target's tests with mutant m (none when nil).
// With skipNew, the new tests (-new) are left out.
type tester func(ctx context.Context, m *mutant, timeout time.Duration, skipNew bool) ([]byte, error)

// run tests every mutant of t and prints the survivors.
func (r *runner) run(ctx context.Context, t target, ms []mutant) (summary, error) {
	s := summary{name: t.name, counts: map[string]int{}}
	start := time.Now()
	test := func(ctx context.Context, m *mutant, timeout time.Duration, skipNew bool) ([]byte, error) {
		return r.goTest(ctx, t, m, timeout, skipNew)
	}
	if !r.perMutant {
		st, err := r.schemata(ctx, t, ms)
		if err != nil {
			if ctx.Err() != nil {
				return s, err
			}
			fmt.Printf("%s: the schemata do not build; each mutant is built on its own:\n%v\n", t.name, err)
		} else {
			test = st
		}
	}
	// The unmutated package must pass its tests, or every mutant would
	// look killed.
	t0 := time.Now()
	out, err := test(ctx, nil, 0, false)
	base := time.Since(t0)
	if err != nil {
		return s, fmt.Errorf("the tests fail without a mutant: %v\n%s", err, tail(out))
	}
	// A mutant can make a test wait for what never comes: such a run
	// ends at the timeout, and counts as killed.
	timeout := 5*base + t.timeout
	if t.timeout == 0 {
		timeout += 30 * time.Second
	}
	fmt.Printf("%s: %d mutants, tests take %v unmutated\n", t.name, len(ms), base.Round(time.Millisecond))

	results := make([]string, len(ms))
	var wg sync.WaitGroup
	next := make(chan int)
	for range r.jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if ctx.Err() == nil {
					results[i] = r.one(ctx, test, ms[i], timeout)
				}
			}
		}()
	}
	for i := range ms {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, res := range results {
		s.counts[res]++
	}
	s.duration = time.Since(start)
	return s, nil
}

// one tests mutant m and returns its outcome.
func (r *runner) one(ctx context.Context, test tester, m mutant, timeout time.Duration) string {
	// The test binary stops itself at timeout (-test.timeout); the
	// context, a minute later, stops a build or a binary that hangs.
	ctx, cancel := context.WithTimeout(ctx, timeout+time.Minute)
	defer cancel()
	out, err := test(ctx, &m, timeout, false)
	var outcome string
	switch {
	case err == nil && r.explained[m.key]:
		outcome = explained
	case err == nil:
		outcome = survived
	case ctx.Err() != nil || bytes.Contains(out, []byte("panic: test timed out")):
		outcome = timedOut
	case bytes.Contains(out, []byte("[build failed]")) || bytes.Contains(out, []byte("[setup failed]")):
		outcome = notViable
	default:
		outcome = killed
	}
	if r.newTests != nil && (outcome == killed || outcome == timedOut) && r.onlyNew(out) {
		// Only new tests failed before -failfast stopped the run: would
		// the others have failed?
		if _, err := test(ctx, &m, timeout, true); err == nil {
			outcome += " (new tests)"
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if outcome == survived || r.verbose {
		fmt.Printf("%-20s %s:%d:%d\n    %s\n", outcome, m.file, m.line, m.col, m.key)
	}
	if r.record != nil {
		fmt.Fprintf(r.record, "%s\t%s\n", outcome, m.key)
	}
	return outcome
}

// testFlags are the flags of t's test run, spelled for go test (prefix
// "-") or for a test binary ("-test.").
func (r *runner) testFlags(t target, prefix string, timeout time.Duration, skipNew bool) []string {
	args := []string{prefix + "failfast"}
	if t.run != "" {
		args = append(args, prefix+"run", t.run)
	}
	skip := t.skip
	if skipNew {
		var names []string
		for n := range r.newTests {
			names = append(names, n)
		}
		slices.Sort(names)
		if skip != "" {
			skip += "|"
		}
		skip += "^(" + strings.Join(names, "|") + ")$"
	}
	if skip != "" {
		args = append(args, prefix+"skip", skip)
	}
	if t.short {
		args = append(args, prefix+"short")
	}
	if timeout > 0 {
		args = append(args, prefix+"timeout", timeout.String())
	}
	return args
}

// overlay writes an overlay file replacing the files of replace (and
// leaving out the -without files) and returns its name.
func (r *runner) overlay(replace map[string]string) (string, error) {
	all := map[string]string{}
	for _, f := range r.without {
		all[f] = ""
	}
	for k, v := range replace {
		all[k] = v
	}
	ov, err := os.CreateTemp(r.tmp, "overlay-*.json")
	if err != nil {
		return "", err
	}
	if err := json.NewEncoder(ov).Encode(map[string]any{"Replace": all}); err != nil {
		ov.Close()
		return "", err
	}
	return ov.Name(), ov.Close()
}

// writeTemp writes data to a new file in the runner's folder.
func (r *runner) writeTemp(pattern string, data []byte) (string, error) {
	f, err := os.CreateTemp(r.tmp, pattern)
	if err != nil {
		return "", err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return "", err
	}
	return f.Name(), f.Close()
}

// goTest runs t's tests with mutant m (none when nil) compiled in through
// go test -overlay, and returns their output and error.
func (r *runner) goTest(ctx context.Context, t target, m *mutant, timeout time.Duration, skipNew bool) ([]byte, error) {
	// vet is off: a vet finding in a mutant would count as a kill.
	args := append([]string{"test", "-count=1", "-vet=off"}, r.testFlags(t, "-", timeout, skipNew)...)
	replace := map[string]string{}
	if m != nil {
		src, err := os.ReadFile(filepath.Join(r.root, m.file))
		if err != nil {
			return nil, err
		}
		mutated := append(append(append([]byte{}, src[:m.start]...), m.repl...), src[m.end:]...)
		name, err := r.writeTemp("*-"+filepath.Base(m.file), mutated)
		if err != nil {
			return nil, err
		}
		defer os.Remove(name)
		replace[filepath.Join(r.root, m.file)] = name
	}
	ov, err := r.overlay(replace)
	if err != nil {
		return nil, err
	}
	defer os.Remove(ov)
	args = append(args, "-overlay", ov, "./"+filepath.ToSlash(t.pkg))
	return r.command(ctx, r.root, nil, "go", args...)
}

// command runs name with args in dir, with env added to the process's
// environment (less any mutant it names), and returns its output.
func (r *runner) command(ctx context.Context, dir string, env []string, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, mutantEnv+"=") })
	cmd.Env = append(cmd.Env, env...)
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

// schemata builds t's test binary with every mutant of ms in it (see
// schemata.go) and returns the tester that runs it for one mutant.
func (r *runner) schemata(ctx context.Context, t target, ms []mutant) (tester, error) {
	byFile := map[string][]*site{}
	for i := range ms {
		m := &ms[i]
		m.id = i + 1
		m.site.ids[m.slot] = m.id
		if sites := byFile[m.file]; !slices.Contains(sites, m.site) {
			byFile[m.file] = append(sites, m.site)
		}
	}
	replace := map[string]string{}
	for file, sites := range byFile {
		src, err := os.ReadFile(filepath.Join(r.root, file))
		if err != nil {
			return nil, err
		}
		name, err := r.writeTemp("*-"+filepath.Base(file), schemata(src, sites))
		if err != nil {
			return nil, err
		}
		replace[filepath.Join(r.root, file)] = name
		pf, err := parser.ParseFile(token.NewFileSet(), file, src, parser.PackageClauseOnly)
		if err != nil {
			return nil, err
		}
		helper := filepath.Join(r.root, filepath.Dir(file), "zz_skillhost_mutant_schemata.go")
		if _, ok := replace[helper]; !ok {
			name, err := r.writeTemp("helper-*.go", fmt.Appendf(nil, helperFile, pf.Name.Name, mutantEnv))
			if err != nil {
				return nil, err
			}
			replace[helper] = name
		}
	}
	ov, err := r.overlay(replace)
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(r.tmp, t.name+".test")
	t0 := time.Now()
	if out, err := r.command(ctx, r.root, nil, "go", "test", "-c", "-vet=off", "-o", bin, "-overlay", ov, "./"+filepath.ToSlash(t.pkg)); err != nil {
		return nil, fmt.Errorf("%v\n%s", err, tail(out))
	}
	fmt.Printf("%s: built the mutant schemata in %v\n", t.name, time.Since(t0).Round(time.Second))
	dir := filepath.Join(r.root, t.pkg)
	return func(ctx context.Context, m *mutant, timeout time.Duration, skipNew bool) ([]byte, error) {
		var env []string
		if m != nil {
			env = []string{fmt.Sprintf("%s=%d", mutantEnv, m.id)}
		}
		return r.command(ctx, dir, env, bin, r.testFlags(t, "-test.", timeout, skipNew)...)
	}, nil
}

// testFunc finds the tests a test file declares.
var testFunc = regexp.MustCompile(`(?m)^func (Test\w+)\(t \*testing\.T\)`)

// failed finds the top-level tests a run failed, and those running when
// it timed out or crashed.
var (
	failed  = regexp.MustCompile(`(?m)^--- FAIL: (\w+)`)
	running = regexp.MustCompile(`(?m)^\s+(Test\w+) \(`)
)

// onlyNew reports whether the tests that failed in out are all new ones.
func (r *runner) onlyNew(out []byte) bool {
	var names [][]byte
	for _, m := range failed.FindAllSubmatch(out, -1) {
		names = append(names, m[1])
	}
	if i := bytes.Index(out, []byte("running tests:")); i >= 0 {
		for _, m := range running.FindAllSubmatch(out[i:], -1) {
			names = append(names, m[1])
		}
	}
	for _, n := range names {
		if !r.newTests[string(n)] {
			return false
		}
	}
	return len(names) > 0
}

// rankSuffix is what findMutants adds to the key of a mutant whose text
// recurs in its function.
var rankSuffix = regexp.MustCompile(` \(#\d+\)$`)

// unranked is key without its rank.
func unranked(key string) string { return rankSuffix.ReplaceAllString(key, "") }

// tail is the end of a test's output.
func tail(out []byte) string {
	const n = 3000
	if len(out) > n {
		out = out[len(out)-n:]
	}
	var b strings.Builder
	_, _ = io.Copy(&b, bytes.NewReader(out))
	return b.String()
}
