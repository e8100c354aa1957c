package mfa

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"
)

func TestMatchTOTPAcceptsOneStepOfSkew(t *testing.T) {
	e, err := NewEnrolment("Demo Academy", "ada@example.test")
	if err != nil {
		t.Fatal(err)
	}
	if back, err := EnrolmentFromURL(e.URL); err != nil || back.Secret != e.Secret {
		t.Fatalf("EnrolmentFromURL = %+v, %v", back, err)
	}
	now := time.Date(2026, 11, 25, 16, 0, 10, 0, time.UTC)
	step := now.Unix() / Period
	for _, c := range []struct {
		offset time.Duration
		ok     bool
	}{{0, true}, {-30 * time.Second, true}, {30 * time.Second, true}, {-60 * time.Second, false}, {90 * time.Second, false}} {
		code, err := totp.GenerateCode(e.Secret, now.Add(c.offset))
		if err != nil {
			t.Fatal(err)
		}
		got, ok := MatchTOTP(e.Secret, code, now)
		if ok != c.ok {
			t.Errorf("code of %v from now: accepted %v; want %v", c.offset, ok, c.ok)
		}
		if ok && got != step+int64(c.offset/(Period*time.Second)) {
			t.Errorf("code of %v from now matched step %d; want %d", c.offset, got, step+int64(c.offset/(Period*time.Second)))
		}
	}
	for _, bad := range []string{"", "12345", "1234567", "abcdef"} {
		if _, ok := MatchTOTP(e.Secret, bad, now); ok {
			t.Errorf("MatchTOTP(%q) accepted", bad)
		}
	}
	qr, err := e.QRCode(120)
	if err != nil || !bytes.HasPrefix(qr, []byte("\x89PNG")) {
		t.Errorf("QRCode = %d bytes, %v; want a PNG", len(qr), err)
	}
}

func TestRecoveryCodes(t *testing.T) {
	codes, hashes := NewRecoveryCodes()
	if len(codes) != RecoveryCodes || len(hashes) != RecoveryCodes {
		t.Fatalf("%d codes, %d hashes; want %d", len(codes), len(hashes), RecoveryCodes)
	}
	seen := map[string]bool{}
	for i, c := range codes {
		if len(c) != 11 || c[5] != '-' || seen[c] {
			t.Errorf("code %q is malformed or repeated", c)
		}
		seen[c] = true
		if !bytes.Equal(HashRecoveryCode(c), hashes[i]) {
			t.Errorf("hash of %q differs from the stored one", c)
		}
		// What people type: upper case, spaces, no dash.
		typed := " " + strings.ToUpper(strings.Replace(c, "-", "", 1)) + " "
		if !bytes.Equal(HashRecoveryCode(typed), hashes[i]) {
			t.Errorf("%q typed as %q does not match", c, typed)
		}
	}
	if bytes.Equal(HashRecoveryCode(codes[0]), HashRecoveryCode(codes[1])) {
		t.Error("two codes hash alike")
	}
}
