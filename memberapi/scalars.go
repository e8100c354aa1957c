package memberapi

import (
	"encoding/json"
	"fmt"
	"time"
)

// DateTime is the schema's DateTime scalar: RFC 3339 in UTC, seconds.
type DateTime struct{ time.Time }

// ImplementsGraphQLType maps DateTime to the schema's scalar.
func (DateTime) ImplementsGraphQLType(name string) bool { return name == "DateTime" }

// UnmarshalGraphQL accepts an RFC 3339 string (no argument takes a
// DateTime today; graphql-go wants every scalar to be an input too).
func (t *DateTime) UnmarshalGraphQL(input any) error {
	s, ok := input.(string)
	if !ok {
		return fmt.Errorf("a DateTime is an RFC 3339 string, not %T", input)
	}
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return fmt.Errorf("a DateTime is an RFC 3339 string: %w", err)
	}
	t.Time = v
	return nil
}

// MarshalJSON writes the RFC 3339 form.
func (t DateTime) MarshalJSON() ([]byte, error) {
	return json.Marshal(t.UTC().Format(time.RFC3339))
}

func dateTime(t time.Time) DateTime { return DateTime{t} }

func optDateTime(t *time.Time) *DateTime {
	if t == nil {
		return nil
	}
	return &DateTime{*t}
}
