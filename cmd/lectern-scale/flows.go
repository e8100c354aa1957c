package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"strings"

	"github.com/lectern/lectern/authserver/password"
	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/internal/oauthtest"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/sqlstore"
)

const (
	flowEmail    = "scale-student@example.test"
	flowPassword = "scale-bench-password"
	redirectURI  = "http://127.0.0.1:53682/callback"
	// flowClients is how many clients the code flows spread over: the
	// token endpoint allows 30 requests/s per client.
	flowClients = 64
)

// flows is the state of the code-flow and userinfo scenarios: a student
// at a few random sites, clients there, and access tokens.
type flows struct {
	r       *run
	sites   []int
	clients []flowClient
	browser *oauthtest.Browser
	// tokens are written by signIn before the load runs and only read
	// during them.
	tokens []flowToken
}

type flowClient struct {
	site int
	id   string
}

type flowToken struct {
	site   int
	access string
}

// prepareFlows writes the user, roles and clients straight to the
// database, before the server starts.
func (r *run) prepareFlows(ctx context.Context) (*flows, error) {
	store, err := sqlstore.Open(ctx, r.dbURL, nil)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	f := &flows{r: r}
	k := min(r.cfg.flowSites, r.n)
	f.sites = mrand.Perm(r.n)[:k]
	hash, err := password.Hash(flowPassword, password.Default)
	if err != nil {
		return nil, err
	}
	u := &storage.User{ID: "usr_scalebench", Email: flowEmail, Name: "Scale Student", PasswordHash: hash}
	if err := store.CreateUser(ctx, u); err != nil {
		return nil, err
	}
	perSite := max(1, (flowClients+k-1)/k)
	for _, i := range f.sites {
		site, err := store.SiteBySlug(ctx, fmt.Sprintf("s%d", i))
		if err != nil {
			return nil, err
		}
		if err := store.GrantRole(ctx, site.ID, u.ID, storage.RoleStudent); err != nil {
			return nil, err
		}
		for j := range perSite {
			id := fmt.Sprintf("scale-client-%d", j)
			c := &storage.Client{SiteID: &site.ID, ClientID: id, Name: "Scale bench " + id, Audience: storage.AudienceMember,
				Type: storage.ClientPublic, ApplicationType: "native", RedirectURIs: []string{redirectURI}, Scopes: scope.MemberDefault(),
				Source: storage.SourceAdmin, Reviewed: true, CreatedBy: "lectern-scale"}
			if err := store.CreateClient(ctx, c); err != nil {
				return nil, err
			}
			f.clients = append(f.clients, flowClient{site: i, id: id})
		}
	}
	return f, nil
}

// signIn signs the student in at every flow site and consents for every
// client once (remembered afterwards), keeping one access token per client.
func (f *flows) signIn(r *run) error {
	f.browser = oauthtest.NewBrowser(r.target)
	if tr, ok := f.browser.Client.Transport.(*http.Transport); ok {
		tr.MaxIdleConnsPerHost = 64 // keep-alive for every worker at each flow site
	}
	for _, c := range f.clients {
		v := verifier()
		out, err := f.browser.Authorize(f.authURL(c, v), oauthtest.Options{Email: flowEmail, Password: flowPassword})
		if err != nil {
			return err
		}
		code, err := out.Code()
		if err != nil {
			return fmt.Errorf("sign-in at %s: %w", r.host(c.site), err)
		}
		access, err := f.exchange(c, code, v)
		if err != nil {
			return err
		}
		f.tokens = append(f.tokens, flowToken{site: c.site, access: access})
	}
	return nil
}

func (f *flows) origin(site int) string { return "http://" + f.r.host(site) }

func (f *flows) authURL(c flowClient, verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{
		"response_type": {"code"}, "client_id": {c.id}, "redirect_uri": {redirectURI},
		"scope": {"openid profile email account:read"}, "state": {"s" + verifier[:8]}, "nonce": {"n" + verifier[:8]},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
		"resource": {f.origin(c.site)},
	}
	return f.origin(c.site) + "/oauth/authorize?" + q.Encode()
}

func (f *flows) exchange(c flowClient, code, verifier string) (string, error) {
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirectURI},
		"client_id": {c.id}, "code_verifier": {verifier}, "resource": {f.origin(c.site)}}
	req, err := http.NewRequest(http.MethodPost, "http://"+f.r.target+"/api/oauth/token", strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Host = f.r.host(c.site)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := f.r.http.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("token at %s: %d %s", f.r.host(c.site), resp.StatusCode, body)
	}
	var t struct {
		AccessToken string `json:"access_token"`
		IDToken     string `json:"id_token"`
	}
	if err := json.Unmarshal(body, &t); err != nil {
		return "", err
	}
	if t.AccessToken == "" || t.IDToken == "" {
		return "", errors.New("token response without access_token or id_token")
	}
	return t.AccessToken, nil
}

// codeFlow is one authorization (the session and consent exist: a
// redirect with a code) and its code exchange, at a random flow client.
func (f *flows) codeFlow(rng *mrand.Rand) error {
	c := f.clients[rng.IntN(len(f.clients))]
	v := verifier()
	resp, err := f.browser.Client.Get(f.authURL(c, v))
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || err != nil || !strings.HasPrefix(loc.String(), redirectURI) || loc.Query().Get("code") == "" {
		return fmt.Errorf("authorize at %s: %d %s", f.r.host(c.site), resp.StatusCode, resp.Header.Get("Location"))
	}
	_, err = f.exchange(c, loc.Query().Get("code"), v)
	return err
}

// userinfo reads the student's claims with a random token.
func (f *flows) userinfo(rng *mrand.Rand) error {
	t := f.tokens[rng.IntN(len(f.tokens))]
	req, _ := http.NewRequest(http.MethodGet, "http://"+f.r.target+"/api/oauth/userinfo", nil)
	req.Host = f.r.host(t.site)
	req.Header.Set("Authorization", "Bearer "+t.access)
	resp, err := f.r.http.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("userinfo at %s: %d", f.r.host(t.site), resp.StatusCode)
	}
	return nil
}

func verifier() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
