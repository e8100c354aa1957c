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
// The code may be typed as apps show it, "123 456" (TOTPCode).
func MatchTOTP(secret, code string, now time.Time) (int64, bool) {
	code, ok := TOTPCode(code)
	if !ok {
		return 0, false
	}
	step := now.Unix() / Period
	var found int64
	ok = false
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

// TOTPCode reads what a person typed as a TOTP code: six digits, with the
// spaces and dashes apps show between groups ("123 456", "123-456")
// ignored. False: it is not one (a recovery code, perhaps).
func TOTPCode(typed string) (string, bool) {
	code := strings.NewReplacer(" ", "", "-", "", "\t", "").Replace(strings.TrimSpace(typed))
	if len(code) != 6 {
		return "", false
	}
	for i := 0; i < len(code); i++ {
		if code[i] < '0' || code[i] > '9' {
			return "", false
		}
	}
	return code, true
}

// Checker verifies second-factor codes of accounts, MaxFailures wrong ones
// per FailureWindow.
//
// Every attempt is counted before its code is checked, by one atomic
// increment (Cache.Incr) of the account's attempts in the window, and is
// refused when that count, less the codes that were right, exceeds
// MaxFailures. Requests sent in parallel each get their own count, so no
// more than MaxFailures wrong codes are ever checked in a window, however
// many arrive at once (a read of the count before the check and an
// increment after it let every parallel request through: audit P,
// finding 4). A right code gives its attempt back (a second counter that
// only right codes raise), so a person who signs in several times is not
// held up; a wrong one never does. The counters are platform-wide: an
// account's codes are the same at every site.
type Checker struct {
	Store storage.FactorStore
	Cache storage.Cache
	Now   func() time.Time
}

func userKey(kind, userID string) string {
	sum := sha256.Sum256([]byte(userID))
	return storage.PlatformKey(kind, base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:15]))
}

// attemptsKey counts the account's attempts in the window, rightKey the
// right codes among them.
func attemptsKey(userID string) string { return userKey("mfa-try", userID) }
func rightKey(userID string) string    { return userKey("mfa-ok", userID) }

// admit counts an attempt against the account before its code is checked:
// ErrThrottled when the account has had MaxFailures wrong codes in the
// window (this attempt stays counted).
func (c *Checker) admit(ctx context.Context, userID string) error {
	n, err := c.Cache.Incr(ctx, attemptsKey(userID), FailureWindow)
	if err != nil {
		return err
	}
	if n == 1 {
		// A new window: the right codes of the last one end with it.
		_ = c.Cache.Delete(ctx, rightKey(userID))
	}
	if n <= MaxFailures {
		return nil
	}
	right := int64(0)
	raw, err := c.Cache.Get(ctx, rightKey(userID))
	switch {
	case err == nil:
		right, _ = strconv.ParseInt(string(raw), 10, 64)
	case !errors.Is(err, storage.ErrCacheMiss):
		return err
	}
	if n-right > MaxFailures {
		return ErrThrottled
	}
	return nil
}

// right gives a right code's attempt back. Lost (the cache failed), the
// account is only held to its limit sooner.
func (c *Checker) right(ctx context.Context, userID string) {
	_, _ = c.Cache.Incr(ctx, rightKey(userID), FailureWindow)
}

// Check verifies code, a TOTP code or a recovery code, for the account.
// It returns the RFC 8176 method it proved (otp), false for a wrong or
// reused code, or ErrThrottled. A TOTP code is accepted once: a code of
// the same or an earlier step is refused afterwards.
func (c *Checker) Check(ctx context.Context, userID, code string) (bool, error) {
	if err := c.admit(ctx, userID); err != nil {
		return false, err
	}
	ok, err := c.check(ctx, userID, code)
	if ok {
		c.right(ctx, userID)
	}
	return ok, err
}

func (c *Checker) check(ctx context.Context, userID, code string) (bool, error) {
	if code, isTOTP := TOTPCode(code); isTOTP {
		t, err := c.Store.TOTPOf(ctx, userID)
		if errors.Is(err, storage.ErrNotFound) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		step, ok := MatchTOTP(t.Secret, code, c.Now())
		if !ok {
			return false, nil
		}
		return c.Store.UseTOTPStep(ctx, userID, step)
	}
	return c.Store.UseRecoveryCode(ctx, userID, HashRecoveryCode(code), c.Now())
}

// CheckNew verifies the first code of an authenticator being set up with
// secret, counted against the account like Check. It returns the code's
// time step, false for a wrong code, or ErrThrottled.
func (c *Checker) CheckNew(ctx context.Context, userID, secret, code string) (int64, bool, error) {
	if err := c.admit(ctx, userID); err != nil {
		return 0, false, err
	}
	step, ok := MatchTOTP(secret, code, c.Now())
	if ok {
		c.right(ctx, userID)
	}
	return step, ok, nil
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
