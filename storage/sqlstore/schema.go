package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/schema"
)

// CheckSchema verifies that the database is the schema this code expects:
// every stored model's table and columns exist, each column's type family
// and nullability fit the model field, every NOT NULL column without a
// default is one the model writes (else every insert fails), primary keys
// agree, and the indexes the queries rely on exist (reliedIndexes). The
// migrations are the only description of the schema; this is what catches
// a model field no migration created, or an index a migration dropped.
//
// It costs two catalog queries whatever the number of tables. Open runs it
// on a database already at this binary's version, Migrate after migrating.
func (s *Store) CheckSchema(ctx context.Context) error {
	return s.checkSchema(ctx, storedModels(), reliedIndexes)
}

func (s *Store) checkSchema(ctx context.Context, models []any, needs []indexNeed) error {
	var (
		parsed []*schema.Schema
		names  []string
	)
	for _, model := range models {
		stmt := &gorm.Statement{DB: s.db}
		if err := stmt.Parse(model); err != nil {
			return err
		}
		parsed = append(parsed, stmt.Schema)
		names = append(names, stmt.Schema.Table)
	}
	for _, n := range needs {
		names = append(names, n.table)
	}
	slices.Sort(names)
	tables, err := s.readCatalog(ctx, s.sqlDB, slices.Compact(names))
	if err != nil {
		return mapErr(err)
	}
	var problems []string
	for _, m := range parsed {
		problems = append(problems, checkModel(m, tables[m.Table])...)
	}
	for _, n := range needs {
		if p := n.check(tables[n.table]); p != "" {
			problems = append(problems, p)
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("sqlstore: the %s schema does not match the code (a model changed without a migration, or a migration without the model?):\n  %s",
			s.dialect, strings.Join(problems, "\n  "))
	}
	return nil
}

func checkModel(m *schema.Schema, t *dbTable) []string {
	if t == nil {
		return []string{fmt.Sprintf("table %s (model %s) does not exist", m.Table, m.Name)}
	}
	var problems []string
	mapped := map[string]bool{}
	for _, f := range m.Fields {
		if f.DBName == "" || !(f.Readable || f.Creatable || f.Updatable) {
			continue
		}
		mapped[f.DBName] = true
		where := fmt.Sprintf("%s.%s (%s.%s)", m.Table, f.DBName, m.Name, f.Name)
		c, ok := t.columns[f.DBName]
		if !ok {
			problems = append(problems, where+": no such column")
			continue
		}
		if want, got := fieldFamily(f), columnFamily(c.typ); want == "" || want != got {
			problems = append(problems, fmt.Sprintf("%s: column type %s (%s) does not hold the field's %s (%s)", where, c.typ, orUnknown(got), f.FieldType, orUnknown(want)))
		}
		switch {
		case !c.notNull && !holdsNull(f):
			problems = append(problems, fmt.Sprintf("%s: the column is nullable, but a %s cannot hold NULL (reading one fails)", where, f.FieldType))
		case c.notNull && !c.hasDefault && f.FieldType.Kind() == reflect.Pointer:
			problems = append(problems, fmt.Sprintf("%s: the column is NOT NULL, but the field is a %s (writing nil fails)", where, f.FieldType))
		}
	}
	cols := make([]string, 0, len(t.columns))
	for name := range t.columns {
		cols = append(cols, name)
	}
	sort.Strings(cols)
	for _, name := range cols {
		if c := t.columns[name]; c.notNull && !c.hasDefault && !mapped[name] {
			problems = append(problems, fmt.Sprintf("%s.%s: NOT NULL without a default, and model %s does not write it (every insert fails)", m.Table, name, m.Name))
		}
	}
	var pk []string
	for _, f := range m.PrimaryFields {
		pk = append(pk, f.DBName)
	}
	if !sameSet(pk, t.primary) {
		problems = append(problems, fmt.Sprintf("%s: primary key is (%s) in the database, (%s) in model %s", m.Table, strings.Join(t.primary, ", "), strings.Join(pk, ", "), m.Name))
	}
	return problems
}

var scannerType = reflect.TypeFor[sql.Scanner]()

// holdsNull reports whether reading NULL into the field succeeds.
func holdsNull(f *schema.Field) bool {
	t := f.FieldType
	switch {
	case t.Kind() == reflect.Pointer, t.Kind() == reflect.Interface, f.Serializer != nil:
		return true
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8: // []byte
		return true
	}
	return reflect.PointerTo(t).Implements(scannerType) // sql.NullString and the like
}

// fieldFamily is the kind of column a field needs, from gorm's reading of
// the Go type ("" when there is none we check).
func fieldFamily(f *schema.Field) string {
	switch f.GORMDataType {
	case schema.Bool:
		return "boolean"
	case schema.Int, schema.Uint:
		return "integer"
	case schema.Float:
		return "float"
	case schema.String:
		return "text"
	case schema.Time:
		return "time"
	case schema.Bytes:
		return "bytes"
	}
	return ""
}

// columnFamily maps a column type of either dialect to its family.
func columnFamily(typ string) string {
	t := strings.ToLower(typ)
	switch {
	case t == "bigint", t == "integer", t == "int", t == "smallint":
		return "integer"
	case t == "boolean":
		return "boolean"
	case t == "text", strings.HasPrefix(t, "character"), strings.HasPrefix(t, "varchar"):
		return "text"
	case strings.HasPrefix(t, "timestamp"), t == "datetime", t == "date":
		return "time"
	case t == "bytea", t == "blob":
		return "bytes"
	case t == "double precision", t == "real", strings.HasPrefix(t, "numeric"):
		return "float"
	}
	return ""
}

func orUnknown(family string) string {
	if family == "" {
		return "a type this check does not know"
	}
	return family
}

func sameSet(a, b []string) bool {
	return len(a) == len(b) && !slices.ContainsFunc(a, func(x string) bool { return !slices.Contains(b, x) })
}
