package web

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/lectern/lectern/i18n"
	"github.com/lectern/lectern/session"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/ui"
)

// chrome is what every page of this package shows around its content; page
// data structs embed it.
type chrome struct {
	Nav nav
	// Narrow pages (confirmations, problems) use the narrow column.
	Narrow bool
}

// nav is the header navigation.
type nav struct {
	// Area is "admin" or "account".
	Area string
	// Current names the page for aria-current: dashboard, settings, apps,
	// connections, audit, account.
	Current    string
	Email      string
	Operator   bool
	Manager    bool
	Developers bool
}

// chromeFor builds the navigation of rq for a page of area.
func chromeFor(rq *request, area, current string) chrome {
	if rq == nil || rq.user == nil {
		return chrome{}
	}
	return chrome{Nav: nav{
		Area: area, Current: current, Email: rq.user.Email,
		Operator: rq.isOperator(), Manager: rq.isManager(), Developers: rq.isManager() && rq.developersOn(),
	}}
}

// render writes a page with the session's CSRF token and the pending flash
// message, if any.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, rq *request, status int, page, title string, data any, f *flash) {
	p := ui.Page{Title: title, SiteName: rq.site.Name, Data: data}
	if rq.sess != nil {
		p.CSRF = session.CSRFToken(w, r, rq.site, rq.sess)
	}
	if f != nil {
		p.Flash = &ui.Flash{Kind: f.Kind, Message: f.Message}
	}
	h.ui.Render(w, r, status, page, p)
}

// lang is the language of rq's page (package i18n: the person's choice,
// their browser's, the site's default).
func lang(r *http.Request, rq *request) string {
	def := ""
	if rq != nil && rq.site != nil {
		def = rq.site.Locale
	}
	return i18n.Resolve(r, def)
}

// t is message id in the language of rq's page, for text a handler
// composes (messages with names in them); fixed sentences are translated
// when the page is rendered (i18n.Text).
func (h *Handler) t(r *http.Request, rq *request, id string, args ...any) string {
	return i18n.T(lang(r, rq), id, args...)
}

// problemData is the page of a refusal or failure.
type problemData struct {
	chrome
	Message string
	Detail  string
	Links   []link
}

type link struct{ Label, URL string }

func (h *Handler) problem(w http.ResponseWriter, r *http.Request, rq *request, status int, title, message, detail string) {
	area := "account"
	if strings.HasPrefix(r.URL.Path, "/admin") && rq.isOperator() {
		area = "admin"
	}
	d := problemData{chrome: chromeFor(rq, area, ""), Message: message, Detail: detail}
	d.Narrow = true
	if rq.user != nil {
		if rq.isOperator() {
			d.Links = append(d.Links, link{"Admin dashboard", "/admin"})
		}
		d.Links = append(d.Links, link{"My connections", "/account/connections"})
	}
	h.render(w, r, rq, status, "web_problem", title, d, nil)
}

func (h *Handler) forbidden(w http.ResponseWriter, r *http.Request, rq *request, message, detail string) {
	h.problem(w, r, rq, http.StatusForbidden, "Not allowed", message, detail)
}

// notFound is also the answer for Developers pages while the beta is off:
// they do not exist then.
func (h *Handler) notFound(w http.ResponseWriter, r *http.Request, rq *request) {
	h.problem(w, r, rq, http.StatusNotFound, "Page not found", "There is no page at this address.", "Check the address, or use the menu above.")
}

func (h *Handler) unavailable(w http.ResponseWriter, r *http.Request, rq *request, err error) {
	h.logger.ErrorContext(r.Context(), "page unavailable", "path", r.URL.Path, "err", err)
	w.Header().Set("Retry-After", "5")
	h.problem(w, r, rq, http.StatusServiceUnavailable, "Temporarily unavailable",
		"This page cannot be shown right now.", "Please try again in a moment. Nothing was changed.")
}

// fail answers an unexpected error: 404 for a missing row, 503 while a
// backing service is down, else 500 (logged; the person sees no internals).
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, rq *request, err error) {
	switch {
	case errors.Is(err, storage.ErrNotFound):
		h.notFound(w, r, rq)
	case errors.Is(err, storage.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		h.unavailable(w, r, rq, err)
	default:
		h.logger.ErrorContext(r.Context(), "page failed", "path", r.URL.Path, "err", err)
		h.problem(w, r, rq, http.StatusInternalServerError, "Something went wrong",
			"The page could not be completed.", "The error was recorded. Please try again; if it keeps happening, tell the site's operators.")
	}
}

// audit records an action of the signed-in person. A failure is logged,
// not shown: the action already happened.
func (h *Handler) audit(r *http.Request, rq *request, action, target string, details map[string]any) {
	e := &storage.AuditEvent{SiteID: rq.site.ID, Actor: rq.user.ID, Action: action, Target: target, IP: tenant.ClientIP(r), Details: details, CreatedAt: h.now()}
	if err := h.store.RecordAudit(r.Context(), e); err != nil {
		h.logger.WarnContext(r.Context(), "audit event not recorded", "action", action, "err", err)
	}
}
