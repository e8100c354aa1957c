package sqlstore

import (
	"context"
	"slices"
	"strings"
)

// dbColumn, dbIndex and dbTable are what the catalog says about the tables
// of the schema the store works in.
type dbColumn struct {
	typ        string // as declared (SQLite) or format_type (PostgreSQL)
	notNull    bool
	hasDefault bool // a DEFAULT, a serial or identity, or SQLite's rowid alias
}

type dbIndex struct {
	name    string
	columns []string // key columns in order; "(expr)" for an expression
	unique  bool
	partial bool
	primary bool
}

type dbTable struct {
	columns map[string]dbColumn
	primary []string
	indexes []dbIndex
}

// One query for every column of the tables, one for every index column:
// the cost of a check does not grow with the number of tables. On
// PostgreSQL the tables are found by name (to_regclass, so through the
// search_path like the statements) and everything else by oid, through
// the catalog's indexes: a scan of pg_attribute costs what the whole
// cluster's catalog weighs, not what ours does.
const (
	pgTablesCTE = `WITH t AS (SELECT r.oid, r.relname FROM unnest($1::text[]) AS n(name) JOIN pg_class r ON r.oid = to_regclass(n.name))
`
	pgColumnsQuery = pgTablesCTE + `SELECT t.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, a.atthasdef OR a.attidentity <> ''
FROM t JOIN pg_attribute a ON a.attrelid = t.oid
WHERE a.attnum > 0 AND NOT a.attisdropped`
	pgIndexesQuery = pgTablesCTE + `SELECT t.relname, i.relname, ix.indisunique, ix.indisprimary, ix.indpred IS NOT NULL, k.ord, COALESCE(a.attname, '(expr)')
FROM t
JOIN pg_index ix ON ix.indrelid = t.oid
JOIN pg_class i ON i.oid = ix.indexrelid
CROSS JOIN LATERAL unnest(ix.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum AND k.attnum > 0
WHERE k.ord <= ix.indnkeyatts
ORDER BY t.relname, i.relname, k.ord`
	// pk > 0 orders the primary key; an INTEGER PRIMARY KEY is the rowid
	// and fills itself.
	sqliteColumnsQuery = `SELECT m.name, p.name, p.type, p."notnull" OR p.pk > 0,
  p.dflt_value IS NOT NULL OR (p.pk = 1 AND lower(p.type) = 'integer' AND (SELECT COUNT(*) FROM pragma_table_info(m.name) q WHERE q.pk > 0) = 1),
  p.pk
FROM sqlite_master m JOIN pragma_table_info(m.name) p
WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite\_%' ESCAPE '\'
ORDER BY m.name, p.pk`
	sqliteIndexesQuery = `SELECT m.name, l.name, l."unique", l.partial, i.seqno, COALESCE(i.name, '(expr)')
FROM sqlite_master m JOIN pragma_index_list(m.name) l JOIN pragma_index_info(l.name) i
WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite\_%' ESCAPE '\'
ORDER BY m.name, l.name, i.seqno`
)

// readCatalog returns the named tables that exist, by name (on SQLite,
// every table: its catalog is the file's own and small).
func (s *Store) readCatalog(ctx context.Context, q querier, names []string) (map[string]*dbTable, error) {
	tables := map[string]*dbTable{}
	table := func(name string) *dbTable {
		t := tables[name]
		if t == nil {
			t = &dbTable{columns: map[string]dbColumn{}}
			tables[name] = t
		}
		return t
	}
	colQuery, idxQuery := pgColumnsQuery, pgIndexesQuery
	args := []any{"{" + strings.Join(names, ",") + "}"}
	if s.dialect == SQLite {
		colQuery, idxQuery, args = sqliteColumnsQuery, sqliteIndexesQuery, nil
	}
	rows, err := q.QueryContext(ctx, colQuery, args...)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var (
			tname, cname string
			c            dbColumn
			pk           int
		)
		dest := []any{&tname, &cname, &c.typ, &c.notNull, &c.hasDefault}
		if s.dialect == SQLite {
			dest = append(dest, &pk)
		}
		if err := rows.Scan(dest...); err != nil {
			rows.Close()
			return nil, err
		}
		t := table(tname)
		t.columns[cname] = c
		if pk > 0 {
			t.primary = append(t.primary, cname)
		}
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	rows, err = q.QueryContext(ctx, idxQuery, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			tname, iname, col string
			unique, partial   bool
			primary           bool
			ord               int
		)
		dest := []any{&tname, &iname, &unique, &primary, &partial, &ord, &col}
		if s.dialect == SQLite {
			dest = []any{&tname, &iname, &unique, &partial, &ord, &col}
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		t := table(tname)
		if n := len(t.indexes); n == 0 || t.indexes[n-1].name != iname {
			t.indexes = append(t.indexes, dbIndex{name: iname, unique: unique, partial: partial, primary: primary})
		}
		idx := &t.indexes[len(t.indexes)-1]
		idx.columns = append(idx.columns, col)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, t := range tables {
		for _, i := range t.indexes {
			if i.primary {
				t.primary = i.columns
			}
		}
	}
	// SQLite lists no index for a rowid primary key; the key is one all
	// the same.
	for _, t := range tables {
		if len(t.primary) > 0 && !slices.ContainsFunc(t.indexes, func(i dbIndex) bool {
			return i.unique && !i.partial && slices.Equal(i.columns, t.primary)
		}) {
			t.indexes = append(t.indexes, dbIndex{name: "(primary key)", columns: t.primary, unique: true})
		}
	}
	return tables, nil
}
