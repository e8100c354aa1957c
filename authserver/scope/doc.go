// Package scope is the OAuth scope vocabulary of Lectern (spec §Scopes,
// DESIGN §5): every scope, its audience, the words the consent page uses for
// it, and which roles may grant it. It imports nothing of ours, so the
// authorization server, discovery and every resource server can share it.
package scope
