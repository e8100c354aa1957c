package memberapi

import (
	"context"
	"net/http"
	"strconv"
	"time"
)

// Budget is the site's share of this replica for the Member API
// (limits.Budgets of limits.GraphQLCostPerSite): a request is charged its
// cost (checkLimits) before it runs, so that one site flooded with
// queries leaves the others their latency (issue 14).
type Budget interface {
	Take(ctx context.Context, cost int) (ok bool, retry time.Duration)
}

// CodeRateLimited: the site's budget is spent (HTTP 429 with Retry-After).
const CodeRateLimited = "RATE_LIMITED"

// charge takes cost from the budget, or answers 429 and returns false.
func (h *Handler) charge(w http.ResponseWriter, r *http.Request, cost int) bool {
	if h.budget == nil || cost <= 0 {
		return true
	}
	ok, retry := h.budget.Take(r.Context(), cost)
	if ok {
		return true
	}
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(retry.Seconds()+0.999))))
	h.writeErrors(w, r, http.StatusTooManyRequests, requestError(CodeRateLimited,
		"this site's Member API budget is spent for the moment; retry after %s", retry.Round(time.Millisecond)))
	return false
}
