package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lectern/lectern/authserver/bearer"
	"github.com/lectern/lectern/internal/platform"
	"github.com/lectern/lectern/internal/server"
	"github.com/lectern/lectern/session"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// passkeyJSON is a passkey in the output of user factors and user
// remove-factors.
type passkeyJSON struct {
	ID         int64      `json:"id"`
	Site       string     `json:"site"`
	SiteID     tenant.ID  `json:"site_id"`
	SiteName   string     `json:"site_name"`
	Name       string     `json:"name"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
}

// appJSON is the account's authenticator app in the output of user
// factors.
type appJSON struct {
	Enabled           bool       `json:"enabled"`
	CreatedAt         *time.Time `json:"created_at"`
	RecoveryCodesLeft int        `json:"recovery_codes_left"`
}

// factorsJSON is the output of user factors.
type factorsJSON struct {
	UserID   string        `json:"user_id"`
	Email    string        `json:"email"`
	App      appJSON       `json:"app"`
	Passkeys []passkeyJSON `json:"passkeys"`
}

// removedJSON is the output of user remove-factors.
type removedJSON struct {
	UserID          string        `json:"user_id"`
	Email           string        `json:"email"`
	AppRemoved      bool          `json:"app_removed"`
	PasskeysRemoved []passkeyJSON `json:"passkeys_removed"`
	// SessionsEnded is false when nothing was removed, or when the cache
	// is the memory of lectern serve, which the CLI cannot reach.
	SessionsEnded bool `json:"sessions_ended"`
	// GrantsRevoked counts the account's grants revoked at every site.
	GrantsRevoked int `json:"grants_revoked"`
	// Notices counts the notices queued for the account's address.
	Notices int `json:"notices"`
}

// userByEmail finds the account --email names.
func userByEmail(ctx context.Context, a *server.App, email string) (*storage.User, error) {
	addr, err := platform.NormalizeEmail(email)
	if err != nil {
		return nil, err
	}
	u, err := a.Store.UserByEmail(ctx, addr)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("no user has the e-mail address %s", addr)
	}
	return u, err
}

// siteCache looks sites up by ID once each.
type siteCache struct {
	a     *server.App
	sites map[tenant.ID]*storage.Site
}

func (c *siteCache) site(ctx context.Context, id tenant.ID) (*storage.Site, error) {
	if s, ok := c.sites[id]; ok {
		return s, nil
	}
	s, err := c.a.Store.SiteByID(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("site %d: %w", id, err)
	}
	if c.sites == nil {
		c.sites = map[tenant.ID]*storage.Site{}
	}
	c.sites[id] = s
	return s, nil
}

func (c *siteCache) passkeyJSON(ctx context.Context, p storage.Passkey) (passkeyJSON, error) {
	s, err := c.site(ctx, p.SiteID)
	if err != nil {
		return passkeyJSON{}, err
	}
	return passkeyJSON{ID: p.ID, Site: s.Slug, SiteID: s.ID, SiteName: s.Name, Name: p.Name, CreatedAt: p.CreatedAt, LastUsedAt: p.LastUsedAt}, nil
}

// runUserFactors lists an account's second factors at every site.
func runUserFactors(ctx context.Context, env *cmdEnv, args []string) error {
	var (
		email  string
		asJSON bool
	)
	return adminCommand(ctx, env, "user factors", help{
		usage: "lectern user factors --email E [--json] [flags]",
		about: "List an account's second factors: its authenticator app (account-wide) and its passkeys at every site. " +
			"To remove a lost or stolen one: lectern user remove-factors.",
		examples: []string{"lectern user factors --email ada@example.com --json"},
	}, args,
		func(fs *cmdFlags) {
			fs.StringVar(&email, "email", "", "the account's e-mail address")
			fs.BoolVar(&asJSON, "json", false, "print the result as JSON")
			fs.require("email")
		},
		func(a *server.App, _ *cmdFlags) error {
			u, err := userByEmail(ctx, a, email)
			if err != nil {
				return err
			}
			out := factorsJSON{UserID: u.ID, Email: u.Email, Passkeys: []passkeyJSON{}}
			t, err := a.Store.TOTPOf(ctx, u.ID)
			switch {
			case err == nil:
				out.App.Enabled, out.App.CreatedAt = true, &t.CreatedAt
				if out.App.RecoveryCodesLeft, err = a.Store.RecoveryCodesLeft(ctx, u.ID); err != nil {
					return err
				}
			case !errors.Is(err, storage.ErrNotFound):
				return err
			}
			keys, err := a.Store.AllPasskeys(ctx, u.ID)
			if err != nil {
				return err
			}
			sites := &siteCache{a: a}
			for _, p := range keys {
				pj, err := sites.passkeyJSON(ctx, p)
				if err != nil {
					return err
				}
				out.Passkeys = append(out.Passkeys, pj)
			}
			if asJSON {
				return json.NewEncoder(env.stdout).Encode(out)
			}
			fmt.Fprintf(env.stdout, "%s (%s)\n", u.Email, u.ID)
			if out.App.Enabled {
				fmt.Fprintf(env.stdout, "authenticator app: on since %s, %d recovery codes left\n", out.App.CreatedAt.UTC().Format(time.RFC3339), out.App.RecoveryCodesLeft)
			} else {
				fmt.Fprintln(env.stdout, "authenticator app: off")
			}
			if len(out.Passkeys) == 0 {
				fmt.Fprintln(env.stdout, "passkeys: none")
				return nil
			}
			tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SITE\tPASSKEY\tADDED\tLAST USED")
			for _, p := range out.Passkeys {
				used := "never"
				if p.LastUsedAt != nil {
					used = p.LastUsedAt.UTC().Format(time.RFC3339)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Site, p.Name, p.CreatedAt.UTC().Format(time.RFC3339), used)
			}
			return tw.Flush()
		})
}

// runUserRemoveFactors removes an account's second factors for the
// provider's support: the recovery of a lost factor, or of one a thief
// added (audit V, finding 1). The account's sessions end and its grants
// are revoked, as after a password reset, so that neither a session that
// proved the factor nor the tokens it got outlive it; the removals are audited at the sites they concern and the
// account is mailed.
func runUserRemoveFactors(ctx context.Context, env *cmdEnv, args []string) error {
	var (
		email, ref            string
		app, passkeys, asJSON bool
	)
	return adminCommand(ctx, env, "user remove-factors", help{
		usage: "lectern user remove-factors --email E (--app | --passkeys [--site S]) [flags]",
		about: "Remove an account's second factors: --app the authenticator app and its recovery codes (account-wide), " +
			"--passkeys its passkeys at every site (--site: at that site only). The account's sessions end and its grants at every site are revoked, " +
			"each removal is in the audit log of its site (the app's: of every site where the person holds a role) " +
			"and the account is mailed. Check who is asking first: this undoes the second factor.",
		examples: []string{"lectern user remove-factors --email ada@example.com --passkeys --site academy",
			"lectern user remove-factors --email ada@example.com --app --passkeys --json"},
	}, args,
		func(fs *cmdFlags) {
			fs.StringVar(&email, "email", "", "the account's e-mail address")
			fs.BoolVar(&app, "app", false, "remove the authenticator app and its recovery codes")
			fs.BoolVar(&passkeys, "passkeys", false, "remove the account's passkeys (at every site, or at --site)")
			fs.StringVar(&ref, "site", "", "with --passkeys: only the passkeys of this site (its slug or ID)")
			fs.BoolVar(&asJSON, "json", false, "print the result as JSON")
			fs.require("email")
		},
		func(a *server.App, fs *cmdFlags) error {
			if !app && !passkeys {
				fmt.Fprintf(fs.Output(), "%s: give --app, --passkeys or both\n", fs.Name())
				return errUsage
			}
			if ref != "" && !passkeys {
				fmt.Fprintf(fs.Output(), "%s: --site chooses the passkeys to remove; give --passkeys with it\n", fs.Name())
				return errUsage
			}
			u, err := userByEmail(ctx, a, email)
			if err != nil {
				return err
			}
			var only *storage.Site
			if ref != "" {
				if only, err = siteByRef(ctx, a, ref); err != nil {
					return err
				}
			}
			r, err := removeFactors(ctx, a, u, app, passkeys, only, time.Now())
			if r == nil {
				return err
			}
			out := removedJSON{UserID: u.ID, Email: u.Email, AppRemoved: r.app, PasskeysRemoved: r.passkeys,
				SessionsEnded: r.sessionsEnded, GrantsRevoked: r.grantsRevoked, Notices: r.notices}
			if out.PasskeysRemoved == nil {
				out.PasskeysRemoved = []passkeyJSON{}
			}
			if perr := printResult(env.stdout, asJSON, out, r.summary(u)); perr != nil {
				return perr
			}
			return err
		})
}

// removal is what removeFactors did.
type removal struct {
	app           bool
	passkeys      []passkeyJSON
	sessionsEnded bool
	grantsRevoked int
	notices       int
}

func (r *removal) summary(u *storage.User) string {
	if !r.app && len(r.passkeys) == 0 {
		return fmt.Sprintf("%s has none of those factors: nothing removed", u.Email)
	}
	var parts []string
	if r.app {
		parts = append(parts, "the authenticator app and its recovery codes")
	}
	perSite := map[string]int{}
	var order []string
	for _, p := range r.passkeys {
		if perSite[p.Site] == 0 {
			order = append(order, p.Site)
		}
		perSite[p.Site]++
	}
	for _, s := range order {
		parts = append(parts, fmt.Sprintf("%d passkey(s) at %s", perSite[s], s))
	}
	sessions := "sessions ended"
	if !r.sessionsEnded {
		sessions = "sessions NOT ended"
	}
	return fmt.Sprintf("removed from %s: %s; %s; %d grant(s) revoked; %d notice(s) mailed", u.Email, strings.Join(parts, ", "), sessions, r.grantsRevoked, r.notices)
}

// removeFactors removes u's app (app) and passkeys (passkeys: at only, or
// at every site), then ends u's sessions, records the audit events and
// queues the notices for what it removed. A failure is returned with what
// was removed before it (nil only when nothing was).
func removeFactors(ctx context.Context, a *server.App, u *storage.User, app, passkeys bool, only *storage.Site, now time.Time) (*removal, error) {
	r := &removal{}
	sites := &siteCache{a: a}
	var errs []error
	// The passkeys removed, by site, in the order of the listing.
	var bySite []tenant.ID
	names := map[tenant.ID][]string{}
	if passkeys {
		keys, err := a.Store.AllPasskeys(ctx, u.ID)
		if err != nil {
			return nil, err
		}
		for _, p := range keys {
			if only != nil && p.SiteID != only.ID {
				continue
			}
			pj, err := sites.passkeyJSON(ctx, p)
			if err == nil {
				err = a.Store.DeletePasskey(ctx, p.SiteID, u.ID, p.ID)
			}
			if errors.Is(err, storage.ErrNotFound) {
				continue // removed meanwhile
			} else if err != nil {
				errs = append(errs, fmt.Errorf("removing passkey %d: %w", p.ID, err))
				break
			}
			r.passkeys = append(r.passkeys, pj)
			if names[p.SiteID] == nil {
				bySite = append(bySite, p.SiteID)
			}
			names[p.SiteID] = append(names[p.SiteID], p.Name)
		}
	}
	if app && len(errs) == 0 {
		_, err := a.Store.TOTPOf(ctx, u.ID)
		if err == nil {
			err = a.Store.DisableTOTP(ctx, u.ID)
			r.app = err == nil
		}
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			errs = append(errs, fmt.Errorf("removing the authenticator app: %w", err))
		}
	}
	if !r.app && len(r.passkeys) == 0 {
		if len(errs) > 0 {
			return nil, errors.Join(errs...)
		}
		return r, nil
	}

	// The sessions end as after a password reset (platform.ResetPassword):
	// a session that proved a removed factor must not outlive it. Without
	// a shared cache they live in the memory of lectern serve, out of the
	// CLI's reach; they end when it restarts.
	if a.Config.RedisURL == "" {
		a.Logger.WarnContext(ctx, "sessions not ended: without --redis-url the sessions live in the memory of lectern serve; restart it to end them", "user", u.ID)
	} else if err := session.NewStore(a.Cache, nil).EndAll(ctx, u.ID); err != nil {
		errs = append(errs, fmt.Errorf("ending the sessions: %w", err))
	} else {
		r.sessionsEnded = true
	}
	// So do the grants, at every site, as after a password reset: tokens
	// got by a session that proved a removed factor must not outlive it.
	// The database decides; the revocation version it raises makes every
	// replica refill its copy.
	grants, err := a.Store.UserGrants(ctx, u.ID, now)
	if err != nil {
		errs = append(errs, fmt.Errorf("listing the grants: %w", err))
	}
	rev := bearer.New(bearer.Options{Keys: a.Keys, Store: a.Store, Cache: a.Cache, Logger: a.Logger})
	for _, g := range grants {
		if err := rev.RevokeGrant(ctx, g.SiteID, g.ID, now); err != nil && !errors.Is(err, storage.ErrNotFound) {
			errs = append(errs, fmt.Errorf("revoking grant %s: %w", g.ID, err))
		} else if err == nil {
			r.grantsRevoked++
		}
	}

	// Each site's passkeys: in its audit log, and one notice from it.
	for _, id := range bySite {
		for _, name := range names[id] {
			audit(ctx, a, id, "account.passkey_removed", u.ID, map[string]any{"name": name})
		}
		s, _ := sites.site(ctx, id) // looked up for the listing
		if err := a.Platform.NotifyFactorRemovedBySupport(ctx, s, u, platform.FactorPasskeysRemovedBySupport, strings.Join(names[id], ", "), now); err != nil {
			errs = append(errs, fmt.Errorf("mailing the notice of the passkeys at %s: %w", s.Slug, err))
		} else {
			r.notices++
		}
	}
	// The app is the account's: its removal is in the audit log of every
	// site where the person holds a role (where operators look, and where
	// the app was asked for); the notice comes from the first of them,
	// else from a site of the account's passkeys.
	if r.app {
		roles, err := a.Store.SitesOfUser(ctx, u.ID)
		if err != nil {
			errs = append(errs, fmt.Errorf("listing the account's sites: %w", err))
		}
		var from tenant.ID
		for _, s := range roles {
			audit(ctx, a, s.SiteID, "account.totp_disabled", u.ID, nil)
			if from == 0 {
				from = s.SiteID
			}
		}
		if from == 0 && len(bySite) > 0 {
			from = bySite[0]
		}
		if from == 0 {
			if left, err := a.Store.AllPasskeys(ctx, u.ID); err == nil && len(left) > 0 {
				from = left[0].SiteID
			}
		}
		if from == 0 {
			a.Logger.WarnContext(ctx, "no notice of the app's removal: the account has no role and no passkey at any site to mail from", "user", u.ID)
		} else {
			s, err := sites.site(ctx, from)
			if err == nil {
				err = a.Platform.NotifyFactorRemovedBySupport(ctx, s, u, platform.FactorAppRemovedBySupport, "", now)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("mailing the notice of the app's removal: %w", err))
			} else {
				r.notices++
			}
		}
	}
	return r, errors.Join(errs...)
}
