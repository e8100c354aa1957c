package i18n

import (
	"math"
	"strconv"
	"strings"
	"time"

	goi18n "github.com/nicksnyder/go-i18n/v2/i18n"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"golang.org/x/text/number"
)

// months are the abbreviated month names of each language.
var months = map[string][12]string{
	"en": {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"},
	"de": {"Jan.", "Feb.", "März", "Apr.", "Mai", "Juni", "Juli", "Aug.", "Sept.", "Okt.", "Nov.", "Dez."},
	"fr": {"janv.", "févr.", "mars", "avr.", "mai", "juin", "juil.", "août", "sept.", "oct.", "nov.", "déc."},
	"es": {"ene", "feb", "mar", "abr", "may", "jun", "jul", "ago", "sept", "oct", "nov", "dic"},
}

// Date formats the day of t (in t's location) for lang: "3 Mar 2026",
// "3. März 2026", "3 mars 2026", "3 mar 2026".
func Date(lang string, t time.Time) string {
	m, ok := months[lang]
	if !ok {
		lang, m = Default, months[Default]
	}
	day := strconv.Itoa(t.Day())
	if lang == "de" {
		day += "."
	}
	return day + " " + m[t.Month()-1] + " " + strconv.Itoa(t.Year())
}

// DateTime formats t with its time of day and zone: "3 Mar 2026, 14:05
// UTC"; French writes "3 mars 2026 à 14:05 UTC". All four use the 24-hour
// clock except English, which keeps it too: the pages show UTC to people
// in many countries, and 14:05 reads the same everywhere.
func DateTime(lang string, t time.Time) string {
	sep := ", "
	if lang == "fr" {
		sep = " à "
	}
	return Date(lang, t) + sep + t.Format("15:04 MST")
}

// Ago describes t relative to now in lang for the last week ("5 minutes
// ago", "vor 5 Minuten"), and as a date before that.
func Ago(lang string, now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return T(lang, "time.just_now")
	case d < time.Hour:
		return TN(lang, "time.minutes_ago", int(d/time.Minute))
	case d < 24*time.Hour:
		return TN(lang, "time.hours_ago", int(d/time.Hour))
	case d < 7*24*time.Hour:
		return TN(lang, "time.days_ago", int(d/(24*time.Hour)))
	}
	return Date(lang, t)
}

// TN returns message id in lang in the plural form for n; the message gets
// n as {{.Count}}.
func TN(lang, id string, n int, args ...any) string {
	data := map[string]any{"Count": n}
	for i := 0; i+1 < len(args); i += 2 {
		data[args[i].(string)] = args[i+1]
	}
	return localize(lang, &goi18n.LocalizeConfig{MessageID: id, PluralCount: n, TemplateData: data})
}

// Price formats an amount in minor units (cents) of an ISO 4217 currency
// for lang: "USD 1,234.50" in English, "1.234,50 USD" in German,
// "1 234,50 USD" in French, "1.234,50 USD" in Spanish (x/text's CLDR
// symbols; a no-break space before the code).
// Currencies without minor units (JPY) show none.
func Price(lang string, minor int64, currency string) string {
	tag, err := language.Parse(lang)
	if err != nil || !Supported(lang) {
		lang, tag = Default, language.English
	}
	digits := 2
	switch strings.ToUpper(currency) {
	case "JPY", "KRW", "CLP", "ISK", "VND":
		digits = 0
	}
	v := float64(minor) / math.Pow10(digits)
	if digits == 0 {
		v = float64(minor)
	}
	n := message.NewPrinter(tag).Sprint(number.Decimal(v, number.MinFractionDigits(digits), number.MaxFractionDigits(digits)))
	if lang == Default {
		return strings.ToUpper(currency) + " " + n
	}
	return n + "\u00a0" + strings.ToUpper(currency)
}

// In describes a future moment t relative to now in lang: "in 5 minutes",
// "in 3 hours" (up to two days), "in 7 days". Each count is rounded to the
// nearest unit (at least one minute): a page is read a moment after the
// moment was set, and a 7-day link read then expires "in 7 days", not in
// 6 (truncating did that). The unit is chosen on the rounded count, so
// 59.5 minutes is "in 1 hour", never "in 60 minutes".
func In(lang string, now, t time.Time) string {
	d := t.Sub(now)
	if m := max(1, roundTo(d, time.Minute)); m < 60 {
		return TN(lang, "time.in_minutes", m)
	}
	if h := roundTo(d, time.Hour); h < 48 {
		return TN(lang, "time.in_hours", h)
	}
	return TN(lang, "time.in_days", roundTo(d, 24*time.Hour))
}

// roundTo is d in units of unit, rounded to the nearest (halves up).
func roundTo(d, unit time.Duration) int {
	return int(d.Round(unit) / unit)
}

// Duration says how long a wait is in lang, rounded up to whole minutes
// past the first minute: "30 seconds", "1 minute", "15 minutes".
func Duration(lang string, d time.Duration) string {
	if d < time.Minute {
		return TN(lang, "time.seconds", int(d.Seconds()+0.5))
	}
	return TN(lang, "time.minutes", int((d+time.Minute-1)/time.Minute))
}
