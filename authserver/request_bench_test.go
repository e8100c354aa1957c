package authserver

import (
	stdjson "encoding/json"
	"testing"

	json "github.com/segmentio/encoding/json"
)

// BenchmarkCodeRecord encodes an authorization code's record and decodes
// it again, as issueCode and peekCode do once per code flow, with the
// codec the code flow uses and, for comparison, encoding/json
// (docs/decisions.md, "The code flow's cache records use
// segmentio/encoding/json").
func BenchmarkCodeRecord(b *testing.B) {
	rec := codeRecord{ClientID: "lct_dRzp28mC8sxNf73eavb0Fw", RedirectURI: "https://app.example/cb",
		Challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", Resource: "https://academy.example",
		Scopes: []string{"openid", "profile", "email", "account:read"}, Nonce: "UWwb31tSSIP8NmBZ9b3Prw",
		UserID: "usr_kdepm37ep772ga7niqq5crcmna", AuthTime: 1795825985, AMR: []string{"pwd"},
		Profile: Profile{UserID: "usr_kdepm37ep772ga7niqq5crcmna", Email: "student@academy.example", Name: "Sam Student",
			Roles: []string{"student"}, EmailVerified: true}}
	for _, c := range []struct {
		name      string
		marshal   func(any) ([]byte, error)
		unmarshal func([]byte, any) error
	}{
		{"segmentio", json.Marshal, json.Unmarshal},
		{"encoding-json", stdjson.Marshal, stdjson.Unmarshal},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				raw, err := c.marshal(&rec)
				if err != nil {
					b.Fatal(err)
				}
				var got codeRecord
				if err := c.unmarshal(raw, &got); err != nil || got.Profile.Email != rec.Profile.Email {
					b.Fatalf("round trip: %v, %+v", err, got)
				}
			}
		})
	}
}
