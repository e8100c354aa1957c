// Package sqlstore implements the storage interfaces on gorm, over
// PostgreSQL (production) or SQLite (the embedded default). It is the only
// package that imports gorm. It owns the versioned schema migrations
// (migrations/<dialect>/NNNN_name.sql, recorded in schema_migrations) and the
// one tenant scope, siteScope, through which every site-owned query goes.
//
// It imports storage and tenant, never a handler package.
package sqlstore
