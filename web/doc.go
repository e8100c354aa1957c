// Package web renders the pages a person sees: the admin area (/admin) and
// the member account pages (/account), sharing one look with the login and
// consent pages.
package web
