package server

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/lectern/lectern/adminapi"
)

// Every request carries a deadline (uploads a longer one), so a stalled
// database or cache yields a 503 before the server's write timeout would
// drop the connection unanswered.
func TestRequestDeadline(t *testing.T) {
	e := echo.New()
	e.Pre(requestDeadline)
	var left time.Duration
	h := func(c echo.Context) error {
		dl, ok := c.Request().Context().Deadline()
		if !ok {
			t.Error("no deadline")
		}
		left = time.Until(dl)
		return c.NoContent(http.StatusNoContent)
	}
	e.GET("/x", h)
	e.POST(adminapi.BasePath+"/files", h)
	for _, c := range []struct {
		method, path string
		want         time.Duration
	}{{http.MethodGet, "/x", requestTimeout}, {http.MethodPost, adminapi.BasePath + "/files", uploadTimeout}} {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, nil))
		if rec.Code != http.StatusNoContent || left > c.want || left < c.want-time.Second {
			t.Errorf("%s %s: %d, %v left; want about %v", c.method, c.path, rec.Code, left, c.want)
		}
	}
	if requestTimeout >= 60*time.Second || uploadTimeout >= 60*time.Second {
		t.Error("a request deadline is not under the server's 60 s WriteTimeout")
	}
}
