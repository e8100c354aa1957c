// Package ui is the one look of every page a person sees: the base layout,
// the stylesheet, and the templates of the sign-in, consent, error and
// refusal pages (and, later, the admin area). Templates and assets are
// embedded; no build step is needed. It is a leaf: it imports nothing of
// ours, so authserver and web share it without importing each other.
package ui
