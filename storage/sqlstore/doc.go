// Package sqlstore implements the storage interfaces on gorm, over
// PostgreSQL (production) or SQLite (the embedded default). It is the only
// package that imports gorm and goose. It owns the schema and the one tenant
// scope, siteScope, through which every site-owned query goes.
//
// # The schema has one source
//
// The migrations in migrations/NNNN_name.sql are the only description of
// the schema. The record types of package storage carry gorm's mapping
// (primaryKey, column, serializer) and no schema tags; CheckSchema holds the
// two together (columns, type families, nullability, primary keys, and the
// indexes listed in indexes.go with the queries that rely on them), at
// start-up and in the tests of both dialects.
//
// Each migration is one file for both dialects, a text/template rendered per
// dialect: {{.ID}}, {{.Int64}}, {{.Time}} and {{.Bytes}} stand for the type
// names the dialects spell differently (bigserial PRIMARY KEY / integer
// PRIMARY KEY AUTOINCREMENT, bigint / integer, timestamptz / datetime,
// bytea / blob), and {{if .Postgres}} wraps what only one dialect runs. We
// chose templates over a shared directory with per-dialect files because
// the dialects differ inside nearly every CREATE TABLE, not in whole
// statements: per-statement files would have left every table written
// twice. Go migrations would have hidden the SQL in strings. The rendered
// files of released versions are byte for byte those deployed databases
// ran (a test pins their hashes); change the schema with a new version.
//
// goose (github.com/pressly/goose/v3) runs them, recorded in
// goose_db_version: each in its own transaction; PostgreSQL replicas
// serialize on a blocking advisory lock; on SQLite each migration takes the
// write lock and a replica that lost the race retries once the version has
// moved; a database at a newer version than the binary is refused. A
// history in schema_migrations (the migrator before goose) is adopted into
// goose_db_version once and tombstoned so that an older binary refuses the
// database instead of re-running it.
//
// It imports storage and tenant, never a handler package.
package sqlstore
