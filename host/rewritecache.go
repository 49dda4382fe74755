package host

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/skillhost/skillhost/host/internal/rewrite"
)

// rewriteFormat names what the rewriter produces. It is part of the key of
// the rewritten modules kept in the cache folder, so it must change
// whenever the rewriter's output or Info does; TestRewriteFormatIsCurrent
// fails until it has. The key also holds rewrite.Fingerprint, the digest
// of the rewriter's output for a small module, so that a rewriter whose
// output changed never reads another's entries, even under a name reused
// by a build that was never released.
const rewriteFormat = "skillhost-rewrite-5"

// tickFormat names what the rewriter produces with the tick check, kept
// under its own name beside rewriteFormat's output.
const tickFormat = "skillhost-tick-4"

// cacheFormat is the format name of what the rewriter produces counting
// fuel, or with the tick check.
func cacheFormat(tick bool) string {
	if tick {
		return tickFormat
	}
	return rewriteFormat
}

// instrumentCached is instrument, remembered in the cache folder by the
// digest of the original module: on a warm cache a process reads the
// rewritten bytes instead of rewriting a Go guest again (40-80 ms for the
// bundled text module). Only a successful rewrite is kept; a module the
// rewriter refuses is rewritten, and refused, every time. The entry is
// trusted as the compiled code beside it is: whoever can write the cache
// folder can already give wazero machine code.
func (h *Host) instrumentCached(capped []byte, sum [32]byte, tick bool) ([]byte, rewrite.Info, error) {
	if h.cfg.cacheDir == "" {
		return instrument(capped, tick)
	}
	path := h.rewrittenPath(sum, tick)
	if out, info, ok := readRewritten(path); ok && info.Tick == tick {
		return out, info, nil
	}
	out, info, err := instrument(capped, tick)
	if err == nil {
		writeRewritten(path, out, info)
	}
	return out, info, err
}

// rewrittenPath is where the cache folder keeps the rewrite of the module
// whose digest is sum: its name is the digest of the format's name, the
// rewriter's fingerprint, the table ceiling and sum.
func (h *Host) rewrittenPath(sum [32]byte, tick bool) string {
	key := sha256.New()
	fmt.Fprintf(key, "%s\x00%s\x00%d\x00", cacheFormat(tick), rewrite.Fingerprint(rewriteOptions(tick)), h.cfg.maxTableElem)
	key.Write(sum[:])
	return filepath.Join(h.cfg.cacheDir, "rewritten", hex.EncodeToString(key.Sum(nil)))
}

// A cache entry is the JSON of the rewrite's Info, its length first (4
// bytes, little-endian), then the rewritten module.

func readRewritten(path string) ([]byte, rewrite.Info, bool) {
	var info rewrite.Info
	b, err := os.ReadFile(path)
	if err != nil || len(b) < 4 {
		return nil, info, false
	}
	n := binary.LittleEndian.Uint32(b)
	if uint64(n) > uint64(len(b)-4) || json.Unmarshal(b[4:4+n], &info) != nil || (info.BudgetExport == "") != info.Tick {
		return nil, info, false
	}
	out := b[4+n:]
	if !bytes.HasPrefix(out, []byte("\x00asm")) {
		return nil, info, false
	}
	return out, info, true
}

func writeRewritten(path string, out []byte, info rewrite.Info) {
	head, err := json.Marshal(info)
	if err != nil {
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return
	}
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], uint32(len(head)))
	_, err = f.Write(append(append(n[:], head...), out...))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
}
