package mfa

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"errors"
	"image/png"
	"strconv"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/lectern/lectern/storage"
)

// TOTP parameters: those every authenticator app supports (RFC 6238's
// defaults).
const (
	Period = 30
	Digits = otp.DigitsSix
	// Skew accepts the codes of one step before and after now: clocks of
	// phones drift.
	Skew = 1
)

// Wrong codes (TOTP or recovery) are limited per account: MaxFailures in
// FailureWindow, counted platform-wide. Six digits are 10^6 codes; at 5
// tries per 15 minutes a guess takes years.
const (
	MaxFailures   = 5
	FailureWindow = 15 * time.Minute
)

// ErrThrottled is returned while an account has too many wrong codes.
var ErrThrottled = errors.New("mfa: too many wrong codes; wait and try again")

// NewTOTPKey makes a new secret for account at the site called issuer.
func NewTOTPKey(issuer, account string) (*otp.Key, error) {
	return totp.Generate(totp.GenerateOpts{Issuer: issuer, AccountName: account, Period: Period, Digits: Digits, Algorithm: otp.AlgorithmSHA1})
}

// MatchTOTP returns the time step whose code is code for secret at now
// (within Skew), or false. Every step is compared, each in constant time.
func MatchTOTP(secret, code string, now time.Time) (int64, bool) {
	code = strings.TrimSpace(code)
	if len(code) != 6 {
		return 0, false
	}
	step := now.Unix() / Period
	var found int64
	ok := false
	for d := int64(-Skew); d <= Skew; d++ {
		want, err := totp.GenerateCodeCustom(secret, time.Unix((step+d)*Period, 0), totp.ValidateOpts{Period: Period, Digits: Digits, Algorithm: otp.AlgorithmSHA1})
		if err != nil {
			return 0, false
		}
		if subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			found, ok = step+d, true
		}
	}
	return found, ok
}

// Checker verifies second-factor codes of accounts.
type Checker struct {
	Store storage.FactorStore
	Cache storage.Cache
	Now   func() time.Time
}

func failureKey(userID string) string {
	sum := sha256.Sum256([]byte(userID))
	return storage.PlatformKey("mfa-fail", base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:15]))
}

// Throttled reports whether the account may not try a code now.
func (c *Checker) Throttled(ctx context.Context, userID string) (bool, error) {
	raw, err := c.Cache.Get(ctx, failureKey(userID))
	if errors.Is(err, storage.ErrCacheMiss) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	n, _ := strconv.Atoi(string(raw))
	return n >= MaxFailures, nil
}

// Failed counts a wrong code against the account.
func (c *Checker) Failed(ctx context.Context, userID string) {
	_, _ = c.Cache.Incr(ctx, failureKey(userID), FailureWindow)
}

// Check verifies code, a TOTP code or a recovery code, for the account.
// It returns the RFC 8176 method it proved (otp), false for a wrong or
// reused code, or ErrThrottled. A TOTP code is accepted once: a code of
// the same or an earlier step is refused afterwards.
func (c *Checker) Check(ctx context.Context, userID, code string) (bool, error) {
	if t, err := c.Throttled(ctx, userID); err != nil || t {
		if err == nil {
			err = ErrThrottled
		}
		return false, err
	}
	code = strings.TrimSpace(code)
	if len(code) == 6 {
		t, err := c.Store.TOTPOf(ctx, userID)
		if errors.Is(err, storage.ErrNotFound) {
			c.Failed(ctx, userID)
			return false, nil
		}
		if err != nil {
			return false, err
		}
		step, ok := MatchTOTP(t.Secret, code, c.Now())
		if ok {
			if ok, err = c.Store.UseTOTPStep(ctx, userID, step); err != nil {
				return false, err
			}
		}
		if !ok {
			c.Failed(ctx, userID)
		}
		return ok, nil
	}
	ok, err := c.Store.UseRecoveryCode(ctx, userID, HashRecoveryCode(code), c.Now())
	if err != nil {
		return false, err
	}
	if !ok {
		c.Failed(ctx, userID)
	}
	return ok, nil
}

// RecoveryCodes is how many recovery codes an enrolment gives.
const RecoveryCodes = 10

var recoveryAlphabet = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewRecoveryCodes makes RecoveryCodes codes ("xxxxx-xxxxx", 50 random
// bits each) and their hashes, which are what is stored.
func NewRecoveryCodes() (codes []string, hashes [][]byte) {
	for range RecoveryCodes {
		var b [7]byte
		_, _ = rand.Read(b[:])
		s := recoveryAlphabet.EncodeToString(b[:])[:10]
		code := s[:5] + "-" + s[5:]
		codes = append(codes, code)
		hashes = append(hashes, HashRecoveryCode(code))
	}
	return codes, hashes
}

// HashRecoveryCode is the stored form of a recovery code: SHA-256 of the
// code without spaces, dashes and case. Codes carry 50 random bits and are
// limited like TOTP codes, so a plain hash is enough.
func HashRecoveryCode(code string) []byte {
	code = strings.ToLower(strings.NewReplacer("-", "", " ", "").Replace(strings.TrimSpace(code)))
	sum := sha256.Sum256([]byte("lectern-recovery:" + code))
	return sum[:]
}

// Enrolment is a new TOTP secret waiting to be confirmed: its otpauth://
// URL (what the QR code holds) and the secret itself (to type in).
type Enrolment struct {
	URL    string
	Secret string
}

// NewEnrolment makes a new secret for account at the site called issuer.
func NewEnrolment(issuer, account string) (Enrolment, error) {
	k, err := NewTOTPKey(issuer, account)
	if err != nil {
		return Enrolment{}, err
	}
	return Enrolment{URL: k.String(), Secret: k.Secret()}, nil
}

// EnrolmentFromURL reads back an enrolment kept as its URL.
func EnrolmentFromURL(u string) (Enrolment, error) {
	k, err := otp.NewKeyFromURL(u)
	if err != nil {
		return Enrolment{}, err
	}
	return Enrolment{URL: k.String(), Secret: k.Secret()}, nil
}

// QRCode is the enrolment's URL as a QR code, a PNG of size pixels.
func (e Enrolment) QRCode(size int) ([]byte, error) {
	k, err := otp.NewKeyFromURL(e.URL)
	if err != nil {
		return nil, err
	}
	img, err := k.Image(size, size)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
