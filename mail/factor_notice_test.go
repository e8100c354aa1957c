package mail

import (
	"strings"
	"testing"
	"time"
)

// The notice of a changed second factor says what changed, where and when
// (in the message's language), and how to react; the passkey's name,
// chosen by whoever added it, is escaped in the HTML.
func TestFactorNotice(t *testing.T) {
	tpl, err := NewTemplates()
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 3, 14, 5, 0, 0, time.UTC)
	base := Data{SiteName: "Demo Academy", SiteOrigin: "https://a.test", To: "ada@example.test", Name: "Ada",
		ResetLink: "https://a.test/password/forgot", FactorName: "Key <b>", At: at}
	for _, c := range []struct {
		factor, lang, subject, text string
	}{
		{FactorPasskeyAdded, "en", "A second factor was added to your account at Demo Academy",
			"A passkey named “Key <b>” was added to your account at Demo Academy on 3 Mar 2026, 14:05 UTC."},
		{FactorPasskeyRemoved, "en", "A second factor was removed from your account at Demo Academy",
			"The passkey named “Key <b>” was removed from your account at Demo Academy on 3 Mar 2026, 14:05 UTC."},
		{FactorAppAdded, "en", "A second factor was added to your account at Demo Academy", "An authenticator app was set up"},
		{FactorAppReplaced, "en", "A second factor was added to your account at Demo Academy", "It replaces the previous app"},
		{FactorAppRemoved, "en", "A second factor was removed from your account at Demo Academy", "was turned off"},
		{FactorPasskeyAdded, "de", "Ihrem Konto bei Demo Academy wurde ein zweiter Faktor hinzugefügt", "am 3. März 2026, 14:05 UTC"},
	} {
		d := base
		d.Factor, d.Lang = c.factor, c.lang
		subject, text, html, err := tpl.Render(KindFactorNotice, d)
		if err != nil {
			t.Fatalf("%s/%s: %v", c.factor, c.lang, err)
		}
		if subject != c.subject {
			t.Errorf("%s/%s: subject %q; want %q", c.factor, c.lang, subject, c.subject)
		}
		if !strings.Contains(text, c.text) || !strings.Contains(text, base.ResetLink) {
			t.Errorf("%s/%s: text lacks %q or the reset link:\n%s", c.factor, c.lang, c.text, text)
		}
		if strings.Contains(html, "Key <b>") || (strings.HasPrefix(c.factor, "passkey") && !strings.Contains(html, "Key &lt;b&gt;")) {
			t.Errorf("%s/%s: the passkey's name is not escaped in the HTML:\n%s", c.factor, c.lang, html)
		}
		if !strings.Contains(html, `href="https://a.test/password/forgot"`) {
			t.Errorf("%s/%s: the HTML does not link the reset page", c.factor, c.lang)
		}
	}
}
