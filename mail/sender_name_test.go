package mail

import (
	"bytes"
	netmail "net/mail"
	"testing"

	"github.com/lectern/lectern/storage"
)

// fromOf builds the message of an outbox row from name <addr> and reads
// its From header back as a mail program would.
func fromOf(t *testing.T, name, addr string) []*netmail.Address {
	t.Helper()
	msg, err := message(&storage.OutboxMessage{ID: 1, FromName: name, FromAddr: addr, ToAddr: "pat@example.test",
		Subject: "Hello", TextBody: "text", HTMLBody: "<p>html</p>"})
	if err != nil {
		t.Fatalf("sender %q: %v", name, err)
	}
	var buf bytes.Buffer
	if _, err := msg.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	m, err := netmail.ReadMessage(&buf)
	if err != nil {
		t.Fatal(err)
	}
	from, err := m.Header.AddressList("From")
	if err != nil {
		t.Fatalf("sender %q: the From header %q does not parse: %v", name, m.Header.Get("From"), err)
	}
	return from
}

// Any sender name the settings accept goes out as one display name of the
// site's address: quotes, backslashes and commas are quoted, never read as
// more addresses (go-mail's FromFormat pasted the name unescaped, and every
// message of a site named `Open School \` failed). A name no header carries
// as itself is left out rather than holding the site's mail back.
func TestSenderNameInTheFromHeader(t *testing.T) {
	for _, c := range []struct {
		name, wantName string
		works          bool
	}{
		{`Open School \`, `Open School \`, true},
		{`Open School" <spoof@evil.test>, "X`, `Open School" <spoof@evil.test>, "X`, true},
		{`x"`, `x"`, true},
		{`", "`, `", "`, true},
		{`The "Open" School`, `The "Open" School`, true},
		{"Smith, Jane", "Smith, Jane", true},
		{"Schule Müller", "Schule Müller", true},
		{"Ärzte <b> (Kurs)", "Ärzte <b> (Kurs)", true},
		{`Schüler \ Lehrer`, "", false},
		{"", "", true},
	} {
		if got := SenderNameWorks(c.name); got != c.works {
			t.Errorf("SenderNameWorks(%q) = %v, want %v", c.name, got, c.works)
		}
		from := fromOf(t, c.name, "school@open.test")
		if len(from) != 1 || from[0].Address != "school@open.test" || from[0].Name != c.wantName {
			t.Errorf("sender %q: From reads back as %v, want one address %q <school@open.test>", c.name, from, c.wantName)
		}
	}
	if _, err := message(&storage.OutboxMessage{FromName: "X", FromAddr: `"Y" <y@example.test>`, ToAddr: "pat@example.test"}); err == nil {
		t.Error("a From address with a display name of its own was accepted")
	}
}

// Whatever the name, the From header holds exactly the site's address, with
// the name when SenderNameWorks says it survives.
func FuzzSenderName(f *testing.F) {
	for _, s := range []string{`Open School \`, `a" <spoof@evil.test>, "b`, "Jürgen \\", "=?utf-8?q?x?=", " x ", "tab\there", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		from := fromOf(t, name, "school@open.test")
		want := ""
		if SenderNameWorks(name) {
			want = name
		}
		if len(from) != 1 || from[0].Address != "school@open.test" || from[0].Name != want {
			t.Fatalf("sender %q: From reads back as %v, want one address %q <school@open.test>", name, from, want)
		}
	})
}
