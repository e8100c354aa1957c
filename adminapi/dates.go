package adminapi

import (
	"reflect"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
)

// The date-times the API accepts, in parameters and bodies alike: from the
// Unix epoch to the start of year 9999 (UTC). Everything the API stores
// must print back as RFC 3339, whose year has four digits, and must be
// read back by both databases: a date past 9999 (9999-12-31T23:00:00-05:00
// is one) would be stored and then fail every answer that shows it, the
// site's whole list included. The year of headroom covers what the API
// derives from a date (an event's default end, an hour later).
var (
	earliestDate = time.Unix(0, 0).UTC()
	latestDate   = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
)

// checkDates runs before every operation: a request whose parameters or
// body hold a date-time outside [earliestDate, latestDate) is refused
// before anything acts on it, naming the member: 400 for a parameter, as
// for every malformed parameter, 422 for a body member. A required
// date-time of a body that is missing or null (the zero time.Time of a
// non-pointer member) is "required".
func checkDates(f StrictHandlerFunc, _ string) StrictHandlerFunc {
	return func(c echo.Context, request any) (any, error) {
		var params, body []InvalidField
		if v := reflect.Indirect(reflect.ValueOf(request)); v.Kind() == reflect.Struct {
			for i := range v.NumField() {
				sf := v.Type().Field(i)
				switch {
				case !sf.IsExported():
				case sf.Name == "Params":
					walkDates(v.Field(i), "", &params)
				default:
					walkDates(v.Field(i), memberName(sf), &body)
				}
			}
		}
		switch {
		case len(params) > 0:
			return nil, errBadRequest("a date-time parameter is out of range", params...)
		case len(body) > 0:
			return nil, errInvalid(body...)
		}
		return f(c, request)
	}
}

var timeType = reflect.TypeFor[time.Time]()

// walkDates collects the out-of-range date-times of v, whose path in the
// request is at.
func walkDates(v reflect.Value, at string, bad *[]InvalidField) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walkDates(v.Elem(), at, bad)
		}
	case reflect.Struct:
		if v.Type() == timeType {
			t := v.Interface().(time.Time)
			switch {
			case t.IsZero():
				*bad = append(*bad, InvalidField{Field: at, Message: "is required"})
			case t.Before(earliestDate) || !t.Before(latestDate):
				*bad = append(*bad, InvalidField{Field: at, Message: "must be a date-time from 1970-01-01T00:00:00Z to before 9999-01-01T00:00:00Z"})
			}
			return
		}
		for i := range v.NumField() {
			sf := v.Type().Field(i)
			if !sf.IsExported() {
				continue
			}
			walkDates(v.Field(i), join(at, memberName(sf)), bad)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			walkDates(v.Index(i), at, bad)
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			walkDates(it.Value(), at, bad)
		}
	}
}

// memberName is a field's name in the API: its JSON or query name; the
// wrappers of the generated request objects (Body, Params) add nothing.
func memberName(sf reflect.StructField) string {
	for _, tag := range []string{"json", "form", "query"} {
		if name, _, _ := strings.Cut(sf.Tag.Get(tag), ","); name != "" && name != "-" {
			return name
		}
	}
	if sf.Name == "Body" || sf.Name == "Params" {
		return ""
	}
	return strings.ToLower(sf.Name[:1]) + sf.Name[1:]
}

func join(at, name string) string {
	switch {
	case at == "":
		return name
	case name == "":
		return at
	}
	return at + "." + name
}
