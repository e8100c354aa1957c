// Package web renders the pages a person sees: the admin area (/admin) and
// the member account pages (/account), sharing one look with the login and
// consent pages (package ui).
//
// It owns the operator's side of member OAuth applications (DESIGN §6:
// Developers → OAuth applications, shown once the "MCP connections" beta is
// on), the list of every grant at a site, the audit log view, and the
// member's list of connected apps with its revoke button, and account
// pictures: the upload on /account (checked and redrawn, picture.go) and
// /avatars, where the picture claim points (the uploaded picture or a
// generated initials avatar, avatar.go). Pages are plain
// server-rendered HTML: every state change is a POST carrying the session's
// CSRF token, destructive actions have a confirmation page, and results
// come back as one-time flash messages kept in the cache under the session.
//
// The handler is an http.Handler; the wiring (internal/server) mounts it.
// It shares the browser session with the authorization server (package
// session), so signing in at /login signs a person in here too. It must not
// import echo, gorm or go-redis, nor another handler package (authserver,
// discovery, memberapi, mcp, adminapi) beyond authserver/scope and
// authserver/clientmeta.
package web
