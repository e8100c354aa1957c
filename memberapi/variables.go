package memberapi

import (
	"fmt"
	"math"

	gqlerrors "github.com/graph-gophers/graphql-go/errors"
)

// checkVariables coerces the request's variables to the types the
// operation declares (GraphQL §6.1.2 CoerceVariableValues) before anything
// runs. graphql-go checks them only when a resolver unpacks its arguments,
// and then answers as if the server had failed; a wrong variable is the
// client's mistake and makes the request one that cannot be executed (400).
func checkVariables(op *operation, vars map[string]any) *gqlerrors.QueryError {
	for _, d := range op.vars {
		v, present := vars[d.name]
		var err error
		switch {
		case !present && d.hasDefault:
		case !present && d.typ.nonNull:
			err = fmt.Errorf("of required type %s was not provided", d.typ)
		case present:
			err = coerceInput(d.typ, v)
		}
		if err != nil {
			return requestError(CodeBadUserInput, "variable $%s %v", d.name, err)
		}
	}
	return nil
}

// coerceInput checks a JSON value against an input type (GraphQL §3.5,
// §3.9, §3.10 input coercion) for the built-in scalars. Other named types
// (none of this schema's arguments take one) are left to graphql-go.
func coerceInput(t *typeRef, v any) error {
	if v == nil {
		if t.nonNull {
			return fmt.Errorf("of non-null type %s must not be null", t)
		}
		return nil
	}
	if t.elem != nil {
		l, ok := v.([]any)
		if !ok { // a single value is a list of one
			return coerceInput(t.elem, v)
		}
		for _, e := range l {
			if err := coerceInput(t.elem, e); err != nil {
				return err
			}
		}
		return nil
	}
	ok := true
	switch t.name {
	case "Int":
		i, isInt := intOf(v)
		ok = isInt && i >= math.MinInt32 && i <= math.MaxInt32
	case "Float":
		_, ok = v.(float64)
	case "String":
		_, ok = v.(string)
	case "Boolean":
		_, ok = v.(bool)
	case "ID":
		switch v.(type) {
		case string:
		default:
			_, ok = intOf(v)
		}
	}
	if !ok {
		return fmt.Errorf("got a value that is not a valid %s", t.name)
	}
	return nil
}
