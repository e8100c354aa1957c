package memberapi

import (
	"fmt"
	"strconv"
	"strings"
)

// This file reads GraphQL executable documents (GraphQL, October 2021, §2)
// as far as the handler must understand them before execution: which
// operation runs and whether it is a mutation (for the scope check), and
// the fields it selects with their arguments (for Limits). graphql-go
// parses and validates every query first; its parser is internal to it, so
// this one is kept small and only ever sees documents graphql-go accepted.

// document is the part of an executable document the limits need.
type document struct {
	operations []*operation
	fragments  map[string]*fragmentDef
}

// Operation types.
const (
	opQuery        = "query"
	opMutation     = "mutation"
	opSubscription = "subscription"
)

type operation struct {
	typ  string // opQuery, opMutation or opSubscription
	name string
	vars []varDef
	// defaults are the variables' default values.
	defaults map[string]value
	sels     []selection
}

// varDef is a variable definition: $name: type = default.
type varDef struct {
	name       string
	typ        *typeRef
	hasDefault bool
}

// typeRef is a type as written: a named type or a list, either non-null.
type typeRef struct {
	name    string
	elem    *typeRef // of a list
	nonNull bool
}

func (t *typeRef) String() string {
	s := t.name
	if t.elem != nil {
		s = "[" + t.elem.String() + "]"
	}
	if t.nonNull {
		s += "!"
	}
	return s
}

type fragmentDef struct {
	name string
	sels []selection
}

type selectionKind uint8

const (
	selField selectionKind = iota
	selSpread
	selInline
)

// selection is a field (name, args, sels), a fragment spread (name) or an
// inline fragment (sels). Aliases and directives are not kept: the limits
// count every selection, @skip and @include notwithstanding.
type selection struct {
	kind selectionKind
	name string
	args map[string]value
	sels []selection
}

type valueKind uint8

const (
	valOther valueKind = iota
	valInt
	valVar
)

// value is an argument value, as far as the limits read it: an integer
// literal, a variable, or something else.
type value struct {
	kind valueKind
	i    int64
	name string // of the variable
}

// operation returns the operation the request runs: the one named name, or
// the only one when name is empty (GraphQL §6.1 GetOperation).
func (d *document) operation(name string) (*operation, error) {
	if name == "" {
		if len(d.operations) != 1 {
			return nil, fmt.Errorf("the document has %d operations; operationName must name one", len(d.operations))
		}
		return d.operations[0], nil
	}
	for _, op := range d.operations {
		if op.name == name {
			return op, nil
		}
	}
	// At most 100 characters of the name come back: it is the client's
	// input, up to the body's size.
	return nil, fmt.Errorf("the document has no operation named %.100q", name)
}

// maxNesting bounds the nesting of selection sets, list and object values
// and types while parsing; documents are at most Limits.MaxQueryBytes long.
const maxNesting = 256

// parseDocument parses an executable document.
func parseDocument(src string) (doc *document, err error) {
	p := &parser{lex: lexer{src: src}}
	defer func() {
		if r := recover(); r != nil {
			se, ok := r.(syntaxError)
			if !ok {
				panic(r)
			}
			doc, err = nil, se
		}
	}()
	p.advance()
	doc = &document{fragments: map[string]*fragmentDef{}}
	for p.tok.kind != tokEOF {
		switch {
		case p.tok.kind == tokString: // a description
			p.advance()
		case p.isPunct("{"):
			doc.operations = append(doc.operations, &operation{typ: opQuery, sels: p.selectionSet()})
		case p.tok.kind == tokName && (p.tok.text == opQuery || p.tok.text == opMutation || p.tok.text == opSubscription):
			doc.operations = append(doc.operations, p.operation())
		case p.tok.kind == tokName && p.tok.text == "fragment":
			f := p.fragment()
			if _, dup := doc.fragments[f.name]; dup {
				p.fail("fragment %q is defined twice", f.name)
			}
			doc.fragments[f.name] = f
		default:
			p.fail("expected an operation or a fragment")
		}
	}
	if len(doc.operations) == 0 {
		p.fail("the document has no operation")
	}
	return doc, nil
}

type syntaxError struct {
	msg string
	pos int
}

func (e syntaxError) Error() string { return fmt.Sprintf("%s (at byte %d)", e.msg, e.pos) }

type parser struct {
	lex     lexer
	tok     token
	nesting int
}

func (p *parser) fail(format string, args ...any) {
	panic(syntaxError{msg: fmt.Sprintf(format, args...), pos: p.tok.pos})
}

func (p *parser) advance() {
	t, err := p.lex.next()
	if err != nil {
		panic(err)
	}
	p.tok = t
}

func (p *parser) isPunct(s string) bool { return p.tok.kind == tokPunct && p.tok.text == s }

func (p *parser) expect(punct string) {
	if !p.isPunct(punct) {
		p.fail("expected %q", punct)
	}
	p.advance()
}

func (p *parser) name() string {
	if p.tok.kind != tokName {
		p.fail("expected a name")
	}
	s := p.tok.text
	p.advance()
	return s
}

func (p *parser) enter() {
	p.nesting++
	if p.nesting > maxNesting {
		p.fail("nested more than %d levels deep", maxNesting)
	}
}

func (p *parser) leave() { p.nesting-- }

// operation: OperationType Name? VariableDefinitions? Directives? SelectionSet.
func (p *parser) operation() *operation {
	op := &operation{typ: p.name()}
	if p.tok.kind == tokName {
		op.name = p.name()
	}
	if p.isPunct("(") {
		op.vars, op.defaults = p.variableDefinitions()
	}
	p.directives()
	op.sels = p.selectionSet()
	return op
}

// variableDefinitions: ( ($name: Type DefaultValue? Directives?)+ ).
func (p *parser) variableDefinitions() ([]varDef, map[string]value) {
	p.expect("(")
	var defs []varDef
	defaults := map[string]value{}
	for !p.isPunct(")") {
		p.expect("$")
		d := varDef{name: p.name()}
		p.expect(":")
		d.typ = p.typeRef()
		if p.isPunct("=") {
			p.advance()
			defaults[d.name] = p.value(true)
			d.hasDefault = true
		}
		p.directives()
		defs = append(defs, d)
	}
	p.advance()
	return defs, defaults
}

// typeRef: Name | [Type], optionally followed by !.
func (p *parser) typeRef() *typeRef {
	p.enter()
	defer p.leave()
	t := &typeRef{}
	if p.isPunct("[") {
		p.advance()
		t.elem = p.typeRef()
		p.expect("]")
	} else {
		t.name = p.name()
	}
	if p.isPunct("!") {
		p.advance()
		t.nonNull = true
	}
	return t
}

// directives: (@Name Arguments?)*.
func (p *parser) directives() {
	for p.isPunct("@") {
		p.advance()
		p.name()
		if p.isPunct("(") {
			p.arguments()
		}
	}
}

// fragment: fragment Name on Type Directives? SelectionSet.
func (p *parser) fragment() *fragmentDef {
	p.advance()
	f := &fragmentDef{name: p.name()}
	if f.name == "on" {
		p.fail("a fragment cannot be named on")
	}
	if p.tok.kind != tokName || p.tok.text != "on" {
		p.fail("expected on")
	}
	p.advance()
	p.name()
	p.directives()
	f.sels = p.selectionSet()
	return f
}

// selectionSet: { Selection+ }.
func (p *parser) selectionSet() []selection {
	p.enter()
	defer p.leave()
	p.expect("{")
	var sels []selection
	for !p.isPunct("}") {
		sels = append(sels, p.selection())
	}
	if len(sels) == 0 {
		p.fail("empty selection set")
	}
	p.advance()
	return sels
}

// selection: Field | FragmentSpread | InlineFragment.
func (p *parser) selection() selection {
	if p.isPunct("...") {
		p.advance()
		if p.tok.kind == tokName && p.tok.text != "on" {
			s := selection{kind: selSpread, name: p.name()}
			p.directives()
			return s
		}
		if p.tok.kind == tokName { // on Type
			p.advance()
			p.name()
		}
		p.directives()
		return selection{kind: selInline, sels: p.selectionSet()}
	}
	s := selection{kind: selField, name: p.name()}
	if p.isPunct(":") { // what came first was the alias
		p.advance()
		s.name = p.name()
	}
	if p.isPunct("(") {
		s.args = p.arguments()
	}
	p.directives()
	if p.isPunct("{") {
		s.sels = p.selectionSet()
	}
	return s
}

// arguments: ( (Name: Value)+ ).
func (p *parser) arguments() map[string]value {
	p.expect("(")
	args := map[string]value{}
	for !p.isPunct(")") {
		n := p.name()
		p.expect(":")
		args[n] = p.value(false)
	}
	p.advance()
	return args
}

// value: Variable (unless const) | Int | Float | String | Boolean | Null |
// Enum | List | Object.
func (p *parser) value(isConst bool) value {
	p.enter()
	defer p.leave()
	switch {
	case p.isPunct("$"):
		if isConst {
			p.fail("a default value cannot use a variable")
		}
		p.advance()
		return value{kind: valVar, name: p.name()}
	case p.tok.kind == tokInt:
		i, err := strconv.ParseInt(p.tok.text, 10, 64)
		p.advance()
		if err != nil { // out of range: not a page size anyway
			return value{}
		}
		return value{kind: valInt, i: i}
	case p.tok.kind == tokFloat, p.tok.kind == tokString, p.tok.kind == tokName:
		p.advance()
		return value{}
	case p.isPunct("["):
		p.advance()
		for !p.isPunct("]") {
			p.value(isConst)
		}
		p.advance()
		return value{}
	case p.isPunct("{"):
		p.advance()
		for !p.isPunct("}") {
			p.name()
			p.expect(":")
			p.value(isConst)
		}
		p.advance()
		return value{}
	}
	p.fail("expected a value")
	return value{}
}

type tokenKind uint8

const (
	tokEOF tokenKind = iota
	tokPunct
	tokName
	tokInt
	tokFloat
	tokString
)

type token struct {
	kind tokenKind
	text string
	pos  int
}

// lexer splits a document into tokens (GraphQL §2.1), skipping ignored
// tokens: white space, line terminators, commas, comments and a BOM.
type lexer struct {
	src string
	pos int
}

func (l *lexer) errorf(pos int, format string, args ...any) error {
	return syntaxError{msg: fmt.Sprintf(format, args...), pos: pos}
}

func (l *lexer) next() (token, error) {
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',':
			l.pos++
			continue
		case c == '#':
			for l.pos < len(l.src) && l.src[l.pos] != '\n' && l.src[l.pos] != '\r' {
				l.pos++
			}
			continue
		case strings.HasPrefix(l.src[l.pos:], "\uFEFF"):
			l.pos += len("\uFEFF")
			continue
		}
		break
	}
	start := l.pos
	if start == len(l.src) {
		return token{kind: tokEOF, pos: start}, nil
	}
	c := l.src[start]
	switch {
	case strings.IndexByte("!$&():=@[]{}|", c) >= 0:
		l.pos++
		return token{kind: tokPunct, text: l.src[start:l.pos], pos: start}, nil
	case c == '.':
		if strings.HasPrefix(l.src[start:], "...") {
			l.pos += 3
			return token{kind: tokPunct, text: "...", pos: start}, nil
		}
		return token{}, l.errorf(start, "unexpected %q", c)
	case isNameStart(c):
		for l.pos < len(l.src) && (isNameStart(l.src[l.pos]) || isDigit(l.src[l.pos])) {
			l.pos++
		}
		return token{kind: tokName, text: l.src[start:l.pos], pos: start}, nil
	case c == '-' || isDigit(c):
		return l.number()
	case c == '"':
		return l.string()
	}
	return token{}, l.errorf(start, "unexpected character %q", c)
}

// number: IntValue or FloatValue (GraphQL §2.9.1, §2.9.2).
func (l *lexer) number() (token, error) {
	start := l.pos
	if l.src[l.pos] == '-' {
		l.pos++
	}
	if l.pos == len(l.src) || !isDigit(l.src[l.pos]) {
		return token{}, l.errorf(start, "malformed number")
	}
	if l.src[l.pos] == '0' {
		l.pos++
		if l.pos < len(l.src) && isDigit(l.src[l.pos]) {
			return token{}, l.errorf(start, "a number cannot start with 0")
		}
	} else {
		l.digits()
	}
	kind := tokInt
	if l.pos < len(l.src) && l.src[l.pos] == '.' {
		l.pos++
		if l.digits() == 0 {
			return token{}, l.errorf(start, "malformed number")
		}
		kind = tokFloat
	}
	if l.pos < len(l.src) && (l.src[l.pos] == 'e' || l.src[l.pos] == 'E') {
		l.pos++
		if l.pos < len(l.src) && (l.src[l.pos] == '+' || l.src[l.pos] == '-') {
			l.pos++
		}
		if l.digits() == 0 {
			return token{}, l.errorf(start, "malformed number")
		}
		kind = tokFloat
	}
	if l.pos < len(l.src) && (l.src[l.pos] == '.' || isNameStart(l.src[l.pos])) {
		return token{}, l.errorf(start, "malformed number")
	}
	return token{kind: kind, text: l.src[start:l.pos], pos: start}, nil
}

func (l *lexer) digits() int {
	n := 0
	for l.pos < len(l.src) && isDigit(l.src[l.pos]) {
		l.pos++
		n++
	}
	return n
}

// string: a "quoted" or a """block""" string (GraphQL §2.9.4). Escapes are
// skipped, not decoded: no value of a string matters to the limits.
//
// A block string may not contain an escaped triple quote (\"""), which
// GraphQL allows: graphql-go ends the string at its """, so the two readers
// would see different documents, and the scope and limits checked here would
// not be those of what graphql-go runs. Refusing it is the one place where
// this reader is stricter than the spec.
func (l *lexer) string() (token, error) {
	start := l.pos
	if strings.HasPrefix(l.src[start:], `"""`) {
		l.pos += 3
		for l.pos < len(l.src) {
			switch {
			case strings.HasPrefix(l.src[l.pos:], `\"""`):
				return token{}, l.errorf(l.pos, `a block string cannot contain an escaped triple quote (\"""); use a "quoted" string`)
			case strings.HasPrefix(l.src[l.pos:], `"""`):
				l.pos += 3
				return token{kind: tokString, pos: start}, nil
			default:
				l.pos++
			}
		}
		return token{}, l.errorf(start, "unterminated block string")
	}
	l.pos++
	for l.pos < len(l.src) {
		switch l.src[l.pos] {
		case '"':
			l.pos++
			return token{kind: tokString, pos: start}, nil
		case '\n', '\r':
			return token{}, l.errorf(start, "unterminated string")
		case '\\':
			l.pos += 2
		default:
			l.pos++
		}
	}
	return token{}, l.errorf(start, "unterminated string")
}

func isNameStart(c byte) bool { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool     { return '0' <= c && c <= '9' }

// readsMutationResults reports whether a mutation's selections read the
// objects its fields return beyond their ids: the notification a
// markNotificationRead returns carries the notification's contents, which
// only account:read may see.
func readsMutationResults(doc *document, sels []selection) bool {
	return doc.selects(sels, 0, func(s *selection) bool { return len(s.sels) > 0 && doc.readsBeyondIDs(s.sels, 0) })
}

// readsBeyondIDs reports whether sels select any field but id and
// __typename.
func (doc *document) readsBeyondIDs(sels []selection, depth int) bool {
	return doc.selects(sels, depth, func(s *selection) bool { return s.name != "id" && s.name != "__typename" })
}

// selects reports whether any field of sels, fragments followed, satisfies
// f. Fragment cycles are refused by validation before this runs; the depth
// bound only keeps a bug from looping.
func (doc *document) selects(sels []selection, depth int, f func(*selection) bool) bool {
	if depth > 32 {
		return true
	}
	for i := range sels {
		s := &sels[i]
		switch s.kind {
		case selField:
			if f(s) {
				return true
			}
		case selSpread:
			if frag := doc.fragments[s.name]; frag != nil && doc.selects(frag.sels, depth+1, f) {
				return true
			}
		case selInline:
			if doc.selects(s.sels, depth+1, f) {
				return true
			}
		}
	}
	return false
}
