// Package demo creates the fixed demo seed of DESIGN §7: two sites on one
// port ("Demo Academy", Variant A, at http://localhost:PORT and "Open School",
// Variant B, at http://127.0.0.1:PORT), their users, clients, vendor
// integration and catalog. Docs, examples and tests rely on its values, so
// they are constants here.
package demo
