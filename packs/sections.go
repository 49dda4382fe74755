package packs

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/skillhost/skillhost/internal/confwalk"
)

// Tables of skillhost.toml that other packages read by hand.
//
// A section another package owns is one struct type, registered with
// confwalk.Register, which ParseConfig decodes and Config.Section hands
// over. An owner whose tables are no one struct — [tenants], a table of
// tenants by id, read together with [server] — registers a reader
// instead (RegisterReader): ParseConfig hands it every table of its keys
// and the shared walker, so that its problems are reported with the
// others, each with its line, and Config.Owned returns what it made of
// them.

// TableReader reads the top-level tables of one owner: tables holds the
// tables of each key it registered that the file has, in file order (a
// key the file lacks has none). It is called for every file, so that it
// can return its defaults, and reports its problems on w.
type TableReader func(w *confwalk.Walker, tables map[string][]confwalk.Value) any

type sectionOwner struct {
	name string
	keys []string
	read TableReader
}

var sections struct {
	mu     sync.RWMutex
	owners []sectionOwner
	byKey  map[string]string
}

// RegisterReader makes ParseConfig hand the top-level tables keys to
// read; Config.Owned(owner) is what it returns. It panics when the
// owner or a key is registered twice, or a key is one packs reads (a
// programmer error at init).
func RegisterReader(owner string, keys []string, read TableReader) {
	if owner == "" || len(keys) == 0 || read == nil {
		panic("packs: RegisterReader needs an owner, keys and a reader")
	}
	sections.mu.Lock()
	defer sections.mu.Unlock()
	if sections.byKey == nil {
		sections.byKey = map[string]string{}
	}
	for _, o := range sections.owners {
		if o.name == owner {
			panic("packs: section owner " + owner + " registered twice")
		}
	}
	for _, k := range keys {
		if other, dup := sections.byKey[k]; dup {
			panic(fmt.Sprintf("packs: [%s] is already read by %s", k, other))
		}
		if slices.Contains(ownKeys, k) {
			panic(fmt.Sprintf("packs: [%s] is read by packs", k))
		}
		sections.byKey[k] = owner
	}
	sections.owners = append(sections.owners, sectionOwner{name: owner, keys: slices.Clone(keys), read: read})
	slices.SortFunc(sections.owners, func(a, b sectionOwner) int { return strings.Compare(a.name, b.name) })
}

// ownKeys are the top-level keys ParseConfig handles itself: it reads
// them, or decodes them into their owner's registered type.
var ownKeys = []string{"state_dir", "sources", "skills", "packs", "limits", "sandbox", "tool_search", "tool_examples", "skill_discovery", "capabilities"}

// sectionOf returns the owner of a top-level key packs does not read, or "".
func sectionOf(key string) string {
	sections.mu.RLock()
	defer sections.mu.RUnlock()
	return sections.byKey[key]
}

// readSections hands every owner its tables and keeps what it made of them.
func readSections(w *confwalk.Walker, c *Config, owned map[string][]confwalk.Value) {
	sections.mu.RLock()
	owners := slices.Clone(sections.owners)
	sections.mu.RUnlock()
	for _, o := range owners {
		tables := map[string][]confwalk.Value{}
		for _, k := range o.keys {
			if kvs := owned[k]; len(kvs) > 0 {
				tables[k] = kvs
			}
		}
		if c.sections == nil {
			c.sections = map[string]any{}
		}
		c.sections[o.name] = o.read(w, tables)
	}
}

// Owned returns what the reader registered by owner made of the file's
// tables: nil for a config that was not read from a file (DefaultConfig)
// or read before the owner registered.
func (c *Config) Owned(owner string) any {
	if c == nil {
		return nil
	}
	return c.sections[owner]
}

// ReadGrants reads a table of pack sections that narrow the operator's
// grants, such as [tenants.<id>.grants]: each [<key>.<pack>] is read as a
// [packs.<name>] section is, by pack name.
func ReadGrants(w *confwalk.Walker, kv confwalk.Value) map[string]PackGrant {
	r := &tomlReader{Walker: w, base: w.Base()}
	return r.packGrants(kv, fmt.Sprintf("a table of [%s.<pack>] sections", kv.Key))
}

// ReadPackNames reads a list of pack names.
func ReadPackNames(w *confwalk.Walker, kv confwalk.Value) []string {
	names, _ := w.Strings(kv, false)
	var out []string
	for i, n := range names {
		if !nameRE.MatchString(n) {
			w.Errorf(kv, "%s[%d] %q is not a pack name: lowercase letters and digits separated by single - or _", kv.Key, i, n)
			continue
		}
		out = append(out, n)
	}
	return out
}

// IsPackName reports whether name may name a pack: lowercase letters and
// digits separated by single - or _.
func IsPackName(name string) bool { return nameRE.MatchString(name) }

// IsHostGlob reports whether h may be an allowed_hosts entry of a grant: a
// host name or glob such as api.example.com or *.example.com, with a port
// or not, without scheme or path.
func IsHostGlob(h string) bool { return hostGlobRE.MatchString(h) }
