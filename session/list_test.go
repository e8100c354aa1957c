package session

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/lectern/lectern/storage/cache"
)

func TestSessionsAreListedEndedAndBounded(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ss := NewStore(cache.NewMemory(nil), func() time.Time { return now })
	ctx := t.Context()
	signIn := func(site string) *Session {
		r := httptest.NewRequest(http.MethodPost, "/login", nil)
		r.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0")
		s := siteA
		if site == "b" {
			s = siteB
		}
		sess, err := ss.CreateWith(httptest.NewRecorder(), r, s, "usr_ada", []string{AMRPassword, AMROTP, AMRMulti})
		if err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Second)
		return sess
	}
	first := signIn("a")
	atB := signIn("b")
	list, err := ss.List(ctx, "usr_ada")
	if err != nil || len(list) != 2 {
		t.Fatalf("List = %d sessions, %v; want 2", len(list), err)
	}
	if !list[0].MFA() || list[0].UserAgent == "" {
		t.Errorf("a listed session: %+v; want its AMR and user agent", list[0].Session)
	}
	// Site B's session cannot be ended from site A.
	if ok, err := ss.End(ctx, siteA.ID, "usr_ada", atB.Handle()); err != nil || ok {
		t.Errorf("End(site A, B's session) = %v, %v; want false", ok, err)
	}
	if ok, err := ss.End(ctx, siteA.ID, "usr_eve", first.Handle()); err != nil || ok {
		t.Errorf("End by another user = %v, %v; want false", ok, err)
	}
	if ok, err := ss.End(ctx, siteA.ID, "usr_ada", first.Handle()); err != nil || !ok {
		t.Fatalf("End(own session) = %v, %v; want true", ok, err)
	}
	if list, _ := ss.List(ctx, "usr_ada"); len(list) != 1 || list[0].Handle != atB.Handle() {
		t.Fatalf("after End the list is %+v; want only site B's session", list)
	}
	// Beyond MaxPerUser the oldest sessions end.
	for range MaxPerUser + 5 {
		signIn("a")
	}
	list, _ = ss.List(ctx, "usr_ada")
	if len(list) != MaxPerUser {
		t.Fatalf("after %d sign-ins there are %d sessions; want %d", MaxPerUser+6, len(list), MaxPerUser)
	}
	for _, l := range list {
		if l.Handle == atB.Handle() {
			t.Error("the oldest session (site B's) survived the bound")
		}
	}
	// The platform's own bound (--sessions-per-account) replaces it.
	ss.SetMax(MaxPerUser + 20)
	for range 25 {
		signIn("b")
	}
	if list, _ = ss.List(ctx, "usr_ada"); len(list) != MaxPerUser+20 {
		t.Fatalf("with the bound set to %d there are %d sessions", MaxPerUser+20, len(list))
	}
	ss.SetMax(3)
	signIn("a")
	if list, _ = ss.List(ctx, "usr_ada"); len(list) != 3 {
		t.Fatalf("with the bound set to 3 there are %d sessions after a sign-in", len(list))
	}
}
