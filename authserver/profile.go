package authserver

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"time"

	json "github.com/segmentio/encoding/json"

	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/vocab"
)

// profileTTL bounds how stale cached claims may be; role and user changes
// delete the entry at once (storage.ProfileKey).
const profileTTL = time.Minute

// Profile is a user's claims at one site: what userinfo and id_tokens say.
type Profile struct {
	UserID string `json:"sub"`
	Email  string `json:"email"`
	Name   string `json:"name"`
	// Picture is the provider's picture URL, PictureFile the picture the
	// person uploaded; the claim is made per site (userClaims).
	Picture     string   `json:"picture"`
	PictureFile string   `json:"picture_file,omitempty"`
	Roles       []string `json:"roles"`
	// EmailVerified: the account showed it receives mail at Email.
	EmailVerified bool `json:"email_verified"`
}

// profile returns the user's claims at site, from the cache when it can.
func (s *Server) profile(ctx context.Context, site tenant.ID, userID string) (*Profile, error) {
	key := storage.ProfileKey(site, userID)
	raw, err := s.cache.Get(ctx, key)
	if err == nil {
		var p Profile
		if json.Unmarshal(raw, &p) == nil && p.UserID == userID {
			return &p, nil
		}
	}
	if errors.Is(err, storage.ErrUnavailable) {
		if p := s.outage.get(key); p != nil {
			return p, nil
		}
		p, err := s.profileFromStore(ctx, site, userID)
		if err == nil {
			s.outage.put(key, p)
		}
		return p, err
	}
	p, err := s.profileFromStore(ctx, site, userID)
	if err != nil {
		return nil, err
	}
	if b, err := json.Marshal(p); err == nil {
		_ = s.cache.Set(ctx, key, b, profileTTL)
	}
	return p, nil
}

func (s *Server) profileFromStore(ctx context.Context, site tenant.ID, userID string) (*Profile, error) {
	u, err := s.store.UserByID(ctx, userID)
	if err != nil {
		return nil, err
	}
	roles, err := s.store.RolesAt(ctx, site, userID)
	if err != nil {
		return nil, err
	}
	p := &Profile{UserID: u.ID, Email: u.Email, Name: u.Name, Picture: u.Picture, PictureFile: u.PictureFile, Roles: roles, EmailVerified: u.EmailVerified}
	if p.Roles == nil {
		p.Roles = []string{}
	}
	return p, nil
}

// While the cache is unavailable (Redis down, its breaker open) claims are
// kept in this process for outageProfileTTL: userinfo then reads the
// database once per user and interval instead of twice per request, and
// keeps its throughput through a Redis outage. A change to a person or
// their roles shows within outageProfileTTL (the cache, when up, is cleared
// at once). At most outageProfileMax entries; a full map starts over.
const (
	outageProfileTTL = 2 * time.Second
	outageProfileMax = 10_000
)

type outageProfiles struct {
	mu sync.Mutex
	m  map[string]outageProfile
}

type outageProfile struct {
	p       *Profile
	expires time.Time
}

func (o *outageProfiles) get(key string) *Profile {
	o.mu.Lock()
	defer o.mu.Unlock()
	e, ok := o.m[key]
	if !ok || time.Now().After(e.expires) {
		return nil
	}
	return e.p
}

func (o *outageProfiles) put(key string, p *Profile) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil || len(o.m) >= outageProfileMax {
		o.m = make(map[string]outageProfile)
	}
	o.m[key] = outageProfile{p: p, expires: time.Now().Add(outageProfileTTL)}
}

// UserClaims are the claims both userinfo and the id_token carry, filtered
// by the granted scopes in the same way (spec: a verified id_token has the
// same sub, email, name, picture, org_id, roles as UserInfo).
type UserClaims struct {
	Subject string `json:"sub"`
	Email   string `json:"email,omitempty"`
	// EmailVerified is the standard claim (OIDC Core §5.1), with email.
	EmailVerified *bool    `json:"email_verified,omitempty"`
	Name          string   `json:"name,omitempty"`
	Picture       string   `json:"picture,omitempty"`
	OrgID         string   `json:"org_id"`
	Roles         []string `json:"roles"`
}

// userClaims builds the claims of p at site for scopes: email needs
// "email", name and picture need "profile"; org_id and roles describe the
// site and are always present. Everyone has a picture: the uploaded one or
// the generated avatar, at this site's origin (vocab.PictureURL).
func userClaims(site *tenant.Site, p *Profile, scopes []string) UserClaims {
	c := UserClaims{Subject: p.UserID, OrgID: OrgID(site), Roles: p.Roles}
	if c.Roles == nil {
		c.Roles = []string{}
	}
	if slices.Contains(scopes, scope.Email) {
		c.Email = p.Email
		verified := p.EmailVerified
		c.EmailVerified = &verified
	}
	if slices.Contains(scopes, scope.Profile) {
		c.Name, c.Picture = p.Name, vocab.PictureURL(site.Origin, p.UserID, p.PictureFile, p.Picture)
	}
	return c
}

// OrgID is the org_id claim of a site: its stable numeric ID.
func OrgID(site *tenant.Site) string { return strconv.FormatInt(int64(site.ID), 10) }
