package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// keySetServer serves a key set of one P-256 key and counts its fetches.
func keySetServer(t *testing.T) (*httptest.Server, *ecdsa.PrivateKey, *atomic.Int32, *atomic.Bool) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := k.PublicKey.Bytes()
	enc := base64.RawURLEncoding.EncodeToString
	var hits atomic.Int32
	var down atomic.Bool
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if down.Load() {
			http.Error(w, "down", http.StatusBadGateway)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{
			{"kty": "EC", "kid": "k1", "crv": "P-256", "x": enc(pub[1:33]), "y": enc(pub[33:])}}})
	}))
	t.Cleanup(ts.Close)
	return ts, k, &hits, &down
}

// Many requests at once, half naming a kid the set lacks: each good one
// gets its key, each bad one is refused, and the set is fetched once —
// the first time — however many ask.
func TestKeySetHammer(t *testing.T) {
	ts, _, hits, _ := keySetServer(t)
	ks := newKeySet("https://as.example", ts.URL, slog.New(slog.DiscardHandler))
	var wg sync.WaitGroup
	var bad atomic.Int32
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				kid := "k1"
				if (g+i)%2 == 1 {
					kid = "forged"
				}
				k, err := ks.key(context.Background(), kid, "ES256")
				if (k != nil) != (kid == "k1") || (err != nil) == (kid == "k1") {
					bad.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if bad.Load() != 0 {
		t.Errorf("%d lookups got the wrong answer", bad.Load())
	}
	if hits.Load() != 1 {
		t.Errorf("the key set was fetched %d times, want once", hits.Load())
	}
}

// A set past its age is fetched again; while the issuer is down, the
// keys it had keep working, and a token with an unknown kid is refused
// saying what the set lacks.
func TestKeySetStaleWhileDown(t *testing.T) {
	ts, _, hits, down := keySetServer(t)
	ks := newKeySet("https://as.example", ts.URL, slog.New(slog.DiscardHandler))
	ks.minRefresh = 0
	if _, err := ks.key(context.Background(), "k1", "ES256"); err != nil {
		t.Fatal(err)
	}
	down.Store(true)
	ks.mu.Lock()
	ks.fetched = time.Now().Add(-2 * jwksMaxAge)
	ks.mu.Unlock()
	if _, err := ks.key(context.Background(), "k1", "ES256"); err != nil || hits.Load() != 2 {
		t.Errorf("a stale key while the issuer is down: %v after %d fetches", err, hits.Load())
	}
	if _, err := ks.key(context.Background(), "k2", "ES256"); err == nil {
		t.Error("an unknown kid was accepted")
	}
	if _, err := ks.key(context.Background(), "k1", "RS256"); err == nil {
		t.Error("an EC key was given for RS256")
	}
}

// The issuer's metadata is looked for where the MCP authorization spec
// says, in its order.
func TestMetadataURLs(t *testing.T) {
	for _, c := range []struct {
		issuer string
		want   []string
	}{
		{"https://as.example", []string{"https://as.example/.well-known/oauth-authorization-server", "https://as.example/.well-known/openid-configuration"}},
		{"https://as.example/realms/x", []string{
			"https://as.example/.well-known/oauth-authorization-server/realms/x",
			"https://as.example/.well-known/openid-configuration/realms/x",
			"https://as.example/realms/x/.well-known/openid-configuration"}},
	} {
		if diff := cmp.Diff(c.want, metadataURLs(c.issuer)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.issuer, diff)
		}
	}
}

// An issuer with a path whose only document is its OpenID configuration
// is found; a document of another issuer, or none, is an error that says
// what to do.
func TestDiscoverJWKS(t *testing.T) {
	var issuer string
	claimed := ""
	mux := http.NewServeMux()
	mux.HandleFunc("GET /realms/x/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		iss := issuer
		if claimed != "" {
			iss = claimed
		}
		json.NewEncoder(w).Encode(map[string]string{"issuer": iss, "jwks_uri": issuer + "/certs"})
	})
	ts := httptest.NewServer(mux)
	defer ts.Close()
	issuer = ts.URL + "/realms/x"
	got, err := discoverJWKS(context.Background(), ts.Client(), issuer)
	if err != nil || got != issuer+"/certs" {
		t.Errorf("discoverJWKS = %q, %v", got, err)
	}
	claimed = "https://evil.example"
	if _, err := discoverJWKS(context.Background(), ts.Client(), issuer); err == nil || !strings.Contains(err.Error(), "its issuer is") {
		t.Errorf("another issuer's metadata: %v", err)
	}
	if _, err := discoverJWKS(context.Background(), ts.Client(), ts.URL+"/realms/y"); err == nil || !strings.Contains(err.Error(), "jwks_url") {
		t.Errorf("no metadata: %v", err)
	}
}
