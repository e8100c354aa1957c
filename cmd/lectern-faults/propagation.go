package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/internal/oauthtest"
	"github.com/lectern/lectern/vocab"
)

// broadcastBound is the documented bound for a change made through one
// replica to be served by the others (docs/RELIABILITY.md): the broadcast
// is immediate; the bound leaves room for a loaded machine.
const broadcastBound = 2 * time.Second

// propagation checks, with three replicas: a site created and a site
// changed through replica 1 are served by replica 3 within broadcastBound,
// and a key rotated through replica 1 verifies on replicas 2 and 3.
func propagation(ctx context.Context, e *env, l *load) (string, error) {
	r1, r2, r3 := e.replicas[0], e.replicas[1], e.replicas[2]
	var notes []string
	fail := func(format string, args ...any) { l.t.violate(format, args...) }

	// A change through replica 1's admin area: the owner opens sign-up (or
	// closes it) and saves a new sender name. Replica 3 has the site in its
	// resolver cache (it answered /signup before the change): its /signup
	// page, which reads the cached site, changes only through the broadcast;
	// its settings page (read from the database) shows the new name.
	owner := newClient(e.r.origin(), r1.addr())
	o, err := owner.browser.Authorize(owner.oauth(e.r.clients[0]).AuthCodeURL("s", oauth2S256(), resourceParam(e.r.origin())),
		oauthtest.Options{Email: demo.OwnerEmail, Password: demo.OwnerPassword})
	if err != nil {
		return "", err
	}
	_ = o // the owner is signed in (the consent page may remain: not needed)
	page, err := owner.browser.Get(e.r.origin() + "/admin/settings")
	if err != nil {
		return "", err
	}
	form, err := oauthtest.ParseForm(page.Body, "accounts-form")
	if err != nil {
		return "", fmt.Errorf("replica 1 /admin/settings (%d): %w", page.Status, err)
	}
	anon3 := newClient(e.r.origin(), r3.addr())
	signUpWas, _, err := anon3.get("/signup")
	if err != nil || (signUpWas != 200 && signUpWas != 404) {
		return "", fmt.Errorf("replica 3 /signup before the change: %d %v", signUpWas, err)
	}
	signUpWant := 200 // sign-up flips
	if signUpWas == 200 {
		signUpWant = 404
		form.Values.Del("signup")
	} else {
		form.Values.Set("signup", "on")
	}
	marker := "Faults " + randText()[:8]
	form.Values.Set("mail_from_name", marker)
	saved, err := owner.browser.PostForm(e.r.origin()+"/admin/settings/accounts", form.Values)
	if err != nil || saved.Status != 303 || saved.Header.Get("Location") != "/admin/settings" {
		return "", fmt.Errorf("saving the settings through replica 1: %v %v", saved, err)
	}
	on3 := owner.withAddr(r3.addr())
	var last string // what replica 3 answered last, for the report
	took, ok := waitUntil(5*time.Second, func() bool {
		p, err := on3.browser.Get(e.r.origin() + "/admin/settings")
		if err != nil {
			last = "settings: " + err.Error()
			return false
		}
		last = "settings " + strconv.Itoa(p.Status)
		if loc := p.Header.Get("Location"); loc != "" {
			last += " to " + loc
		}
		code, _, err := anon3.get("/signup")
		last += fmt.Sprintf(", /signup %d %v (want %d)", code, err, signUpWant)
		return p.Status == 200 && strings.Contains(p.Body, marker) && err == nil && code == signUpWant
	})
	if !ok || took > broadcastBound {
		fail("a site change through replica 1 was not served by replica 3 within %s (took %s, seen %v; replica 3 last answered %s)",
			broadcastBound, took, ok, last)
	}
	notes = append(notes, fmt.Sprintf("site change 1→3 in %d ms", took.Milliseconds()))

	// A site created (the CLI: sites are created by the provider, and the
	// CLI broadcasts like a replica does) is served by replica 3.
	host := "faults-new.localhost:" + strconv.Itoa(e.r.front)
	newSite := newClient("http://"+host, r3.addr())
	if code, _, _ := newSite.get(vocab.AuthorizationServerPath); code != 404 {
		fail("an unknown host answered %d on replica 3 before its site existed", code)
	}
	if _, err := runCmd(e.lecternEnv(), e.r.bin, "site", "create", "--slug", "faults-new", "--name", "Faults New", "--origin", "http://"+host); err != nil {
		return "", err
	}
	took, ok = waitUntil(5*time.Second, func() bool {
		code, _, err := newSite.get(vocab.AuthorizationServerPath)
		return err == nil && code == 200
	})
	if !ok || took > broadcastBound {
		fail("a new site was not served by replica 3 within %s (took %s, seen %v)", broadcastBound, took, ok)
	}
	notes = append(notes, fmt.Sprintf("new site on 3 in %d ms", took.Milliseconds()))

	// A key rotated: tokens issued by replica 1 under the new key verify on
	// replicas 2 and 3 at once.
	kid, err := rotateKey(e)
	if err != nil {
		return "", err
	}
	via1 := l.c.withAddr(r1.addr())
	took, ok = waitUntil(5*time.Second, func() bool {
		tok, _ := via1.flow(ctx, e.r.clients[1])
		if tok == nil || idTokenKID(tok.AccessToken) != kid {
			return false
		}
		for _, rep := range []*replica{r2, r3} {
			if out := l.c.withAddr(rep.addr()).userinfo(ctx, tok.AccessToken); out != outOK {
				fail("a token signed by the rotated key %s on replica 1 got %s on %s", kid, out, rep.name)
			}
		}
		return true
	})
	if !ok {
		fail("replica 1 did not sign with the rotated key %s within 5 s", kid)
	}
	notes = append(notes, fmt.Sprintf("rotated key signing on 1, verified on 2 and 3, in %d ms", took.Milliseconds()))
	return strings.Join(notes, "; "), nil
}

// waitUntil polls cond every 50 ms for at most timeout and says how long
// it took.
func waitUntil(timeout time.Duration, cond func() bool) (time.Duration, bool) {
	t0 := time.Now()
	for time.Since(t0) < timeout {
		if cond() {
			return time.Since(t0), true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Since(t0), false
}
