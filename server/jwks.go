package server

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// How the issuer's signing keys are kept.
var (
	// jwksMinRefresh is the least time between two fetches of the key
	// set: a token naming a key the set lacks fetches it again at most
	// this often, so forged kids cannot make the server hammer the
	// issuer. A variable so that tests can shorten it.
	jwksMinRefresh = time.Minute
	// jwksMaxAge is how long a fetched key set is used before it is
	// fetched again (keys the issuer has withdrawn stop working).
	jwksMaxAge = time.Hour
)

const (
	// jwksFetchTimeout bounds one fetch of metadata or keys.
	jwksFetchTimeout = 10 * time.Second
	// maxJWKSBytes bounds a metadata document or key set.
	maxJWKSBytes = 1 << 20
	// minRSABits is the smallest RSA key accepted.
	minRSABits = 2048
)

// keyError says why no key of the issuer's set can verify a token.
type keyError struct{ msg string }

func (e *keyError) Error() string { return e.msg }

func noKey(format string, args ...any) error {
	return &keyError{msg: fmt.Sprintf(format, args...)}
}

// jwk is one usable public key of a key set.
type jwk struct {
	kid string
	alg string // "" when the set does not pin one
	key crypto.PublicKey
}

// keySet is the issuer's signing keys, fetched when first needed and
// again when a token names a key it lacks (at most every jwksMinRefresh)
// or once they are jwksMaxAge old. It is safe for concurrent use.
type keySet struct {
	issuer  string
	jwksURL string // "" until discovered from the issuer's metadata
	client  *http.Client
	log     *slog.Logger
	// minRefresh is jwksMinRefresh when the set was made.
	minRefresh time.Duration

	mu      sync.Mutex
	keys    []jwk
	fetched time.Time // the last successful fetch
	tried   time.Time // the last attempt
	lastErr error     // of the last attempt
}

func newKeySet(issuer, jwksURL string, log *slog.Logger) *keySet {
	return &keySet{issuer: issuer, jwksURL: jwksURL, log: log, minRefresh: jwksMinRefresh,
		client: &http.Client{Timeout: jwksFetchTimeout}}
}

// key returns the key that verifies a token signed with alg whose header
// names kid ("" when it names none).
func (ks *keySet) key(ctx context.Context, kid, alg string) (crypto.PublicKey, error) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	k, err := pickKey(ks.keys, kid, alg)
	stale := time.Since(ks.fetched) > jwksMaxAge
	if (err != nil || stale) && time.Since(ks.tried) >= ks.minRefresh {
		ks.refresh(ctx)
		if ks.lastErr == nil || k == nil {
			k, err = pickKey(ks.keys, kid, alg)
		}
	}
	if k != nil {
		return k, nil // a stale key beats none while the issuer is down
	}
	if len(ks.keys) == 0 && ks.lastErr != nil {
		return nil, noKey("the issuer's keys could not be fetched (%v); retried at most every %s", ks.lastErr, ks.minRefresh)
	}
	return nil, err
}

// refresh fetches the key set; on failure it keeps the keys it had.
func (ks *keySet) refresh(ctx context.Context) {
	ks.tried = time.Now()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), jwksFetchTimeout)
	defer cancel()
	keys, err := ks.fetch(ctx)
	ks.lastErr = err
	if err != nil {
		ks.log.Warn("fetching the OAuth issuer's signing keys", "issuer", ks.issuer, "jwks_url", ks.jwksURL, "err", err)
		return
	}
	ks.keys, ks.fetched = keys, time.Now()
}

func (ks *keySet) fetch(ctx context.Context) ([]jwk, error) {
	if ks.jwksURL == "" {
		u, err := discoverJWKS(ctx, ks.client, ks.issuer)
		if err != nil {
			return nil, err
		}
		ks.jwksURL = u
	}
	body, err := getJSON(ctx, ks.client, ks.jwksURL)
	if err != nil {
		return nil, err
	}
	return parseJWKS(body)
}

// discoverJWKS finds the issuer's jwks_uri in its authorization server
// metadata (RFC 8414) or, failing that, its OpenID configuration, at the
// well-known URLs the MCP authorization spec lists, in its order.
func discoverJWKS(ctx context.Context, c *http.Client, issuer string) (string, error) {
	var tried []string
	for _, u := range metadataURLs(issuer) {
		body, err := getJSON(ctx, c, u)
		if err != nil {
			tried = append(tried, err.Error())
			continue
		}
		var meta oauthex.AuthServerMeta
		if err := json.Unmarshal(body, &meta); err != nil {
			return "", fmt.Errorf("%s: not authorization server metadata: %v", u, err)
		}
		if meta.Issuer != issuer {
			return "", fmt.Errorf("%s: its issuer is %q, not %q", u, meta.Issuer, issuer)
		}
		if meta.JWKSURI == "" {
			return "", fmt.Errorf("%s has no jwks_uri; set [server.oauth] jwks_url", u)
		}
		if j, err := url.Parse(meta.JWKSURI); err != nil || (j.Scheme != "https" && !(j.Scheme == "http" && isLoopback(j.Host))) {
			return "", fmt.Errorf("%s: jwks_uri %q is not an https URL", u, meta.JWKSURI)
		}
		return meta.JWKSURI, nil
	}
	return "", fmt.Errorf("no authorization server metadata found for issuer %s (%s); set [server.oauth] jwks_url", issuer, strings.Join(tried, "; "))
}

// metadataURLs are the well-known URLs of an issuer's metadata.
func metadataURLs(issuer string) []string {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil
	}
	path := strings.Trim(u.Path, "/")
	at := func(p string) string {
		v := *u
		v.Path, v.RawPath = p, ""
		return v.String()
	}
	if path == "" {
		return []string{at("/.well-known/oauth-authorization-server"), at("/.well-known/openid-configuration")}
	}
	return []string{
		at("/.well-known/oauth-authorization-server/" + path),
		at("/.well-known/openid-configuration/" + path),
		at("/" + path + "/.well-known/openid-configuration"),
	}
}

// getJSON fetches a document of at most maxJWKSBytes.
func getJSON(ctx context.Context, c *http.Client, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %v", u, err)
	}
	if len(body) > maxJWKSBytes {
		return nil, fmt.Errorf("GET %s: larger than %d bytes", u, maxJWKSBytes)
	}
	return body, nil
}

// rawJWK is a JSON Web Key (RFC 7517) as far as skillhost reads it.
type rawJWK struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	N   string `json:"n"`
	E   string `json:"e"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

// parseJWKS reads a JSON Web Key Set, keeping the RSA and EC signing keys
// it can use. A key it cannot use (an encryption key, an unknown type, a
// short RSA modulus, a point off its curve) is left out; a set with no
// usable key is an error.
func parseJWKS(data []byte) ([]jwk, error) {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(data, &set); err != nil {
		return nil, fmt.Errorf("the key set is not JSON of the form {\"keys\": [...]}: %v", err)
	}
	var out []jwk
	var skipped []string
	for i, raw := range set.Keys {
		var k rawJWK
		if err := json.Unmarshal(raw, &k); err != nil {
			skipped = append(skipped, fmt.Sprintf("key %d: %v", i, err))
			continue
		}
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		pub, err := k.publicKey()
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("key %d (kid %q): %v", i, k.Kid, err))
			continue
		}
		out = append(out, jwk{kid: k.Kid, alg: k.Alg, key: pub})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the key set has no usable RSA or EC signing key (%s)", strings.Join(skipped, "; "))
	}
	return out, nil
}

func (k *rawJWK) publicKey() (crypto.PublicKey, error) {
	switch k.Kty {
	case "RSA":
		n, err := b64(k.N, "n")
		if err != nil {
			return nil, err
		}
		e, err := b64(k.E, "e")
		if err != nil {
			return nil, err
		}
		if len(e) == 0 || len(e) > 4 {
			return nil, errors.New("e is not a usable exponent")
		}
		exp := new(big.Int).SetBytes(e)
		if !exp.IsInt64() || exp.Int64() < 3 || exp.Int64() > 1<<31-1 || exp.Bit(0) == 0 {
			return nil, errors.New("e is not a usable exponent")
		}
		mod := new(big.Int).SetBytes(n)
		if mod.BitLen() < minRSABits {
			return nil, fmt.Errorf("an RSA modulus of %d bits is shorter than %d", mod.BitLen(), minRSABits)
		}
		return &rsa.PublicKey{N: mod, E: int(exp.Int64())}, nil
	case "EC":
		var curve elliptic.Curve
		switch k.Crv {
		case "P-256":
			curve = elliptic.P256()
		case "P-384":
			curve = elliptic.P384()
		case "P-521":
			curve = elliptic.P521()
		default:
			return nil, fmt.Errorf("curve %q is not P-256, P-384 or P-521", k.Crv)
		}
		size := (curve.Params().BitSize + 7) / 8
		x, err := b64(k.X, "x")
		if err != nil {
			return nil, err
		}
		y, err := b64(k.Y, "y")
		if err != nil {
			return nil, err
		}
		if len(x) != size || len(y) != size {
			return nil, fmt.Errorf("x and y must be %d bytes for %s", size, k.Crv)
		}
		point := append(append([]byte{4}, x...), y...)
		return ecdsa.ParseUncompressedPublicKey(curve, point)
	}
	return nil, fmt.Errorf("key type %q is not RSA or EC", k.Kty)
}

// b64 decodes a base64url member of a JWK (padding tolerated).
func b64(s, name string) ([]byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil || len(b) == 0 {
		return nil, fmt.Errorf("%s is not base64url", name)
	}
	return b, nil
}

// pickKey finds the key for a token: by kid when the token names one,
// else the one key of the set that suits alg.
func pickKey(keys []jwk, kid, alg string) (crypto.PublicKey, error) {
	var found []jwk
	for _, k := range keys {
		if (kid == "" || k.kid == kid) && suits(k, alg) {
			found = append(found, k)
		}
	}
	switch {
	case len(found) == 1 || (kid != "" && len(found) > 0):
		return found[0].key, nil
	case kid != "":
		return nil, noKey("the issuer's key set has no %s key with kid %q", alg, kid)
	case len(found) == 0:
		return nil, noKey("the issuer's key set has no %s key", alg)
	}
	return nil, noKey("the token names no kid and the issuer's key set has %d %s keys", len(found), alg)
}

// suits reports whether k can verify a signature made with alg.
func suits(k jwk, alg string) bool {
	if k.alg != "" && k.alg != alg {
		return false
	}
	switch pub := k.key.(type) {
	case *rsa.PublicKey:
		return strings.HasPrefix(alg, "RS") || strings.HasPrefix(alg, "PS")
	case *ecdsa.PublicKey:
		switch alg {
		case "ES256":
			return pub.Curve == elliptic.P256()
		case "ES384":
			return pub.Curve == elliptic.P384()
		case "ES512":
			return pub.Curve == elliptic.P521()
		}
	}
	return false
}
