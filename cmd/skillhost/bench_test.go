package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkWholeProcess runs the skillhost binary as a user does, warm
// compilation cache, and compares calling a bundled tool by name with
// calling the same export of the same module with --module: what opening
// the packs, the registry and argument validation add to a whole process.
// The two alternate in each iteration so that a noisy machine weighs on
// both alike; the figures are medians.
func BenchmarkWholeProcess(b *testing.B) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "skillhost")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("building skillhost: %v\n%s", err, out)
	}
	env := append(os.Environ(), "XDG_CACHE_HOME="+filepath.Join(dir, "cache"), "XDG_STATE_HOME="+filepath.Join(dir, "state"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "SKILLHOST_CONFIG=")
	module, err := filepath.Abs(filepath.Join("..", "..", "packs", "bundled", "modules", "text", "text.wasm"))
	if err != nil {
		b.Fatal(err)
	}
	const args = `{"text":"Hello, World!"}`
	variants := []struct {
		name string
		argv []string
	}{
		{"pack", []string{"call", "slugify", args}},
		{"module", []string{"call", "--module", module, "--export", "slugify", "--input", args}},
	}
	run := func(argv []string) time.Duration {
		cmd := exec.Command(bin, argv...)
		cmd.Env, cmd.Dir = env, dir
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("skillhost %q: %v\n%s", argv, err, out)
		}
		return time.Since(start)
	}
	for _, v := range variants {
		run(v.argv) // compiles into the cache
	}
	times := make([][]time.Duration, len(variants))
	for b.Loop() {
		for i, v := range variants {
			times[i] = append(times[i], run(v.argv))
		}
	}
	median := func(d []time.Duration) time.Duration {
		s := slices.Clone(d)
		slices.Sort(s)
		return s[len(s)/2]
	}
	pack, mod := median(times[0]), median(times[1])
	b.ReportMetric(float64(pack.Microseconds())/1000, "pack-ms")
	b.ReportMetric(float64(mod.Microseconds())/1000, "module-ms")
	b.ReportMetric(float64(pack)/float64(mod), "pack/module")
}

// BenchmarkWholeProcessKernels runs `skillhost call --module` as a user
// does, warm compilation cache, on compute kernels of a standard-Go guest
// and on a call that does nothing, against testdata/rawrun: the same
// export in a bare wazero runtime with no interruption check at all. The
// two alternate in each iteration; sk/raw is the ratio of the medians
// (process start, loading, instantiation and the call, all included), and
// cpu-sk/raw that of the processes' CPU time.
func BenchmarkWholeProcessKernels(b *testing.B) {
	dir := b.TempDir()
	bin, raw := filepath.Join(dir, "skillhost"), filepath.Join(dir, "rawrun")
	for _, build := range [][]string{{"-o", bin, "."}, {"-o", raw, "./testdata/rawrun"}} {
		if out, err := exec.Command("go", append([]string{"build"}, build...)...).CombinedOutput(); err != nil {
			b.Fatalf("building %s: %v\n%s", build[1], err, out)
		}
	}
	env := append(os.Environ(), "XDG_CACHE_HOME="+filepath.Join(dir, "cache"), "XDG_STATE_HOME="+filepath.Join(dir, "state"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "SKILLHOST_CONFIG=")
	module, err := filepath.Abs(filepath.Join("..", "..", "testdata", "guests", "go", "gobench", "gobench.wasm"))
	if err != nil {
		b.Fatal(err)
	}
	// run returns the process's wall-clock and CPU time (user and system)
	// and its output.
	run := func(b *testing.B, name string, argv ...string) (time.Duration, time.Duration, string) {
		cmd := exec.Command(name, argv...)
		cmd.Env, cmd.Dir = env, dir
		start := time.Now()
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("%s %q: %v", name, argv, err)
		}
		return time.Since(start), cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), string(out)
	}
	for _, k := range []struct{ name, export, input string }{
		// The sizes of the figures users measured: 400 million steps of
		// the LCG, 2 million numbers, 48 MiB.
		{"noop", "noop", ""},
		{"intloop", "intloop", "400000000"},
		{"sort", "sort", "2000000"},
		{"sha256", "sha256", "49152"},
	} {
		b.Run("kernel="+k.name, func(b *testing.B) {
			sk := func() (time.Duration, time.Duration, string) {
				return run(b, bin, "call", "--module", module, "--export", k.export, "--input", k.input)
			}
			rw := func() (time.Duration, time.Duration, string) {
				return run(b, raw, filepath.Join(dir, "rawcache"), module, k.export, k.input)
			}
			_, _, want := rw() // compiles into the caches
			if _, _, got := sk(); got != want {
				b.Fatalf("skillhost: %q, raw wazero: %q", got, want)
			}
			var tsk, trw, csk, crw []time.Duration
			for b.Loop() {
				d, c, _ := sk()
				tsk, csk = append(tsk, d), append(csk, c)
				d, c, _ = rw()
				trw, crw = append(trw, d), append(crw, c)
			}
			median := func(d []time.Duration) time.Duration {
				s := slices.Clone(d)
				slices.Sort(s)
				return s[len(s)/2]
			}
			b.ReportMetric(float64(median(tsk).Microseconds())/1000, "skillhost-ms")
			b.ReportMetric(float64(median(trw).Microseconds())/1000, "raw-ms")
			b.ReportMetric(float64(median(tsk))/float64(median(trw)), "sk/raw")
			// CPU time moves less than wall-clock time with the other
			// jobs on a shared machine.
			b.ReportMetric(float64(median(csk))/float64(median(crw)), "cpu-sk/raw")
		})
	}
}
