package server_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/skillhost/skillhost/server"
	"github.com/skillhost/skillhost/server/serveconf"
)

// authServer is an OAuth authorization server on loopback: it serves its
// metadata (RFC 8414), its key set (RFC 7517) and a token endpoint for the
// client credentials grant, and signs access tokens (RFC 9068) with an
// RSA and an EC key.
type authServer struct {
	*httptest.Server
	resource string // the audience of the tokens it issues by default

	mu       sync.Mutex
	keys     map[string]any // kid → private key, as published
	jwksDown atomic.Bool    // the key set answers 503
	jwksHits atomic.Int32
	clients  map[string]string // client id → secret
}

func newAuthServer(t testing.TB) *authServer {
	t.Helper()
	as := &authServer{keys: map[string]any{"rsa-1": rsaKey(t), "ec-1": ecKey(t)},
		clients: map[string]string{"ci-a": "secret-a"}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{
			"issuer":                                as.URL,
			"authorization_endpoint":                as.URL + "/authorize",
			"token_endpoint":                        as.URL + "/token",
			"jwks_uri":                              as.URL + "/jwks",
			"response_types_supported":              []string{"code"},
			"grant_types_supported":                 []string{"authorization_code", "client_credentials"},
			"code_challenge_methods_supported":      []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post"},
		})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		as.jwksHits.Add(1)
		if as.jwksDown.Load() {
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
			return
		}
		as.mu.Lock()
		defer as.mu.Unlock()
		var keys []map[string]string
		for kid, k := range as.keys {
			keys = append(keys, publicJWK(kid, k))
		}
		writeJSON(w, map[string]any{"keys": keys})
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		id, secret, ok := r.BasicAuth()
		if !ok {
			id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
		}
		if want, known := as.clients[id]; !known || secret != want {
			w.WriteHeader(http.StatusUnauthorized)
			writeJSON(w, map[string]string{"error": "invalid_client"})
			return
		}
		if r.PostForm.Get("grant_type") != "client_credentials" {
			w.WriteHeader(http.StatusBadRequest)
			writeJSON(w, map[string]string{"error": "unsupported_grant_type"})
			return
		}
		c := as.claims(id)
		c["client_id"] = id
		c["scope"] = r.PostForm.Get("scope")
		if res := r.PostForm.Get("resource"); res != "" {
			c["aud"] = res // RFC 8707
		}
		writeJSON(w, map[string]any{"access_token": as.sign(t, c, "RS256", "rsa-1"), "token_type": "Bearer",
			"expires_in": 300, "scope": c["scope"]})
	})
	as.Server = httptest.NewServer(mux)
	t.Cleanup(as.Close)
	return as
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func rsaKey(t testing.TB) *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func ecKey(t testing.TB) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// publicJWK is a private key's public half as a JWK.
func publicJWK(kid string, k any) map[string]string {
	enc := base64.RawURLEncoding.EncodeToString
	switch k := k.(type) {
	case *rsa.PrivateKey:
		return map[string]string{"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
			"n": enc(k.N.Bytes()), "e": enc(big.NewInt(int64(k.E)).Bytes())}
	case *ecdsa.PrivateKey:
		pub, _ := k.PublicKey.Bytes() // 0x04 || x || y
		return map[string]string{"kty": "EC", "kid": kid, "use": "sig", "crv": "P-256",
			"x": enc(pub[1:33]), "y": enc(pub[33:])}
	}
	panic(fmt.Sprintf("a key of type %T", k))
}

// claims are those of a good access token for sub.
func (as *authServer) claims(sub string) jwt.MapClaims {
	now := time.Now()
	return jwt.MapClaims{"iss": as.URL, "sub": sub, "aud": as.resource, "scope": "mcp:tools openid",
		"exp": now.Add(5 * time.Minute).Unix(), "iat": now.Unix(), "jti": fmt.Sprint(now.UnixNano())}
}

// sign makes a JWT of claims with the published key kid.
func (as *authServer) sign(t testing.TB, c jwt.MapClaims, alg, kid string) string {
	as.mu.Lock()
	key := as.keys[kid]
	as.mu.Unlock()
	return signWith(t, c, alg, kid, key)
}

func signWith(t testing.TB, c jwt.MapClaims, alg, kid string, key any) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.GetSigningMethod(alg), c)
	tok.Header["typ"] = "at+jwt"
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// token is a good RS256 access token for sub.
func (as *authServer) token(t testing.TB, sub string) string {
	return as.sign(t, as.claims(sub), "RS256", "rsa-1")
}

// oauthTable makes as issue tokens for the server at base and returns the
// [server.oauth] table that trusts it, for more of its keys to follow.
func oauthTable(as *authServer, base string) string {
	as.resource = base + server.MCPPath
	return "[server.oauth]\nissuer = \"" + as.URL + "\"\nresource = \"" + as.resource + "\"\n"
}

// oauthTenants gives twoTenants' tenants OAuth subjects besides their
// keys: alice and carol are tenant a's, bob is b's, and the client ci-a
// is a's.
func oauthTenants(as *authServer, extra string) func(string) string {
	return func(base string) string {
		return `
[server]
shared_packs = []

` + oauthTable(as, base) + `scopes = ["mcp:tools"]
` + extra + `
[tenants.a]
api_keys = ["` + serveconf.HashKey(keyA) + `"]
oauth_subjects = ["alice", "carol"]
oauth_clients = ["ci-a"]
packs = ["core"]

[tenants.b]
api_keys = ["` + serveconf.HashKey(keyB) + `"]
oauth_subjects = ["bob"]
packs = ["secret"]
activation_scope = "session"
`
	}
}

// post sends a tools/list request of the stateless revision (of the
// stateful one when header sets MCP-Protocol-Version) with token (none
// when "") and returns the response's status, WWW-Authenticate header
// and body.
func post(t testing.TB, url, token string, header ...string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, nil)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", stateless)
	req.Header.Set("Mcp-Method", "tools/list")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	if req.Header.Get("MCP-Protocol-Version") == stateless {
		body = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
			`"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	}
	req.Body = io.NopCloser(strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 300)) // enough to judge, short enough to print
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(out)
}

// A good token is its subject's tenant in both revisions: it lists and
// calls that tenant's tools and never sees the other's. An API key keeps
// working beside tokens.
func TestOAuthTenantsBothRevisions(t *testing.T) {
	as := newAuthServer(t)
	f := newFixtureAt(t, oauthTenants(as, ""))
	ctx := context.Background()
	alice, bob := as.token(t, "alice"), as.sign(t, as.claims("bob"), "ES256", "ec-1")
	for _, version := range []string{stateful, stateless} {
		t.Run(version, func(t *testing.T) {
			a := mustConnect(t, f, alice, version, nil)
			b := mustConnect(t, f, bob, version, nil)
			if names := toolNames(t, a); slices.Contains(names, "secret_echo") {
				t.Errorf("alice's tools/list = %v, want tenant a's", names)
			}
			res, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "slugify", Arguments: map[string]any{"text": "Hello, World!"}})
			if err != nil || res.IsError || !strings.Contains(text(res), "hello-world") {
				t.Fatalf("alice's slugify: %+v, %v", res, err)
			}
			res, err = b.CallTool(ctx, &mcp.CallToolParams{Name: "secret_echo", Arguments: map[string]any{"text": "hi"}})
			if err != nil || res.IsError {
				t.Fatalf("bob's secret_echo: %+v, %v", res, err)
			}
			_, errForbidden := a.CallTool(ctx, &mcp.CallToolParams{Name: "secret_echo", Arguments: map[string]any{"text": "x"}})
			_, errMissing := a.CallTool(ctx, &mcp.CallToolParams{Name: "secret_echx", Arguments: map[string]any{"text": "x"}})
			if errForbidden == nil || errMissing == nil ||
				strings.ReplaceAll(errForbidden.Error(), "secret_echo", "NAME") != strings.ReplaceAll(errMissing.Error(), "secret_echx", "NAME") {
				t.Errorf("alice calling tenant b's tool: %v, want the error of a missing tool (%v)", errForbidden, errMissing)
			}
			if _, err := b.CallTool(ctx, &mcp.CallToolParams{Name: "slugify", Arguments: map[string]any{"text": "x"}}); err == nil {
				t.Error("bob called tenant a's slugify")
			}
			res, err = a.CallTool(ctx, &mcp.CallToolParams{Name: "tool_search", Arguments: json.RawMessage(`{"query":".*","search_type":"regex","limit":20}`)})
			if err != nil || res.IsError || strings.Contains(text(res), "secret_echo") {
				t.Errorf("alice's tool_search finds tenant b's tool: %v %s", err, text(res))
			}
			k := mustConnect(t, f, keyA, version, nil)
			if res, err := k.CallTool(ctx, &mcp.CallToolParams{Name: "slugify", Arguments: map[string]any{"text": "x"}}); err != nil || res.IsError {
				t.Errorf("tenant a's API key beside OAuth: %+v, %v", res, err)
			}
		})
	}
}

// A session belongs to the user whose token opened it: another user's
// token, even of the same tenant, cannot use it.
func TestOAuthSessionBoundToUser(t *testing.T) {
	as := newAuthServer(t)
	f := newFixtureAt(t, oauthTenants(as, ""))
	cs := mustConnect(t, f, as.token(t, "alice"), stateful, nil)
	for _, c := range []struct {
		sub  string
		want int
	}{{"carol", http.StatusForbidden}, {"alice", http.StatusOK}} {
		status, _, body := post(t, f.url, as.token(t, c.sub), "Mcp-Session-Id", cs.ID(), "MCP-Protocol-Version", stateful)
		if status != c.want {
			t.Errorf("%s's token on alice's session: %d %s, want %d", c.sub, status, body, c.want)
		}
	}
}

// The SDK's client-credentials client finds everything from the server's
// 401: the metadata document, the authorization server, its token
// endpoint and the scopes; the token it gets is the client's tenant's.
func TestOAuthClientCredentialsDiscovery(t *testing.T) {
	as := newAuthServer(t)
	f := newFixtureAt(t, oauthTenants(as, ""))
	h, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{
		Credentials: &oauthex.ClientCredentials{ClientID: "ci-a", ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: "secret-a"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, version := range []string{stateful, stateless} {
		c := mcp.NewClient(&mcp.Implementation{Name: "skillhost-test", Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: f.url, OAuthHandler: h, MaxRetries: -1},
			&mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatalf("%s: connecting with client credentials: %v", version, err)
		}
		if names := toolNames(t, cs); slices.Contains(names, "secret_echo") {
			t.Errorf("%s: the ci-a client's tools/list = %v, want tenant a's", version, names)
		}
		if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "slugify", Arguments: map[string]any{"text": "x"}}); err != nil || res.IsError {
			t.Errorf("%s: the ci-a client's slugify: %+v, %v", version, res, err)
		}
		cs.Close()
	}
}

// Every bad token is refused with the right status and challenge, and the
// server goes on serving good ones.
func TestOAuthRefusals(t *testing.T) {
	as := newAuthServer(t)
	f := newFixtureAt(t, oauthTenants(as, ""))
	if status, _, body := post(t, f.url, as.token(t, "alice")); status != http.StatusOK {
		t.Fatalf("a good token: %d %s", status, body)
	}
	metadata := `resource_metadata="` + strings.TrimSuffix(f.url, server.MCPPath) + server.ProtectedResourceMetadataPath + server.MCPPath + `"`
	with := func(sub string, change func(jwt.MapClaims)) jwt.MapClaims {
		c := as.claims(sub)
		change(c)
		return c
	}
	now := time.Now()
	otherRSA := rsaKey(t)
	pub, _ := x509.MarshalPKIXPublicKey(&as.keys["rsa-1"].(*rsa.PrivateKey).PublicKey)
	for _, c := range []struct {
		name, token string
		status      int
		code        string // the challenge's error, "" for none
		body        string
	}{
		{"no token", "", 401, "", "missing access token"},
		{"unknown API key", "sk_not_a_key", 401, "invalid_token", "neither an API key of a tenant nor a well-formed JWT"},
		{"malformed JWT", "eyJhbGciOiJSUzI1NiJ9.e30", 401, "invalid_token", "well-formed JWT"},
		{"wrong signature", signWith(t, as.claims("alice"), "RS256", "rsa-1", otherRSA), 401, "invalid_token", "signature does not verify"},
		{"tampered claims", tamper(as.token(t, "alice")), 401, "invalid_token", "signature does not verify"},
		{"alg none", signWith(t, as.claims("alice"), "none", "rsa-1", jwt.UnsafeAllowNoneSignatureType), 401, "invalid_token", "signing algorithm is not accepted"},
		{"HS256 with the public key", signWith(t, as.claims("alice"), "HS256", "rsa-1", pub), 401, "invalid_token", "signing algorithm is not accepted"},
		{"unknown kid", signWith(t, as.claims("alice"), "RS256", "rsa-9", otherRSA), 401, "invalid_token", `no RS256 key with kid "rsa-9"`},
		{"PS256 under a key pinned to RS256", signWith(t, as.claims("alice"), "PS256", "rsa-1", as.keys["rsa-1"]), 401, "invalid_token", `no PS256 key with kid "rsa-1"`},
		{"PS256 with no kid, only an RS256-pinned RSA key", signWith(t, as.claims("alice"), "PS256", "", as.keys["rsa-1"]), 401, "invalid_token", "no PS256 key"},
		{"EC token under an RSA kid", signWith(t, as.claims("alice"), "ES256", "rsa-1", as.keys["ec-1"]), 401, "invalid_token", `no ES256 key with kid "rsa-1"`},
		{"wrong audience", as.sign(t, with("alice", func(c jwt.MapClaims) { c["aud"] = "https://other.example/mcp" }), "RS256", "rsa-1"), 401, "invalid_token", "not for this server"},
		{"no audience", as.sign(t, with("alice", func(c jwt.MapClaims) { delete(c, "aud") }), "RS256", "rsa-1"), 401, "invalid_token", "not for this server"},
		{"wrong issuer", as.sign(t, with("alice", func(c jwt.MapClaims) { c["iss"] = "https://evil.example" }), "RS256", "rsa-1"), 401, "invalid_token", "issued by"},
		{"expired", as.sign(t, with("alice", func(c jwt.MapClaims) { c["exp"] = now.Add(-2 * time.Minute).Unix() }), "RS256", "rsa-1"), 401, "invalid_token", "expired"},
		{"not valid yet", as.sign(t, with("alice", func(c jwt.MapClaims) { c["nbf"] = now.Add(5 * time.Minute).Unix() }), "RS256", "rsa-1"), 401, "invalid_token", "not valid yet"},
		{"no exp", as.sign(t, with("alice", func(c jwt.MapClaims) { delete(c, "exp") }), "RS256", "rsa-1"), 401, "invalid_token", "no exp claim"},
		{"bad exp", as.sign(t, with("alice", func(c jwt.MapClaims) { c["exp"] = "tomorrow" }), "RS256", "rsa-1"), 401, "invalid_token", "token is invalid"},
		{"missing scope", as.sign(t, with("alice", func(c jwt.MapClaims) { c["scope"] = "openid" }), "RS256", "rsa-1"), 403, "insufficient_scope", "lacks the scope mcp:tools"},
		{"unknown subject", as.token(t, "mallory"), 403, "", `subject "mallory"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, challenge, body := post(t, f.url, c.token)
			if status != c.status || !strings.Contains(body, c.body) {
				t.Errorf("%d %q, want %d with %q", status, body, c.status, c.body)
			}
			if !strings.HasPrefix(challenge, "Bearer ") || !strings.Contains(challenge, metadata) || !strings.Contains(challenge, `scope="mcp:tools"`) {
				t.Errorf("WWW-Authenticate = %q, want a Bearer challenge with %s and the scope", challenge, metadata)
			}
			if got := errorParam(challenge); got != c.code {
				t.Errorf("WWW-Authenticate error = %q, want %q (%s)", got, c.code, challenge)
			}
		})
	}
	for _, c := range []struct {
		name string
		tok  string
	}{
		// exp is taken when the token is signed, not at the top of the
		// test: the requests above must not eat into the leeway.
		{"expired within the leeway", as.sign(t, with("alice", func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-10 * time.Second).Unix() }), "RS256", "rsa-1")},
		{"no kid", signWith(t, as.claims("alice"), "ES256", "", as.keys["ec-1"])},
		{"audience with a trailing slash", as.sign(t, with("alice", func(c jwt.MapClaims) { c["aud"] = []string{"https://other.example", as.resource + "/"} }), "RS256", "rsa-1")},
		{"scp list", as.sign(t, with("alice", func(c jwt.MapClaims) { delete(c, "scope"); c["scp"] = []string{"mcp:tools"} }), "RS256", "rsa-1")},
		{"client of tenant a", as.sign(t, with("svc-7", func(c jwt.MapClaims) { c["client_id"] = "ci-a" }), "RS256", "rsa-1")},
	} {
		if status, _, body := post(t, f.url, c.tok); status != http.StatusOK {
			t.Errorf("%s: %d %s, want 200", c.name, status, body)
		}
	}
	if hits := as.jwksHits.Load(); hits != 1 {
		t.Errorf("the key set was fetched %d times, want once: an unknown kid refetches at most once a minute", hits)
	}
}

// tamper changes a token's payload and keeps its signature.
func tamper(tok string) string {
	parts := strings.Split(tok, ".")
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	payload = []byte(strings.Replace(string(payload), `"alice"`, `"bob"`, 1))
	parts[1] = base64.RawURLEncoding.EncodeToString(payload)
	return strings.Join(parts, ".")
}

// errorParam returns the error parameter of a Bearer challenge.
func errorParam(challenge string) string {
	cs, err := oauthex.ParseWWWAuthenticate([]string{challenge})
	if err != nil || len(cs) != 1 {
		return "unparseable"
	}
	return cs[0].Params["error"]
}

// With tenant_claim, the claim names the tenant; a claim naming no
// tenant, or none, is 403 — never another tenant. The key set comes from
// jwks_url, and a key set that is down is a clear 401 while API keys keep
// working; once it is back, and after the refresh interval, tokens are
// accepted again, a rotated key included.
func TestOAuthTenantClaimAndKeySetOutage(t *testing.T) {
	as := newAuthServer(t)
	as.jwksDown.Store(true)
	// Long enough that the requests between two fetches, slow as they may
	// be on a loaded machine, fit in it; the waits for it to pass poll.
	const minRefresh = 2 * time.Second
	t.Cleanup(server.SetJWKSMinRefresh(minRefresh))
	f := newFixtureAt(t, func(base string) string {
		return `
[server]
shared_packs = []

` + oauthTable(as, base) + `jwks_url = "` + as.URL + `/jwks"
tenant_claim = "org"

[tenants.a]
api_keys = ["` + serveconf.HashKey(keyA) + `"]
packs = ["core"]

[tenants.b]
packs = ["secret"]
`
	})
	org := func(tenant, kid string) string {
		c := as.claims("someone")
		if tenant != "" {
			c["org"] = tenant
		}
		alg := "RS256"
		if strings.HasPrefix(kid, "ec") {
			alg = "ES256"
		}
		return as.sign(t, c, alg, kid)
	}
	// acceptedWithin posts tok until it is accepted, for as long as the
	// refresh interval may take to pass on a loaded machine.
	acceptedWithin := func(tok string) (status int, body string) {
		t.Helper()
		for deadline := time.Now().Add(minRefresh + 10*time.Second); ; time.Sleep(100 * time.Millisecond) {
			if status, _, body = post(t, f.url, tok); status == http.StatusOK || time.Now().After(deadline) {
				return status, body
			}
		}
	}
	// Signed beforehand, so that only requests come between the two
	// posts that must fall within one interval.
	tokB := org("b", "rsa-1")
	status, challenge, body := post(t, f.url, tokB)
	if status != 401 || errorParam(challenge) != "invalid_token" || !strings.Contains(body, "could not be fetched") || !strings.Contains(body, "503") {
		t.Errorf("with the key set down: %d %s %s", status, challenge, body)
	}
	if status, _, body := post(t, f.url, keyA); status != http.StatusOK {
		t.Errorf("an API key while the key set is down: %d %s", status, body)
	}
	hits := as.jwksHits.Load()
	post(t, f.url, tokB)
	if as.jwksHits.Load() != hits {
		t.Error("the key set was fetched again within the refresh interval")
	}
	as.jwksDown.Store(false)
	tokEC := org("b", "ec-1")
	if status, body := acceptedWithin(tokEC); status != http.StatusOK {
		t.Fatalf("tenant b's token once the key set is back: %d %s", status, body)
	}
	b := mustConnect(t, f, tokEC, stateless, nil)
	if res, err := b.CallTool(context.Background(), &mcp.CallToolParams{Name: "secret_echo", Arguments: map[string]any{"text": "hi"}}); err != nil || res.IsError {
		t.Fatalf("tenant b's token once the key set is back: %+v, %v", res, err)
	}
	for _, c := range []struct{ tenant, want string }{{"c", `org claim "c" names no tenant`}, {"", "no org claim"}} {
		if status, _, body := post(t, f.url, org(c.tenant, "rsa-1")); status != http.StatusForbidden || !strings.Contains(body, c.want) {
			t.Errorf("org %q: %d %s, want 403 with %q", c.tenant, status, body, c.want)
		}
	}
	// The issuer rotates to a new key: a token signed with it is
	// accepted once the set may be fetched again.
	as.mu.Lock()
	as.keys["rsa-2"] = rsaKey(t)
	as.mu.Unlock()
	if status, body := acceptedWithin(org("a", "rsa-2")); status != http.StatusOK {
		t.Errorf("a token signed with a rotated-in key: %d %s", status, body)
	}
}

// The protected-resource metadata (RFC 9728) names the resource, its
// authorization server, the scopes and how to send a token, at the root
// well-known path and the one suffixed with the endpoint's path.
func TestOAuthProtectedResourceMetadata(t *testing.T) {
	as := newAuthServer(t)
	f := newFixtureAt(t, oauthTenants(as, ""))
	base := strings.TrimSuffix(f.url, server.MCPPath)
	want := map[string]any{
		"resource":                 base + server.MCPPath,
		"authorization_servers":    []any{as.URL},
		"scopes_supported":         []any{"mcp:tools"},
		"bearer_methods_supported": []any{"header"},
		"resource_name":            "skillhost",
	}
	for _, path := range []string{server.ProtectedResourceMetadataPath, server.ProtectedResourceMetadataPath + server.MCPPath} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		err = json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %d %s %v", path, resp.StatusCode, resp.Header.Get("Content-Type"), err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", path, diff)
		}
	}
	// What a client checks (RFC 9728 §3.3): the document is for the
	// resource it asked.
	if _, err := oauthex.GetProtectedResourceMetadata(context.Background(), base+server.ProtectedResourceMetadataPath+server.MCPPath, f.url, nil); err != nil {
		t.Errorf("the SDK's client refuses the document: %v", err)
	}
}

// OAuth without tenants serves the local tenant to a good token only, and
// counts as authentication for a public address; /metrics stays closed.
func TestOAuthWithoutTenants(t *testing.T) {
	as := newAuthServer(t)
	f := newFixtureAt(t, func(base string) string {
		return "[server]\nallowed_hosts = [\"mcp.example.com\"]\n" + oauthTable(as, base)
	})
	if status, challenge, _ := post(t, f.url, ""); status != http.StatusUnauthorized || !strings.Contains(challenge, "resource_metadata=") {
		t.Errorf("no token: %d %q", status, challenge)
	}
	cs := mustConnect(t, f, as.token(t, "anyone"), stateful, nil)
	if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "secret_echo", Arguments: map[string]any{"text": "x"}}); err != nil || res.IsError {
		t.Errorf("the local tenant's secret_echo: %+v, %v", res, err)
	}
	if err := f.srv.CheckListen("0.0.0.0:8443"); err != nil {
		t.Errorf("OAuth is authentication enough to listen publicly: %v", err)
	}
	resp, err := http.Get(strings.TrimSuffix(f.url, server.MCPPath) + server.MetricsPath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		t.Error("/metrics is open on a server with OAuth")
	}
}
