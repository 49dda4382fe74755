package server

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillhost/skillhost/server/serveconf"
)

// sessionTable is the open MCP sessions of the HTTP transport, by tenant:
// what the session limits count. A session is entered when a request
// without a session id starts one, bound when the SDK's session handles
// its first message, and dropped when that session ends (or never
// started).
//
// When a tenant is at max_tenant_sessions, a new session closes the
// tenant's session idle the longest (no request open on it); only when
// every one is busy is the new one refused. A client that leaks sessions
// thus costs its own tenant its oldest idle ones, not a refusal of the
// next well-behaved client of the tenant. At max_sessions, the bound of
// every tenant together, a new session is refused instead: closing
// another tenant's session would let one tenant end another's work.
type sessionTable struct {
	max, maxTenant, maxStreams int

	mu       sync.Mutex
	total    int
	byTenant map[string]map[string]*sessionEntry
	onChange func(tenant string, open int) // metrics; called under mu
}

// sessionEntry is one open session of the table.
type sessionEntry struct {
	tenant   string
	id       string
	mk       sync.Mutex         // held while making ss
	ss       *session           // made by the server factory (session)
	mss      *mcp.ServerSession // set when the SDK's session handles a message
	inflight int                // requests open on the session
	lastUsed time.Time
}

func newSessionTable(l serveconf.Limits) *sessionTable {
	return &sessionTable{max: l.MaxSessions, maxTenant: l.MaxTenantSessions, maxStreams: l.MaxSessionStreams,
		byTenant: map[string]map[string]*sessionEntry{}}
}

// sessionRefusal is a request the session limits refuse.
type sessionRefusal struct {
	status int
	limit  string // the metric's label: sessions, tenant_sessions, session_streams
	msg    string
}

// open enters a new session of tenant, with one request open on it (the
// one that starts it). It returns the session it closed to make room, if
// any; the caller closes it outside the lock.
func (st *sessionTable) open(tenant string) (e *sessionEntry, evicted *sessionEntry, refusal *sessionRefusal) {
	st.mu.Lock()
	defer st.mu.Unlock()
	mine := st.byTenant[tenant]
	if len(mine) >= st.maxTenant {
		for _, c := range mine {
			if c.inflight == 0 && c.mss != nil && (evicted == nil || c.lastUsed.Before(evicted.lastUsed)) {
				evicted = c
			}
		}
		if evicted == nil {
			return nil, nil, &sessionRefusal{status: http.StatusTooManyRequests, limit: "tenant_sessions",
				msg: fmt.Sprintf("the tenant has %d MCP sessions open (max_tenant_sessions), each with a request in flight; end one (DELETE with its Mcp-Session-Id) or retry when one ends", len(mine))}
		}
		st.dropLocked(evicted)
		mine = st.byTenant[tenant]
	}
	if st.total >= st.max {
		return nil, evicted, &sessionRefusal{status: http.StatusServiceUnavailable, limit: "sessions",
			msg: fmt.Sprintf("the server has %d MCP sessions open (max_sessions); retry later", st.total)}
	}
	if mine == nil {
		mine = map[string]*sessionEntry{}
		st.byTenant[tenant] = mine
	}
	e = &sessionEntry{tenant: tenant, id: newSessionID(), inflight: 1, lastUsed: time.Now()}
	mine[e.id] = e
	st.total++
	st.changed(tenant)
	return e, evicted, nil
}

// session returns the session of e, made by mk the first time: the SDK
// asks its server factory twice for the request that starts a session.
func (e *sessionEntry) session(mk func(id string) (*session, error)) (*session, error) {
	e.mk.Lock()
	defer e.mk.Unlock()
	if e.ss != nil {
		return e.ss, nil
	}
	ss, err := mk(e.id)
	if err != nil {
		return nil, err
	}
	e.ss = ss
	return ss, nil
}

// bind records the SDK's session of an entry: from now on it can be idle
// and is dropped when the session ends. It reports whether the entry was
// still in the table.
func (st *sessionTable) bind(e *sessionEntry, mss *mcp.ServerSession) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if e.mss != nil {
		return true
	}
	if st.byTenant[e.tenant][e.id] != e {
		return false
	}
	e.mss = mss
	return true
}

// started ends the request that opened e; an entry the SDK never bound
// to a session (the request failed before one began) is dropped.
func (st *sessionTable) started(e *sessionEntry) {
	st.mu.Lock()
	defer st.mu.Unlock()
	e.inflight--
	e.lastUsed = time.Now()
	if e.mss == nil {
		st.dropLocked(e)
	}
}

// drop forgets e (its session ended).
func (st *sessionTable) drop(e *sessionEntry) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.dropLocked(e)
}

func (st *sessionTable) dropLocked(e *sessionEntry) {
	mine := st.byTenant[e.tenant]
	if mine[e.id] != e {
		return
	}
	delete(mine, e.id)
	if len(mine) == 0 {
		delete(st.byTenant, e.tenant)
	}
	st.total--
	st.changed(e.tenant)
}

func (st *sessionTable) changed(tenant string) {
	if st.onChange != nil {
		st.onChange(tenant, len(st.byTenant[tenant]))
	}
}

// enter counts a request on the tenant's session id, refusing it past
// max_session_streams. A session id the table does not know (another
// tenant's, or none) is left to the SDK, which answers it as unknown; leave
// is then a no-op.
func (st *sessionTable) enter(tenant, id string) (leave func(), refusal *sessionRefusal) {
	st.mu.Lock()
	defer st.mu.Unlock()
	e := st.byTenant[tenant][id]
	if e == nil {
		return func() {}, nil
	}
	if e.inflight >= st.maxStreams {
		return nil, &sessionRefusal{status: http.StatusTooManyRequests, limit: "session_streams",
			msg: fmt.Sprintf("the session has %d requests open (max_session_streams); retry when one ends", e.inflight)}
	}
	e.inflight++
	e.lastUsed = time.Now()
	var once sync.Once
	return func() {
		once.Do(func() {
			st.mu.Lock()
			e.inflight--
			e.lastUsed = time.Now()
			st.mu.Unlock()
		})
	}, nil
}

// entryKey is the context key under which serveMCP hands the server
// factory (httpServer) the table entry of the session a request starts.
type entryKey struct{}

func withEntry(ctx context.Context, e *sessionEntry) context.Context {
	return context.WithValue(ctx, entryKey{}, e)
}

func entryOf(ctx context.Context) *sessionEntry {
	e, _ := ctx.Value(entryKey{}).(*sessionEntry)
	return e
}
