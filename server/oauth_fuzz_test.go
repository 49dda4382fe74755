package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/skillhost/skillhost/server/serveconf"
	"github.com/skillhost/skillhost/tenancy"
)

// fuzzVerifier is a verifier whose key set is already fetched (an RSA
// and an EC key) and is never fetched again, so that fuzzing reaches no
// network.
func fuzzVerifier(f *testing.F) (*oauthVerifier, *rsa.PrivateKey, *ecdsa.PrivateKey) {
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		f.Fatal(err)
	}
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	a, b := &tenant{Tenant: &tenancy.Tenant{ID: "a"}}, &tenant{Tenant: &tenancy.Tenant{ID: "b"}}
	s := &Server{cfg: &serveconf.Config{Tenants: []serveconf.Tenant{{Tenant: tenancy.Tenant{ID: "a"}, OAuthSubjects: []string{"alice"}}, {Tenant: tenancy.Tenant{ID: "b"}, OAuthClients: []string{"bot"}}}},
		tenants: map[string]*tenant{"a": a, "b": b}}
	v, err := newOAuthVerifier(s, &serveconf.OAuth{Issuer: "https://as.example", Resource: "https://mcp.example/mcp", Scopes: []string{"mcp"}},
		slog.New(slog.DiscardHandler))
	if err != nil {
		f.Fatal(err)
	}
	now := time.Now()
	v.keys.keys = []jwk{{kid: "r", key: &rk.PublicKey}, {kid: "e", key: &ek.PublicKey}}
	v.keys.fetched, v.keys.tried, v.keys.minRefresh = now.Add(time.Hour), now.Add(time.Hour), time.Hour
	return v, rk, ek
}

// FuzzVerifyToken: whatever a client sends as a bearer token, checking
// it never panics, and a token is accepted only as a tenant's, with the
// scope required.
func FuzzVerifyToken(f *testing.F) {
	v, rk, ek := fuzzVerifier(f)
	good := jwt.MapClaims{"iss": "https://as.example", "aud": "https://mcp.example/mcp", "sub": "alice", "scope": "mcp",
		"exp": time.Now().Add(time.Hour).Unix()}
	sign := func(m jwt.SigningMethod, kid string, key any, c jwt.MapClaims) string {
		tok := jwt.NewWithClaims(m, c)
		tok.Header["kid"] = kid
		s, err := tok.SignedString(key)
		if err != nil {
			f.Fatal(err)
		}
		return s
	}
	rs := sign(jwt.SigningMethodRS256, "r", rk, good)
	f.Add(rs)
	f.Add(sign(jwt.SigningMethodES256, "e", ek, good))
	f.Add(sign(jwt.SigningMethodPS256, "r", rk, jwt.MapClaims{"iss": "https://as.example", "aud": []string{"x", "https://mcp.example/mcp/"},
		"client_id": "bot", "scp": []string{"mcp"}, "exp": time.Now().Add(time.Hour).Unix()}))
	f.Add(sign(jwt.SigningMethodNone, "r", jwt.UnsafeAllowNoneSignatureType, good))
	f.Add(sign(jwt.SigningMethodHS256, "r", []byte("secret"), good))
	f.Add(strings.TrimSuffix(rs, rs[len(rs)-4:]))
	for _, s := range []string{"", ".", "..", "a.b.c", "e30.e30.", "eyJhbGciOiJSUzI1NiIsImtpZCI6WzFdfQ.e30.AA",
		`eyJhbGciOiJFUzI1NiIsImtpZCI6ImUifQ.eyJleHAiOjFlMzA4fQ.AA`, strings.Repeat("A", 5000)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		info, tn, terr := v.verify(context.Background(), raw)
		if terr != nil {
			if info != nil || tn != nil || terr.msg == "" || (terr.status != http.StatusUnauthorized && terr.status != http.StatusForbidden) {
				t.Fatalf("a refusal with %+v %v: %+v", info, tn, terr)
			}
			return
		}
		if tn == nil || info == nil || (tn.ID != "a" && tn.ID != "b") {
			t.Fatalf("accepted %q as %+v", raw, tn)
		}
		if !strings.Contains(strings.Join(info.Scopes, " "), "mcp") {
			t.Fatalf("accepted %q without the scope: %v", raw, info.Scopes)
		}
	})
}

// FuzzParseJWKS: whatever an issuer's key set holds, reading it never
// panics and keeps only keys that can verify something.
func FuzzParseJWKS(f *testing.F) {
	// A 2048-bit RSA key and a P-384 key, written out: generating keys in
	// every fuzz worker would take longer than the fuzzing.
	f.Add([]byte(`{"keys":[
{"kty":"RSA","kid":"r","e":"AQAB","n":"wFbMsTzwIa-zGpNdiTGoL1ynPjfuhZ3bQ1UZxapmhWQ3Oyb94Fgs8bqKQjNzJ_zDzV6l9E6sJ8R3mu-zAZV2i3geVro-wBSL9AisisD5F_hR61rqsshlmEBja-4OmPUGNp2dLkN0oeyAnHUiOPNzZ3omQuUACAMfdnIv6qchGAr4l-Oqt2LmQ-bK7BM4ydvJLlo-AhiAqf77W7bi0zLw0MKKhSWnRrTXItkWNWn6WvAFiYWS3neAij_C2hKn8y_-nxxTttnQC4AhxQ5d-VhX1GEjZ1EUstfXCLFDKaqNXrSrTKlmJ8rXToT4c_xEl-4M_bdzzloaEuAo9mzp9V4FTQ"},
{"kty":"EC","kid":"e","crv":"P-384","x":"0xhj_0i3rOoRweZ4tPTJz1PG18aWcNeJQQDemhEAOiUZyMjAlvIj5QvWK3kRnvDK","y":"gU05QJFEautCtuBghST58X1ojZxDKJmEtBY8b984uMnSsUq-PqdXME265iZKkgu2"},
{"kty":"oct","k":"c2VjcmV0"},
{"kty":"RSA","use":"enc","n":"AQAB","e":"AQAB"}]}`))
	for _, s := range []string{`{"keys":[]}`, `{}`, `[]`, `{"keys":[{"kty":"EC","crv":"P-256","x":"AA","y":"AA"}]}`,
		`{"keys":[{"kty":"RSA","n":"AQAB","e":"AAAAAAAB"}]}`, `{"keys":[{"kty":"EC","crv":"P-521","x":"","y":""}]}`, `{"keys":[1,"x",null]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		keys, err := parseJWKS(data)
		if err == nil && len(keys) == 0 {
			t.Fatal("a key set with no usable key was accepted")
		}
		for _, k := range keys {
			switch pub := k.key.(type) {
			case *rsa.PublicKey:
				if pub.N.BitLen() < minRSABits {
					t.Fatalf("kept a %d-bit RSA key", pub.N.BitLen())
				}
			case *ecdsa.PublicKey:
			default:
				t.Fatalf("kept a key of type %T", k.key)
			}
		}
	})
}
