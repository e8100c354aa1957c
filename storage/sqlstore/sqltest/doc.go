// Package sqltest opens real, migrated databases for tests: a temp-file
// SQLite database, or a PostgreSQL schema of the test's own (dropped at the
// end), so that tests in parallel packages never share tables. PostgreSQL
// tests skip when it is unreachable unless LECTERN_REQUIRE_SERVICES=1.
package sqltest
