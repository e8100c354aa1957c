// Package i18n holds the message catalogs of every page and mail a person
// sees (locales/{en,de,fr,es}.toml, go-i18n) and the rules that pick a
// language: the person's choice (the lectern_lang cookie, set by the
// language selector and at sign-in from the account), else Accept-Language
// matched with golang.org/x/text/language, else the site's default
// language. It also formats dates, times and prices for a language.
//
// It is a leaf: it imports nothing of ours, so ui, mail and every handler
// can share it.
package i18n
