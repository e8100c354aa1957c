package server

import (
	"net/http"
	"strconv"

	"github.com/lectern/lectern/limits"
	"github.com/lectern/lectern/tenant"
)

// withBudget charges every request to next against its site's budget on
// this replica and answers 429 with Retry-After (and an RFC 6749-style
// body, as the endpoint's other HTTP-level refusals) once it is spent,
// before next does any work: one site flooded at full speed must leave
// the replica to the others (issue 14).
func withBudget(b *limits.Budgets, what string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ok, retry := b.Take(r.Context(), 1); !ok {
			w.Header().Set("Retry-After", strconv.Itoa(max(1, int(retry.Seconds()+0.999))))
			tenant.WriteError(w, http.StatusTooManyRequests, "rate_limited",
				"this site's "+what+" budget is spent for the moment; retry after "+w.Header().Get("Retry-After")+" s")
			return
		}
		next.ServeHTTP(w, r)
	})
}
