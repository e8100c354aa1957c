// Package storage declares Lectern's persistent records, the store
// interfaces every backend implements, the cache interface, and the errors
// the edges map to HTTP answers (ErrNotFound → 404, ErrConflict → 409).
//
// Records carry gorm struct tags so that storage/sqlstore can use them as its
// models: only the mapping (primaryKey, column, serializer), never the schema
// (types, sizes, NOT NULL, indexes), which the migrations in storage/sqlstore
// alone describe and sqlstore checks the records against. This package
// imports neither gorm nor go-redis: gorm lives only in storage/sqlstore,
// go-redis only in storage/cache (DESIGN §2). storage
// imports tenant and nothing else of ours; it never imports a handler package.
//
// Every method that touches site-owned rows takes the site ID explicitly, so
// that no caller can forget the tenant scope.
package storage
