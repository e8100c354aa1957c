package mcp

import (
	"context"
	"slices"

	"github.com/lectern/lectern/authserver/bearer"
	"github.com/lectern/lectern/authserver/scope"
)

// toolMask is a set of tools: bit i is registry[i].
type toolMask uint64

func (m toolMask) has(i int) bool { return m&(1<<uint(i)) != 0 }

// publicMask holds the tools that need no scope (set by init).
var publicMask toolMask

// maskFor returns the tools whose scopes are all in grants.
func maskFor(grants []string) toolMask {
	var m toolMask
	for i, t := range registry {
		ok := true
		for _, s := range t.scopes {
			if !slices.Contains(grants, s) {
				ok = false
				break
			}
		}
		if ok {
			m |= 1 << uint(i)
		}
	}
	return m
}

// caller is who is calling /mcp: anonymous (token nil) or the holder of a
// verified access token. It travels in the request context to getServer and
// to the tool handlers.
type caller struct {
	token *bearer.Token
	// grants are the token's scopes that the person's roles at the site
	// still allow (roles are not re-checked on refresh, so resource servers
	// decide per request).
	grants []string
	// withheld are the token's scopes the person's roles no longer allow.
	withheld []string
	mask     toolMask
}

// anonymous is the caller without a token (set by init).
var anonymous *caller

// newCaller computes what the holder of tok may do, given the person's
// roles at the site: member scopes need any role there (DESIGN §5: anyone
// with a role may authorize a member client), operator scopes a role that
// may grant them.
func newCaller(tok *bearer.Token, roles []string) *caller {
	c := &caller{token: tok}
	for _, s := range tok.Scopes {
		switch {
		case scope.IsMember(s) || scope.IsOperator(s):
			aud := scope.AudienceOperator
			if scope.IsMember(s) {
				aud = scope.AudienceMember
			}
			if scope.RoleMayGrant(roles, aud, s) {
				c.grants = append(c.grants, s)
			} else {
				c.withheld = append(c.withheld, s)
			}
		case scope.IsIdentity(s):
			c.grants = append(c.grants, s)
		}
	}
	c.mask = maskFor(c.grants)
	return c
}

// may reports whether the caller may use the tool at index i.
func (c *caller) may(i int) bool { return c.mask.has(i) }

// granted reports whether every one of scopes is in effect.
func (c *caller) granted(scopes ...string) bool {
	for _, s := range scopes {
		if !slices.Contains(c.grants, s) {
			return false
		}
	}
	return true
}

// toolNames lists the tools the caller may use.
func (c *caller) toolNames() []string {
	out := []string{}
	for i, t := range registry {
		if c.may(i) {
			out = append(out, t.name)
		}
	}
	return out
}

type callerKey struct{}

func withCaller(ctx context.Context, c *caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

func callerFrom(ctx context.Context) (*caller, bool) {
	c, ok := ctx.Value(callerKey{}).(*caller)
	return c, ok && c != nil
}
