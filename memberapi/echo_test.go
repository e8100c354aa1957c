package memberapi

import (
	"strings"
	"testing"
)

// An unknown operationName comes back in the error cut to 100 characters:
// it is the client's input, as long as the body (64 KiB).
func TestMemberAPIUnknownOperationNameEchoBounded(t *testing.T) {
	api := newTestAPI(t, seededFake(), nil)
	name := strings.Repeat("N", 50_000)
	r := api.post(readOnly, `query Me { viewer { name } }`, nil, name)
	if r.status != 400 || !strings.Contains(string(r.raw), "no operation named") {
		t.Fatalf("unknown operationName: %d %.300s", r.status, r.raw)
	}
	if len(r.raw) > 1000 || strings.Contains(string(r.raw), strings.Repeat("N", 101)) {
		t.Fatalf("the error body is %d bytes and repeats more than 100 characters of the name: %.300s", len(r.raw), r.raw)
	}
}
