package server

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// WarmReport says what Warm did.
type WarmReport struct {
	// Modules is how many pack modules are compiled; Failed what kept
	// the others out (they fail when called, as they would have).
	Modules int
	Failed  []error
	// Duration is the time Warm took.
	Duration time.Duration
}

// Warm compiles every module of the engine's packs (from the compilation
// cache when it has them), then marks the server ready:
// /readyz answers 200 only after it, so a load balancer sends no call
// that would wait on a compiler. The engine indexed its packs when it
// opened. progress, when not nil, is called before each module with its
// name and size and returns the function to call once it is compiled. A
// module that does not compile does not stop the others: it is reported
// and the server is ready without it. Warm returns ErrNotReady when ctx
// ends first.
func (s *Server) Warm(ctx context.Context, progress func(name string, size int) (done func())) (*WarmReport, error) {
	rep, err := s.compileAll(ctx, progress)
	if err != nil {
		return rep, err
	}
	if !s.draining.Load() {
		s.ready.Store(true)
	}
	return rep, nil
}

// compileAll compiles every module of the current packs through the
// engine's registry, as the first call of each would: that call then
// finds its module compiled.
func (s *Server) compileAll(ctx context.Context, progress func(string, int) func()) (*WarmReport, error) {
	start := time.Now()
	timed := func(name string, size int) func() {
		done := func() {}
		if progress != nil {
			done = progress(name, size)
		}
		t0 := time.Now()
		return func() {
			done()
			if s.ops != nil {
				s.ops.compile.Observe(time.Since(t0).Seconds())
			}
		}
	}
	n, failed, err := s.e.CompileModules(ctx, timed)
	rep := &WarmReport{Modules: n, Failed: failed, Duration: time.Since(start)}
	if err != nil {
		return rep, fmt.Errorf("%w: %d modules compiled when %v", ErrNotReady, n, err)
	}
	if s.ops != nil {
		s.ops.compiled.Set(float64(n))
	}
	for _, err := range failed {
		s.log.Warn("a pack module does not compile", "err", err)
	}
	return rep, nil
}

// ErrNotReady is returned by Warm when its context ended before every
// module was compiled.
var ErrNotReady = errors.New("server: not ready")

// Reload reads the packs again and swaps them in whole (Engine.Reload):
// sessions and requests begun before keep the tools they started with,
// so no call in flight fails, and new ones get the new tools. Modules
// that changed are compiled before Reload returns. The server stays
// ready throughout; on error it keeps serving what it had. The operator
// config (skillhost.toml) is not read again: [server], [tenants] and
// grants take effect at the next start.
func (s *Server) Reload(ctx context.Context) error {
	start := time.Now()
	err := s.e.Reload(ctx)
	if err == nil {
		_, err = s.compileAll(ctx, nil)
	}
	if s.ops != nil {
		s.ops.reloadDur.Observe(time.Since(start).Seconds())
		result := "ok"
		if err != nil {
			result = "error"
		}
		s.ops.reloads.WithLabelValues(result).Inc()
		if s.ops.audit != nil {
			s.ops.audit.tools.Clear() // the old generation's tools
		}
	}
	if err != nil {
		return fmt.Errorf("server: reloading the packs: %w", err)
	}
	return nil
}

// DefaultWatchInterval is how often WatchPacks looks at the sources.
const DefaultWatchInterval = 2 * time.Second

// maxWatchedFiles bounds the files WatchPacks looks at in one pass.
const maxWatchedFiles = 50_000

// WatchPacks reloads the packs (Reload) whenever a file of a pack source
// or the operator config changes, until ctx is done. It looks at the
// files' names, sizes and modification times every interval (0:
// DefaultWatchInterval) and reloads once they have stopped changing for
// one interval, so a pack being copied in is read whole. A change to the
// operator config reloads the packs and is logged as needing a restart
// for the rest.
func (s *Server) WatchPacks(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = DefaultWatchInterval
	}
	cfgFile := s.e.Operator().File
	last, lastCfg := s.fingerprint(), fileStamp(cfgFile)
	pending := false
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now, nowCfg := s.fingerprint(), fileStamp(cfgFile)
		if now != last || nowCfg != lastCfg {
			if nowCfg != lastCfg {
				s.log.Warn("the operator config changed; the packs are reloaded, [server], [tenants] and grants take effect at the next start", "file", cfgFile)
			}
			last, lastCfg, pending = now, nowCfg, true
			continue // wait for the files to settle
		}
		if !pending {
			continue
		}
		pending = false
		if err := s.Reload(ctx); err != nil {
			if ctx.Err() == nil {
				s.log.Error("reloading packs after a change", "err", err)
			}
			continue
		}
		s.log.Info("packs reloaded after a change")
	}
}

// fingerprint sums the name, size and modification time of every file
// under the engine's source folders.
func (s *Server) fingerprint() [32]byte {
	h := sha256.New()
	n := 0
	var buf [16]byte
	for _, dir := range s.e.SourceDirs() {
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // a folder that vanished or cannot be read is seen as such
			}
			if n++; n > maxWatchedFiles {
				return filepath.SkipAll
			}
			info, err := d.Info()
			if err != nil {
				return nil
			}
			h.Write([]byte(path))
			binary.LittleEndian.PutUint64(buf[:8], uint64(info.Size()))
			binary.LittleEndian.PutUint64(buf[8:], uint64(info.ModTime().UnixNano()))
			h.Write(buf[:])
			return nil
		})
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

// fileStamp is a file's size and modification time ("" when absent).
func fileStamp(path string) string {
	if path == "" {
		return ""
	}
	info, err := os.Stat(path)
	if err != nil {
		return ""
	}
	return fmt.Sprint(info.Size(), info.ModTime().UnixNano())
}
