package memberapi

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/graph-gophers/graphql-go/ast"
	gqlerrors "github.com/graph-gophers/graphql-go/errors"
)

// Limits bound what one request may cost. A zero field means its default
// (DefaultLimits).
type Limits struct {
	// MaxBodyBytes caps the request body (413 beyond it). Default 64 KiB.
	MaxBodyBytes int64
	// MaxQueryBytes caps the query string. Default 16 KiB.
	MaxQueryBytes int
	// MaxDepth caps field nesting (graphql-go's MaxDepth). The data schema
	// nests at most 5 deep; the standard introspection query needs 13.
	// Default 15.
	MaxDepth int
	// MaxRootFields caps the fields (aliases counted) at the root of the
	// operation, after fragments are expanded. Default 10.
	MaxRootFields int
	// MaxSelections caps the field selections after fragments are expanded
	// (also graphql-go's MaxSelections). Default 1000.
	MaxSelections int
	// MaxConnections caps the connection fields a query resolves: each
	// occurrence counts (aliases too), multiplied by the page sizes of the
	// connections it is nested in. Each costs a page and a count query.
	// Default 10.
	MaxConnections int
	// MaxNodes caps the connection nodes a query may return: the sum, over
	// connection fields, of first multiplied by the first of every enclosing
	// connection. Default 600: a full page of each of the six connections.
	MaxNodes int
	// MaxParallelism caps the resolvers one request runs at once
	// (graphql-go's MaxParallelism), so one request cannot take the whole
	// database pool. Default 4.
	MaxParallelism int
	// Timeout bounds the execution of one request. Default 10 s.
	Timeout time.Duration
}

// DefaultLimits returns the limits the API applies unless told otherwise.
func DefaultLimits() Limits {
	return Limits{
		MaxBodyBytes:   64 << 10,
		MaxQueryBytes:  16 << 10,
		MaxDepth:       15,
		MaxRootFields:  10,
		MaxSelections:  1000,
		MaxConnections: 10,
		MaxNodes:       600,
		MaxParallelism: 4,
		Timeout:        10 * time.Second,
	}
}

func (l *Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l == nil {
		return d
	}
	out := *l
	set := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	set(&out.MaxQueryBytes, d.MaxQueryBytes)
	set(&out.MaxDepth, d.MaxDepth)
	set(&out.MaxRootFields, d.MaxRootFields)
	set(&out.MaxSelections, d.MaxSelections)
	set(&out.MaxConnections, d.MaxConnections)
	set(&out.MaxNodes, d.MaxNodes)
	set(&out.MaxParallelism, d.MaxParallelism)
	if out.MaxBodyBytes <= 0 {
		out.MaxBodyBytes = d.MaxBodyBytes
	}
	if out.Timeout <= 0 {
		out.Timeout = d.Timeout
	}
	return out
}

// schemaInfo is what the cost analysis knows of the schema: the type of
// every field, and which fields are connections (a *Connection type with a
// first argument).
type schemaInfo struct {
	roots  map[string]string // operation type → root type name
	fields map[string]map[string]fieldInfo
}

type fieldInfo struct {
	typ        string // the named type, lists and non-null unwrapped
	connection bool
}

func newSchemaInfo(s *ast.Schema) *schemaInfo {
	info := &schemaInfo{roots: map[string]string{}, fields: map[string]map[string]fieldInfo{}}
	for op, t := range s.RootOperationTypes {
		info.roots[op] = t.TypeName()
	}
	for name, t := range s.Types {
		obj, ok := t.(*ast.ObjectTypeDefinition)
		if !ok {
			continue
		}
		fields := map[string]fieldInfo{}
		for _, f := range obj.Fields {
			named := namedType(f.Type)
			fields[f.Name] = fieldInfo{
				typ:        named,
				connection: strings.HasSuffix(named, "Connection") && f.Arguments.Get("first") != nil,
			}
		}
		info.fields[name] = fields
	}
	return info
}

func namedType(t ast.Type) string {
	for {
		switch w := t.(type) {
		case *ast.NonNull:
			t = w.OfType
		case *ast.List:
			t = w.OfType
		case ast.NamedType:
			return w.TypeName()
		default:
			return ""
		}
	}
}

// cost is what an operation may cost, as the limits count it.
type cost struct {
	rootFields  int
	selections  int
	connections int64
	nodes       int64
}

// errTooComplex stops the analysis of a document whose fragments expand
// beyond MaxSelections (or nest absurdly): the walk is bounded however the
// fragments are spread.
var errTooComplex = fmt.Errorf("too complex")

type costWalker struct {
	info     *schemaInfo
	doc      *document
	op       *operation
	vars     map[string]any
	maxSels  int
	c        cost
	fragNest int
}

// checkLimits analyses op of doc with the request's variables and returns
// its cost (what the site's budget is charged: 1, plus 1 per connection
// it reads, plus 1 per 50 nodes it may return), or a QUERY_TOO_COMPLEX
// error when it exceeds a limit.
func checkLimits(info *schemaInfo, l *Limits, doc *document, op *operation, vars map[string]any) (int, *gqlerrors.QueryError) {
	w := &costWalker{info: info, doc: doc, op: op, vars: vars, maxSels: l.MaxSelections}
	root := info.roots[op.typ]
	if err := w.countRoot(op.sels); err != nil {
		return 0, tooComplex(fmt.Sprintf("the query expands to more than %d field selections", l.MaxSelections), l.MaxSelections, -1)
	}
	if w.c.rootFields > l.MaxRootFields {
		return 0, tooComplex(fmt.Sprintf("the operation selects %d fields at its root (aliases count); at most %d are allowed", w.c.rootFields, l.MaxRootFields), l.MaxRootFields, int64(w.c.rootFields))
	}
	if err := w.walk(op.sels, root, 1); err != nil {
		return 0, tooComplex(fmt.Sprintf("the query expands to more than %d field selections", l.MaxSelections), l.MaxSelections, -1)
	}
	if w.c.connections > int64(l.MaxConnections) {
		return 0, tooComplex(fmt.Sprintf("the query reads %d connections (each alias counts, multiplied by the first of enclosing connections); at most %d are allowed", w.c.connections, l.MaxConnections), l.MaxConnections, w.c.connections)
	}
	if w.c.nodes > int64(l.MaxNodes) {
		return 0, tooComplex(fmt.Sprintf("the query may return %d connection nodes (first, multiplied through nested connections); at most %d are allowed", w.c.nodes, l.MaxNodes), l.MaxNodes, w.c.nodes)
	}
	return 1 + int(w.c.connections) + int(w.c.nodes/50), nil
}

func tooComplex(msg string, limit int, actual int64) *gqlerrors.QueryError {
	e := requestError(CodeQueryTooComplex, "%s", msg)
	e.Extensions["limit"] = limit
	if actual >= 0 {
		e.Extensions["cost"] = actual
	}
	return e
}

// countRoot counts the root fields, through fragments.
func (w *costWalker) countRoot(sels []selection) error {
	if err := w.enterFragment(); err != nil {
		return err
	}
	defer func() { w.fragNest-- }()
	for _, s := range sels {
		switch s.kind {
		case selField:
			w.c.rootFields++
			if w.c.rootFields > w.maxSels {
				return errTooComplex
			}
		case selSpread:
			if f := w.doc.fragments[s.name]; f != nil {
				if err := w.countRoot(f.sels); err != nil {
					return err
				}
			}
		case selInline:
			if err := w.countRoot(s.sels); err != nil {
				return err
			}
		}
	}
	return nil
}

// walk adds up the selections of type typ, resolved mult times.
func (w *costWalker) walk(sels []selection, typ string, mult int64) error {
	if err := w.enterFragment(); err != nil {
		return err
	}
	defer func() { w.fragNest-- }()
	for _, s := range sels {
		switch s.kind {
		case selField:
			w.c.selections++
			if w.c.selections > w.maxSels {
				return errTooComplex
			}
			f, ok := w.info.fields[typ][s.name]
			if !ok {
				// __typename, __schema and __type: no connection below
				// them, but their selections count like any other, so
				// that fragments fanned out under __schema are refused
				// here too, not by graphql-go halfway through execution.
				if len(s.sels) > 0 {
					if err := w.walk(s.sels, "", mult); err != nil {
						return err
					}
				}
				continue
			}
			inner := mult
			if f.connection {
				first := w.first(s.args)
				w.c.connections = satAdd(w.c.connections, mult)
				w.c.nodes = satAdd(w.c.nodes, satMul(mult, first))
				inner = satMul(mult, first)
			}
			if len(s.sels) > 0 {
				if err := w.walk(s.sels, f.typ, inner); err != nil {
					return err
				}
			}
		case selSpread:
			// Every type of this schema is an object type, so a fragment
			// that validates applies to exactly the enclosing type.
			if f := w.doc.fragments[s.name]; f != nil {
				if err := w.walk(f.sels, typ, mult); err != nil {
					return err
				}
			}
		case selInline:
			if err := w.walk(s.sels, typ, mult); err != nil {
				return err
			}
		}
	}
	return nil
}

// enterFragment bounds the nesting of the walk: graphql-go refuses
// fragment cycles before the walk runs, and this keeps the walk finite even
// if one slipped through.
func (w *costWalker) enterFragment() error {
	w.fragNest++
	if w.fragNest > maxNesting {
		return errTooComplex
	}
	return nil
}

// first is the page size a connection field asks for, as the resolver will
// see it: the literal, the variable (or its default), else the default page
// size. Values out of range count as the nearest bound; the resolver
// refuses them anyway.
func (w *costWalker) first(args map[string]value) int64 {
	v, ok := args["first"]
	if !ok {
		return DefaultPageSize
	}
	n := int64(DefaultPageSize)
	switch v.kind {
	case valInt:
		n = v.i
	case valVar:
		if raw, ok := w.vars[v.name]; ok {
			if i, ok := intOf(raw); ok {
				n = i
			}
		} else if d, ok := w.op.defaults[v.name]; ok && d.kind == valInt {
			n = d.i
		}
	}
	return max(1, min(n, MaxPageSize))
}

// intOf reads an integer variable as encoding/json decoded it.
func intOf(v any) (int64, bool) {
	switch n := v.(type) {
	case float64:
		if n != math.Trunc(n) || math.IsInf(n, 0) || math.Abs(n) > 1<<53 {
			return 0, false
		}
		return int64(n), true
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case int64:
		return n, true
	}
	return 0, false
}

const saturated = int64(1) << 50

func satAdd(a, b int64) int64 { return min(a+b, saturated) }

func satMul(a, b int64) int64 {
	if a != 0 && b > saturated/a {
		return saturated
	}
	return min(a*b, saturated)
}
