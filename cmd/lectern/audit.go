package main

import (
	"context"
	"time"

	"github.com/lectern/lectern/internal/server"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// cliActor is the actor of the audit events the CLI records: the
// provider's operator, who has no account at the site.
const cliActor = "cli"

// audit records a change the CLI made to a site in the site's audit log
// (every write records an audit event; docs/decisions.md), as the admin
// area and the admin API record theirs. A failure is a warning: the change
// has happened.
func audit(ctx context.Context, a *server.App, site tenant.ID, action, target string, details map[string]any) {
	e := &storage.AuditEvent{SiteID: site, Actor: cliActor, Action: action, Target: target, Details: details, CreatedAt: time.Now()}
	if err := a.Store.RecordAudit(ctx, e); err != nil {
		a.Logger.WarnContext(ctx, "audit event not recorded", "action", action, "target", target, "err", err)
	}
}
