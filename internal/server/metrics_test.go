package server

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/lectern/lectern/vocab"
)

// Requests are counted by route, method and status class, each class's
// series made by its first request, and timed by route and method.
func TestRequestMetrics(t *testing.T) {
	s, hosts := benchServer(t, 1)
	serve := func(method, path string, n int) {
		for range n {
			req := httptest.NewRequest(method, path, nil)
			req.Host, req.TLS = hosts[0], &tls.ConnectionState{}
			s.echo.ServeHTTP(httptest.NewRecorder(), req)
		}
	}
	serve(http.MethodGet, vocab.ProtectedResourcePath, 3)
	serve(http.MethodHead, vocab.ProtectedResourcePath, 1)
	serve(http.MethodPost, vocab.TokenPath, 2) // no grant: 400
	mfs, err := s.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	counts, observed := map[string]float64{}, map[string]uint64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			switch mf.GetName() {
			case "lectern_http_requests_total":
				counts[l["method"]+" "+l["route"]+" "+l["code"]] = m.GetCounter().GetValue()
			case "lectern_http_request_duration_seconds":
				observed[l["method"]+" "+l["route"]] = m.GetHistogram().GetSampleCount()
			}
		}
	}
	want := map[string]float64{
		"GET " + vocab.ProtectedResourcePath + " 2xx":  3,
		"HEAD " + vocab.ProtectedResourcePath + " 2xx": 1,
		"POST " + vocab.TokenPath + " 4xx":             2,
	}
	for k, v := range want {
		if counts[k] != v {
			t.Errorf("requests %s: %v, want %v (all: %v)", k, counts[k], v, counts)
		}
	}
	if _, ok := counts["GET "+vocab.ProtectedResourcePath+" 4xx"]; ok || len(counts) != len(want) {
		t.Errorf("series for classes no request had: %v", counts)
	}
	if observed["GET "+vocab.ProtectedResourcePath] != 3 || observed["POST "+vocab.TokenPath] != 2 {
		t.Errorf("durations observed: %v", observed)
	}
}
