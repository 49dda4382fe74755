package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Options configure a Store. A nil *Options means the defaults.
type Options struct {
	// DisableFTS makes the store behave as if SQLite had no FTS5: "fts"
	// searches run as "regex" searches and report that type.
	DisableFTS bool

	// PreferredNamespaces ranks tool namespaces (pack names; "" for
	// built-ins) for ordering results of equal score: earlier entries first,
	// namespaces not listed after all listed ones.
	PreferredNamespaces []string

	// OnEvent receives structured events (see the Event* names). It is called
	// synchronously from the goroutine that made the call and must not call
	// back into the store. Nil means no events.
	OnEvent func(Event)

	// Now is the clock for created_at, updated_at and last_used. Nil means
	// time.Now.
	Now func() time.Time

	// DisableRedaction turns off the redaction of e-mail addresses, phone
	// numbers, tokens and URL query strings in skill content handed to a
	// model. Redaction is on by default.
	DisableRedaction bool
}

// Store is the SQLite index of tools and skills. It is safe for concurrent use
// by multiple goroutines: searches run in parallel on a pool of connections
// (the file is in WAL mode, so readers never wait for the writer), writes are
// serialised and each runs in one transaction. No operation asks the pool
// for a connection while it holds one, and no lock is held while a
// connection is waited for but the write slot, which nobody holding a
// connection waits for (see read and write): however many callers there
// are, each waits only for connections that are being given back.
type Store struct {
	db   *sql.DB
	path string
	fts  bool

	nsRank    map[string]int // PreferredNamespaces index
	nsDefault int            // rank of namespaces not listed
	onEvent   func(Event)
	now       func() time.Time
	redact    bool

	// writeSlot holds a token while a writer of this process runs: one
	// writer at a time, each waiting for its turn no longer than its
	// context (see lockWrite).
	writeSlot chan struct{}
	closed    atomic.Bool

	stmtMu sync.RWMutex
	stmts  map[string]*sql.Stmt

	toolSnaps, skillSnaps snapHolder
	scopeIDs              sync.Map // Scope → skill_scopes id (int64)

	// writeGen counts writes committed through this store; caches of
	// full-text statistics are keyed by it.
	writeGen            atomic.Uint64
	toolText, skillText ftsText

	// toolNames caches the indexed tool names that tool-reference
	// rewriting judges, by store generation. mu guards the fields only:
	// it is never held while the names are read (see indexedToolNames).
	toolNames struct {
		mu    sync.Mutex
		gen   int64
		names []string
	}
}

// Open opens the index at path, creating the file and its directory when they
// do not exist, and brings the schema up to date. FTS5 is detected once here:
// Store.FTS reports the outcome.
func Open(ctx context.Context, path string, opts *Options) (*Store, error) {
	if opts == nil {
		opts = &Options{}
	}
	if path == "" {
		return nil, errors.New("index: open: database path is empty")
	}
	if strings.ContainsAny(path, "?#") || strings.HasPrefix(path, "file:") || path == ":memory:" {
		return nil, fmt.Errorf("index: open %q: need a plain file path (no '?', '#', \"file:\" or \":memory:\")", path)
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("index: open %q: creating its directory: %w", path, err)
		}
	}
	dsn := path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)" +
		"&_pragma=synchronous(NORMAL)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("index: open %q: %w", path, err)
	}
	// WAL lets readers run beside the one writer; a few connections per core
	// keep concurrent searches from queueing behind each other.
	n := max(4, 2*runtime.GOMAXPROCS(0))
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	db.SetConnMaxIdleTime(0)

	s := &Store{
		db:      db,
		path:    path,
		nsRank:  make(map[string]int, len(opts.PreferredNamespaces)),
		onEvent: opts.OnEvent,
		now:     opts.Now,
		redact:  !opts.DisableRedaction,
		stmts:   make(map[string]*sql.Stmt),

		writeSlot: make(chan struct{}, 1),
	}
	if s.now == nil {
		s.now = time.Now
	}
	for i, ns := range opts.PreferredNamespaces {
		if _, dup := s.nsRank[ns]; !dup {
			s.nsRank[ns] = i
		}
	}
	s.nsDefault = len(opts.PreferredNamespaces)
	s.toolSnaps.kind, s.skillSnaps.kind = toolSnapKind, skillSnapKind
	s.toolText = ftsText{fts: "tools_fts", table: "tools",
		textCols:  "{name_terms description tags_text params_text examples_text}",
		shortCols: "{name_terms tags_text}", budget: 1000}
	s.skillText = ftsText{fts: "skills_fts", table: "skills",
		textCols:  "{name_terms title trigger description tags_text body}",
		shortCols: "{name_terms title tags_text}", budget: 1000}

	if err := migrate(ctx, db, len(migrations)); err != nil {
		db.Close()
		return nil, fmt.Errorf("index: open %q: %w", path, err)
	}
	if !opts.DisableFTS {
		ok, err := detectFTS5(ctx, db)
		if err != nil {
			db.Close()
			return nil, fmt.Errorf("index: open %q: detecting FTS5: %w", path, err)
		}
		if ok {
			if err := ensureFTS(ctx, db); err != nil {
				db.Close()
				return nil, fmt.Errorf("index: open %q: creating full-text tables: %w", path, err)
			}
			s.fts = true
		}
	}
	return s, nil
}

// Close closes the database. Calls after Close return ErrClosed.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.stmtMu.Lock()
	for _, st := range s.stmts {
		st.Close()
	}
	s.stmts = nil
	s.stmtMu.Unlock()
	return s.db.Close()
}

// FTS reports whether searches of type "fts" use SQLite FTS5. When false they
// run as "regex" searches and say so in their results.
func (s *Store) FTS() bool { return s.fts }

// Path returns the database file path given to Open.
func (s *Store) Path() string { return s.path }

// check returns ErrClosed after Close.
func (s *Store) check() error {
	if s.closed.Load() {
		return ErrClosed
	}
	return nil
}

// wrapErr turns errors caused by a concurrent Close into ErrClosed.
func (s *Store) wrapErr(err error) error {
	if err != nil && s.closed.Load() {
		return ErrClosed
	}
	return err
}

// stmt returns a prepared statement for query, preparing it once per store.
// Statements are safe for concurrent use; database/sql re-prepares them per
// connection as needed. Preparing takes a connection from the pool, so
// stmt is called only by a goroutine that holds none (never inside read or
// write; see readTx.query), and no lock is held while preparing.
func (s *Store) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	s.stmtMu.RLock()
	st, ok := s.stmts[query]
	s.stmtMu.RUnlock()
	if ok {
		return st, nil
	}
	st, err := s.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, s.wrapErr(err)
	}
	s.stmtMu.Lock()
	defer s.stmtMu.Unlock()
	if s.stmts == nil {
		st.Close()
		return nil, ErrClosed
	}
	if have, ok := s.stmts[query]; ok {
		st.Close()
		return have, nil
	}
	s.stmts[query] = st
	return st, nil
}

// kindChange is what a write changed of one kind of record (tools or
// skills), so that its in-memory snapshot can follow the write instead of
// being reloaded.
type kindChange struct {
	// changed says rows of the kind changed; uids are the keys of the rows
	// inserted, updated or deleted (tool names, skill storage IDs: one per
	// name and scope), nil when unknown (the snapshot is then reloaded).
	changed bool
	uids    []string
	// apply says rows, read in the writing transaction by changedRows,
	// are the changed rows as stored now and fit the snapshot.
	apply bool
	rows  []snapEntry
}

// writeDelta is what a write changed, kind by kind; fn fills changed and
// uids, write the rest.
type writeDelta struct {
	tools, skills kindChange
}

// lockWrite takes the store's write slot, waiting for the writer that
// holds it no longer than ctx allows. The slot is the one lock held while
// a connection is waited for (the writer's own): it is taken before the
// connection, and no goroutine holding a connection ever waits for it, so
// the connections its holder waits for are all held by readers that need
// nothing more to finish.
func (s *Store) lockWrite(ctx context.Context) error {
	select {
	case s.writeSlot <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// unlockWrite gives the write slot back.
func (s *Store) unlockWrite() { <-s.writeSlot }

// write runs fn in one immediate transaction, holding the store's write
// slot, and commits only when fn returns nil: a failure leaves the index
// exactly as it was. A successful write bumps the generation the in-memory
// search snapshots are keyed by and brings the snapshots this process holds
// to the new generation (follow), so a search after a write never finds its
// snapshot stale; fn reports what it changed in the delta. fn runs on the
// transaction's connection and must ask the store for nothing else.
func (s *Store) write(ctx context.Context, fn func(tx *sql.Tx, d *writeDelta) error) error {
	if err := s.check(); err != nil {
		return err
	}
	if err := s.lockWrite(ctx); err != nil {
		return err
	}
	defer s.unlockWrite()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.wrapErr(err)
	}
	var d writeDelta
	if err := fn(tx, &d); err != nil {
		tx.Rollback()
		if err == errNoChange {
			return nil
		}
		return s.wrapErr(err)
	}
	var prev int64
	if err := tx.QueryRowContext(ctx, generationSQL).Scan(&prev); err != nil && err != sql.ErrNoRows {
		tx.Rollback()
		return s.wrapErr(err)
	}
	kinds := [...]struct {
		h *snapHolder
		c *kindChange
	}{{&s.toolSnaps, &d.tools}, {&s.skillSnaps, &d.skills}}
	for _, k := range kinds {
		if k.c.rows, k.c.apply, err = s.changedRows(ctx, tx, k.h, prev, k.c); err != nil {
			tx.Rollback()
			return s.wrapErr(err)
		}
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO index_meta(key, value) VALUES ('generation', '1')
		 ON CONFLICT(key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)`); err != nil {
		tx.Rollback()
		return s.wrapErr(err)
	}
	if err := tx.Commit(); err != nil {
		return s.wrapErr(err)
	}
	s.writeGen.Add(1)
	for _, k := range kinds {
		s.follow(ctx, k.h, prev, k.c)
	}
	return nil
}

// maxFollowed is the largest share of a snapshot's records (1/maxFollowed)
// a write may change, counting the entries earlier updates left behind, for
// the snapshot to be updated in place; past it the snapshot is reloaded.
const maxFollowed = 4

// changedRows reads, inside the writing transaction, the rows of h's kind
// that c reports changed, when h's snapshot is of the generation before the
// write and the change is small enough to apply to it (apply is then true).
func (s *Store) changedRows(ctx context.Context, tx *sql.Tx, h *snapHolder, prev int64, c *kindChange) (rows []snapEntry, apply bool, err error) {
	cur := h.cur.Load()
	if !c.changed || c.uids == nil || cur == nil || cur.gen != prev ||
		(cur.gone+len(c.uids))*maxFollowed > cur.size() {
		return nil, false, nil
	}
	var out []snapEntry
	for ids := c.uids; len(ids) > 0; {
		chunk := ids[:min(len(ids), 500)]
		ids = ids[len(chunk):]
		args := make([]any, len(chunk))
		for i, n := range chunk {
			args[i] = n
		}
		rows, err := tx.QueryContext(ctx, h.kind.query+` WHERE `+h.kind.uidCol+` IN (?`+strings.Repeat(", ?", len(chunk)-1)+`)`, args...)
		if err != nil {
			return nil, false, err
		}
		for rows.Next() {
			var e snapEntry
			if err := h.kind.scan(rows, &e); err != nil {
				rows.Close()
				return nil, false, err
			}
			out = append(out, e)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, false, err
		}
	}
	return out, true, nil
}

// follow brings h's snapshot, if it was of generation prev, to prev+1
// after a committed write that made the change c: an unchanged kind is
// relabelled, a small change applied in place (c.rows), a larger one
// reloaded here, in the writer, once its transaction has given its
// connection back. A snapshot of an older generation is left as it was.
func (s *Store) follow(ctx context.Context, h *snapHolder, prev int64, c *kindChange) {
	cur := h.cur.Load()
	if cur == nil || cur.gen != prev {
		return
	}
	gen := prev + 1
	switch {
	case !c.changed:
		h.offer(cur.relabel(gen))
	case c.apply:
		h.offer(s.update(cur, gen, c.uids, c.rows))
	default:
		s.fresh(ctx, h, gen) // on error the next search loads it
	}
}

// readTx is one read transaction: every statement of one search sees the
// same snapshot of the database, whatever is committed meanwhile. It holds
// one connection from BeginTx to Rollback, and every query of the
// operation that made it runs on that connection (query, scanOne): the
// operation asks the pool for nothing else until it ends, which is what
// keeps callers that hold every connection from waiting for one more.
type readTx struct {
	s  *Store
	tx *sql.Tx
	// gen caches the store generation the transaction sees (see
	// generation); genOK says it is set.
	gen   int64
	genOK bool
}

// read runs fn in a read transaction. fn reads through rd only: it may
// not call a Store method that takes a connection of its own (stmt,
// prepare, generation, current, read, write), nor wait for a lock whose
// holder may do so.
func (s *Store) read(ctx context.Context, fn func(rd *readTx) error) error {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return s.wrapErr(err)
	}
	defer tx.Rollback()
	return fn(&readTx{s: s, tx: tx})
}

// query runs a statement inside the transaction: the store's prepared
// statement when prepare has cached it, else one prepared on the
// transaction's own connection. (Preparing a store statement needs a
// connection from the pool, which must never be asked for while this one is
// held: with every connection held by a search that waits, none would come.)
func (r *readTx) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	r.s.stmtMu.RLock()
	st := r.s.stmts[query]
	r.s.stmtMu.RUnlock()
	var rows *sql.Rows
	var err error
	if st != nil {
		rows, err = r.tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	} else {
		rows, err = r.tx.QueryContext(ctx, query, args...)
	}
	return rows, r.s.wrapErr(err)
}

// prepare caches prepared statements for queries; call it before read,
// never inside it (see stmt).
func (s *Store) prepare(ctx context.Context, queries ...string) error {
	for _, q := range queries {
		if _, err := s.stmt(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// scanOne runs a one-row query into dest.
func (r *readTx) scanOne(ctx context.Context, query string, dest []any, args ...any) error {
	rows, err := r.query(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return r.s.wrapErr(err)
		}
		return sql.ErrNoRows
	}
	return r.s.wrapErr(rows.Scan(dest...))
}

// tidyFTS keeps a full-text index in few segments, inside the writing
// transaction. Every write adds a segment, and a query seeks into each
// segment for each word, so many small segments slow every search (at 200
// tools, one segment instead of two took a query from 0.36 to 0.25 ms).
// After a write that changed a quarter of the rows or more the index is
// merged into one segment; after a smaller one a bounded merge step runs
// (no measurable cost: a one-tool sync of 10,000 tools took 89 ms with it
// and without).
func (s *Store) tidyFTS(ctx context.Context, tx *sql.Tx, fts string, changed, rows int) error {
	if !s.fts || changed == 0 {
		return nil
	}
	var err error
	if changed*4 >= rows {
		_, err = tx.ExecContext(ctx, `INSERT INTO `+fts+`(`+fts+`) VALUES ('optimize')`)
	} else {
		_, err = tx.ExecContext(ctx, `INSERT INTO `+fts+`(`+fts+`, rank) VALUES ('merge', 200)`)
	}
	return err
}

// errNoChange, returned by a write function, rolls its transaction back and
// makes write return nil: nothing needed writing.
var errNoChange = errors.New("no change")

// generation returns the write counter stored in index_meta; it changes with
// every committed write, also one made by another process. It takes a
// connection from the pool: inside a read transaction use
// readTx.generation.
func (s *Store) generation(ctx context.Context) (int64, error) {
	st, err := s.stmt(ctx, `SELECT CAST(value AS INTEGER) FROM index_meta WHERE key = 'generation'`)
	if err != nil {
		return 0, err
	}
	var g int64
	err = st.QueryRowContext(ctx).Scan(&g)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return g, s.wrapErr(err)
}

// nowNano returns the store clock as Unix nanoseconds, the unit of every
// time column.
func (s *Store) nowNano() int64 { return s.now().UnixNano() }

// fromNano converts a time column back; 0 is the zero time.
func fromNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}
