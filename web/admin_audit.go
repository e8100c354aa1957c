package web

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/lectern/lectern/storage"
)

const auditPath = "/admin/audit"

// auditPageSize is the number of events per page of the audit log.
const auditPageSize = 25

// auditRow is one event as the log shows it.
type auditRow struct {
	When                  when
	Actor, Action, Target string
	IP                    string
	Details               string
}

type auditData struct {
	chrome
	Rows []auditRow
	// OlderURL continues the log (keyset: events before the last shown);
	// NewestURL goes back to the start.
	OlderURL, NewestURL string
}

// auditLog serves GET /admin/audit?before=ID: the site's audit events,
// newest first.
func (h *Handler) auditLog(w http.ResponseWriter, r *http.Request, rq *request) {
	before, _ := strconv.ParseInt(r.URL.Query().Get("before"), 10, 64)
	before = max(before, 0)
	events, err := h.store.ListAudit(r.Context(), rq.site.ID, before, auditPageSize+1)
	if err != nil {
		h.fail(w, r, rq, err)
		return
	}
	d := auditData{chrome: chromeFor(rq, "admin", "audit")}
	if len(events) > auditPageSize {
		events = events[:auditPageSize]
		d.OlderURL = auditPath + "?before=" + strconv.FormatInt(events[len(events)-1].ID, 10)
	}
	if before > 0 {
		d.NewestURL = auditPath
	}
	d.Rows = h.auditRows(r, events)
	h.render(w, r, rq, http.StatusOK, "admin_audit", "Audit log", d, h.takeFlash(r.Context(), rq))
}

// auditRows formats events; actors that are users show as their e-mail
// address.
func (h *Handler) auditRows(r *http.Request, events []storage.AuditEvent) []auditRow {
	if len(events) == 0 {
		return nil
	}
	n := h.namer(r.Context(), events[0].SiteID)
	out := make([]auditRow, 0, len(events))
	for _, e := range events {
		actor := e.Actor
		if strings.HasPrefix(actor, "usr_") {
			actor, _ = n.user(actor)
		}
		out = append(out, auditRow{When: h.when(e.CreatedAt), Actor: actor, Action: e.Action, Target: e.Target, IP: e.IP, Details: formatDetails(e.Details, n)})
	}
	return out
}

// formatDetails writes an event's details as "key: value" pairs in key
// order; user IDs show as e-mail addresses.
func formatDetails(d map[string]any, n *names) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(d)) {
		var v string
		switch x := d[k].(type) {
		case string:
			v = x
			if strings.HasPrefix(x, "usr_") && n != nil {
				v, _ = n.user(x)
			}
		case []any:
			items := make([]string, len(x))
			for i, it := range x {
				items[i] = fmt.Sprint(it)
			}
			v = strings.Join(items, " ")
		default:
			b, err := json.Marshal(x)
			if err != nil {
				v = fmt.Sprint(x)
			} else {
				v = string(b)
			}
		}
		parts = append(parts, k+": "+v)
	}
	return strings.Join(parts, "; ")
}
