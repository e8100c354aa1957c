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

// The advice works (audit V, finding 1): a password reset signs out every
// session but leaves a factor in place, so the notice also says that the
// site can have the factor removed; a removal by support says what to do
// next, and what to do if the person did not ask for it. Every language.
func TestFactorNoticeAdvice(t *testing.T) {
	tpl, err := NewTemplates()
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 3, 14, 5, 0, 0, time.UTC)
	base := Data{SiteName: "Demo Academy", SiteOrigin: "https://a.test", To: "ada@example.test", Name: "Ada",
		ResetLink: "https://a.test/password/forgot", FactorName: "Key <b>, Phone", At: at}
	advice := map[string][2]string{ // language: the change's advice, a removal by support's
		"en": {"who can have the factor removed, and reset your password now (this signs out every session):", "If you did not ask for this, reset your password now (this signs out every session) and contact Demo Academy:"},
		"de": {"wo man den Faktor entfernen lassen kann", "Haben Sie das nicht veranlasst"},
		"es": {"que puede hacer quitar el factor", "Si no lo pediste tú"},
		"fr": {"qui peut faire retirer le facteur", "Si vous ne l’avez pas demandé"},
	}
	for lang, want := range advice {
		for _, factor := range []string{FactorPasskeyAdded, FactorAppRemoved, FactorPasskeysRemovedBySupport, FactorAppRemovedBySupport} {
			d := base
			d.Factor, d.Lang = factor, lang
			subject, text, html, err := tpl.Render(KindFactorNotice, d)
			if err != nil {
				t.Fatalf("%s/%s: %v", factor, lang, err)
			}
			bySupport := factor == FactorPasskeysRemovedBySupport || factor == FactorAppRemovedBySupport
			w, other := want[0], want[1]
			if bySupport {
				w, other = want[1], want[0]
			}
			if !strings.Contains(text, w) || strings.Contains(text, other) || !strings.Contains(text, base.ResetLink) {
				t.Errorf("%s/%s: text lacks %q (or has %q, or lacks the link):\n%s", factor, lang, w, other, text)
			}
			if !strings.Contains(html, `href="https://a.test/password/forgot"`) || strings.Contains(html, "Key <b>") {
				t.Errorf("%s/%s: the HTML does not link the reset page, or does not escape the names:\n%s", factor, lang, html)
			}
			if bySupport && !strings.Contains(subject, "Demo Academy") {
				t.Errorf("%s/%s: subject %q", factor, lang, subject)
			}
		}
	}
	d := base
	d.Factor = FactorPasskeysRemovedBySupport
	subject, text, _, _ := tpl.Render(KindFactorNotice, d)
	if subject != "A second factor was removed from your account at Demo Academy" ||
		!strings.Contains(text, "Support removed the passkeys of your account at Demo Academy on 3 Mar 2026, 14:05 UTC: Key <b>, Phone.") ||
		!strings.Contains(text, "set up a new second factor") {
		t.Errorf("passkeys removed by support: %q\n%s", subject, text)
	}
	d.Factor = FactorAppRemovedBySupport
	if _, text, _, _ := tpl.Render(KindFactorNotice, d); !strings.Contains(text, "Support turned off the authenticator app of your account on 3 Mar 2026, 14:05 UTC.") {
		t.Errorf("app removed by support:\n%s", text)
	}
}
