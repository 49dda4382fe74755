package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/skillhost/skillhost/server/serveconf"
)

// DefaultOAuthLeeway is the clock skew allowed on a token's exp, nbf and
// iat when [server.oauth] leeway is not set.
const DefaultOAuthLeeway = 30 * time.Second

// ProtectedResourceMetadataPath is where the server's OAuth protected
// resource metadata (RFC 9728) is served; it is also served at this path
// followed by the path of the configured resource ("…/mcp").
const ProtectedResourceMetadataPath = "/.well-known/oauth-protected-resource"

// signingAlgs are the JWS algorithms a token may be signed with: RSA and
// ECDSA. "none" and the HMAC algorithms are refused: a resource server
// holds no secret shared with the issuer, and accepting HS* with a public
// key as the secret is the classic forgery.
var signingAlgs = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512"}

// oauthVerifier checks the access tokens of [server.oauth] and finds
// their tenant. It is safe for concurrent use.
type oauthVerifier struct {
	issuer   string
	resource string
	scopes   []string
	leeway   time.Duration
	keys     *keySet
	parser   *jwt.Parser

	// metadataURL is the resource's metadata document, named in every
	// challenge.
	metadataURL string
	// How a token becomes a tenant: the tenant named by claim, or by the
	// token's subject, or by its client; every token is local's when the
	// server has no [tenants].
	claim    string
	tenants  map[string]*tenant
	subjects map[string]*tenant
	clients  map[string]*tenant
	local    *tenant
}

// tokenError is why a request's token was refused: the HTTP status, the
// RFC 6750 error code ("" for none) and what went wrong.
type tokenError struct {
	status int
	code   string
	msg    string
}

func (e *tokenError) Error() string { return e.msg }

func invalidToken(format string, args ...any) *tokenError {
	return &tokenError{status: http.StatusUnauthorized, code: "invalid_token", msg: fmt.Sprintf(format, args...)}
}

func newOAuthVerifier(s *Server, o *serveconf.OAuth, log *slog.Logger) (*oauthVerifier, error) {
	v := &oauthVerifier{issuer: o.Issuer, resource: o.Resource, scopes: o.Scopes, leeway: o.Leeway,
		claim: o.TenantClaim, tenants: s.tenants, local: s.local,
		subjects: map[string]*tenant{}, clients: map[string]*tenant{}}
	if v.leeway == 0 {
		v.leeway = DefaultOAuthLeeway
	}
	u, err := url.Parse(o.Resource)
	if err != nil {
		return nil, fmt.Errorf("%w: [server.oauth] resource %q: %v", ErrBadTenants, o.Resource, err)
	}
	v.metadataURL = (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: ProtectedResourceMetadataPath + strings.TrimSuffix(u.Path, "/")}).String()
	for _, tc := range s.cfg.Tenants {
		t := s.tenants[tc.ID]
		for _, sub := range tc.OAuthSubjects {
			v.subjects[sub] = t
		}
		for _, c := range tc.OAuthClients {
			v.clients[c] = t
		}
	}
	v.keys = newKeySet(o.Issuer, o.JWKSURL, log)
	v.parser = jwt.NewParser(jwt.WithValidMethods(signingAlgs), jwt.WithLeeway(v.leeway),
		jwt.WithExpirationRequired(), jwt.WithIssuedAt())
	return v, nil
}

// verify checks a bearer token and returns what it says and whose it is.
func (v *oauthVerifier) verify(ctx context.Context, raw string) (*auth.TokenInfo, *tenant, *tokenError) {
	claims := jwt.MapClaims{}
	_, err := v.parser.ParseWithClaims(raw, claims, func(tok *jwt.Token) (any, error) {
		kid, _ := tok.Header["kid"].(string)
		return v.keys.key(ctx, kid, tok.Method.Alg())
	})
	if err != nil {
		return nil, nil, tokenRefusal(err)
	}
	if iss, _ := claims["iss"].(string); iss != v.issuer {
		return nil, nil, invalidToken("the token was issued by %q, not by this server's authorization server %q", iss, v.issuer)
	}
	aud, err := claims.GetAudience()
	if err != nil || !oauthex.MatchesResource(aud, v.resource) {
		return nil, nil, invalidToken("the token is not for this server: its audience %q does not include %s (the resource a client asks a token for, RFC 8707)", []string(aud), v.resource)
	}
	exp, err := claims.GetExpirationTime() // required by the parser, so never absent here
	if err != nil || exp == nil {
		return nil, nil, invalidToken("the token has no exp claim; this server accepts only tokens that expire")
	}
	sub, _ := claims["sub"].(string)
	client, _ := claims["client_id"].(string)
	if client == "" {
		client, _ = claims["azp"].(string)
	}
	info := &auth.TokenInfo{Scopes: tokenScopes(claims), Expiration: exp.Time, UserID: sub,
		Extra: map[string]any{"iss": v.issuer, "client_id": client}}
	if info.UserID == "" && client != "" {
		info.UserID = "client:" + client
	}
	var missing []string
	for _, sc := range v.scopes {
		if !slices.Contains(info.Scopes, sc) {
			missing = append(missing, sc)
		}
	}
	if len(missing) > 0 {
		return nil, nil, &tokenError{status: http.StatusForbidden, code: "insufficient_scope",
			msg: fmt.Sprintf("the token lacks the scope %s this server requires", strings.Join(missing, ", "))}
	}
	t, terr := v.tenantOf(claims, sub, client)
	if terr != nil {
		return nil, nil, terr
	}
	return info, t, nil
}

// tenantOf finds a verified token's tenant.
func (v *oauthVerifier) tenantOf(claims jwt.MapClaims, sub, client string) (*tenant, *tokenError) {
	forbidden := func(format string, args ...any) *tokenError {
		return &tokenError{status: http.StatusForbidden, msg: fmt.Sprintf(format, args...)}
	}
	switch {
	case v.local != nil:
		return v.local, nil
	case v.claim != "":
		id, ok := claims[v.claim].(string)
		if !ok || id == "" {
			return nil, forbidden("the token has no %s claim naming its tenant", v.claim)
		}
		if t := v.tenants[id]; t != nil {
			return t, nil
		}
		return nil, forbidden("the token's %s claim %q names no tenant of this server", v.claim, id)
	}
	if t := v.subjects[sub]; t != nil && sub != "" {
		return t, nil
	}
	if t := v.clients[client]; t != nil && client != "" {
		return t, nil
	}
	return nil, forbidden("the token's subject %q (client %q) is no tenant's: an operator lists it in a tenant's oauth_subjects or oauth_clients", sub, client)
}

// tokenScopes reads a token's scopes: the space-separated scope claim of
// RFC 9068, or the scp claim (a list or a string) some servers issue.
func tokenScopes(claims jwt.MapClaims) []string {
	switch s := claims["scope"].(type) {
	case string:
		return strings.Fields(s)
	}
	switch s := claims["scp"].(type) {
	case string:
		return strings.Fields(s)
	case []any:
		var out []string
		for _, v := range s {
			if str, ok := v.(string); ok {
				out = append(out, str)
			}
		}
		return out
	}
	return nil
}

// tokenRefusal says why golang-jwt refused a token.
func tokenRefusal(err error) *tokenError {
	var ke *keyError
	switch {
	case errors.As(err, &ke):
		return invalidToken("the token's signature cannot be checked: %s", ke.msg)
	case errors.Is(err, jwt.ErrTokenMalformed):
		return invalidToken("the token is neither an API key of a tenant nor a well-formed JWT")
	case errors.Is(err, jwt.ErrTokenSignatureInvalid) && strings.Contains(err.Error(), "signing method"):
		return invalidToken("the token's signing algorithm is not accepted; it must be one of %s", strings.Join(signingAlgs, ", "))
	case errors.Is(err, jwt.ErrTokenSignatureInvalid), errors.Is(err, jwt.ErrTokenUnverifiable):
		return invalidToken("the token's signature does not verify with the issuer's keys")
	case errors.Is(err, jwt.ErrTokenExpired):
		return invalidToken("the token has expired")
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		return invalidToken("the token is not valid yet (nbf)")
	case errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return invalidToken("the token is issued in the future (iat)")
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return invalidToken("the token has no exp claim; this server accepts only tokens that expire")
	}
	return invalidToken("the token is invalid: %v", err)
}

// challenge writes a refusal with its WWW-Authenticate challenge (RFC
// 6750 §3, RFC 9728 §5.1): the metadata document, the scopes the server
// requires and, when a token was sent, the error.
func (v *oauthVerifier) challenge(w http.ResponseWriter, e *tokenError) {
	params := []string{fmt.Sprintf("resource_metadata=%q", v.metadataURL)}
	if len(v.scopes) > 0 {
		params = append(params, fmt.Sprintf("scope=%q", strings.Join(v.scopes, " ")))
	}
	if e.code != "" {
		params = append(params, fmt.Sprintf("error=%q", e.code), fmt.Sprintf("error_description=%q", quotable(e.msg)))
	}
	w.Header().Set("WWW-Authenticate", "Bearer "+strings.Join(params, ", "))
	prefix := "Unauthorized: "
	if e.status == http.StatusForbidden {
		prefix = "Forbidden: "
	}
	http.Error(w, prefix+e.msg, e.status)
}

// quotable keeps what a quoted-string may hold without escapes: the
// printable ASCII characters but " and \.
func quotable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			return '\''
		}
		return r
	}, s)
}

// metadata is the resource's protected-resource metadata document.
func (v *oauthVerifier) metadata() *oauthex.ProtectedResourceMetadata {
	return &oauthex.ProtectedResourceMetadata{
		Resource:               v.resource,
		AuthorizationServers:   []string{v.issuer},
		ScopesSupported:        v.scopes,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "skillhost",
	}
}

// metadataPaths are the paths the metadata document is served at.
func (v *oauthVerifier) metadataPaths() []string {
	paths := []string{ProtectedResourceMetadataPath, ProtectedResourceMetadataPath + MCPPath}
	if u, err := url.Parse(v.metadataURL); err == nil && !slices.Contains(paths, u.Path) {
		paths = append(paths, u.Path)
	}
	return paths
}

type verifiedKey struct{}

// verifiedToken is the TokenVerifier of the SDK's RequireBearerToken
// that stands after authenticate: it returns what authenticate found, so
// that the SDK binds each session to the token's user.
func verifiedToken(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
	if info, ok := ctx.Value(verifiedKey{}).(*auth.TokenInfo); ok {
		return info, nil
	}
	return nil, auth.ErrInvalidToken
}
