package adminapi

import (
	"net/http"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
)

// checkDates refuses a request object holding a date-time outside the
// accepted range, naming the member by its API path: 400 for a parameter,
// 422 for a body member (nested and in lists too), "is required" for a
// required one left zero; a request inside the range reaches the
// operation.
func TestCheckDates(t *testing.T) {
	type item struct {
		At time.Time `json:"at"`
	}
	type body struct {
		Items   []item     `json:"items"`
		Expires *time.Time `json:"expiresAt,omitempty"`
	}
	type params struct {
		From *time.Time `form:"from,omitempty" json:"from,omitempty"`
	}
	type request struct {
		Params params
		Body   *body
	}
	ok := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	past9999 := time.Date(9999, 12, 31, 23, 0, 0, 0, time.FixedZone("", -5*3600)) // 10000-01-01T04:00Z
	early := time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC)
	tests := []struct {
		name   string
		req    request
		status int
		field  string
	}{
		{"in range", request{Params: params{From: &ok}, Body: &body{Items: []item{{ok}}, Expires: &ok}}, 0, ""},
		{"no body, no parameter", request{}, 0, ""},
		{"a parameter past 9999 in UTC", request{Params: params{From: &past9999}}, http.StatusBadRequest, "from"},
		{"a body member before 1970", request{Body: &body{Expires: &early}}, http.StatusUnprocessableEntity, "expiresAt"},
		{"a date in a list", request{Body: &body{Items: []item{{ok}, {past9999}}}}, http.StatusUnprocessableEntity, "items.at"},
		{"a required date left out", request{Body: &body{Items: []item{{}}}}, http.StatusUnprocessableEntity, "items.at"},
		{"the first day of 9999", request{Body: &body{Expires: &latestDate}}, http.StatusUnprocessableEntity, "expiresAt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ran := false
			next := func(echo.Context, any) (any, error) { ran = true; return nil, nil }
			_, err := checkDates(next, "op")(nil, tt.req)
			if tt.status == 0 {
				if err != nil || !ran {
					t.Fatalf("refused %v (ran %v)", err, ran)
				}
				return
			}
			p, _ := err.(*problem)
			if ran || p == nil || p.Status != tt.status || len(p.Fields) != 1 || p.Fields[0].Field != tt.field {
				t.Fatalf("ran %v, err %v; want %d naming %s", ran, err, tt.status, tt.field)
			}
			if tt.name == "a required date left out" && p.Fields[0].Message != "is required" {
				t.Errorf("message %q", p.Fields[0].Message)
			}
		})
	}
}
