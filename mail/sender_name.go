package mail

import (
	"fmt"
	netmail "net/mail"
)

// fromHeader is the From of a message as it is written: the address with
// the name as its display name, quoted or encoded by net/mail (which
// go-mail writes the header with), so a name may hold quotes, commas,
// angle brackets or backslashes and still be one display name of one
// address. A name that would not read back as itself (SenderNameWorks) is
// left out: the message goes from the bare address rather than not at all.
func fromHeader(name, address string) (*netmail.Address, error) {
	a, err := netmail.ParseAddress(address)
	if err != nil {
		return nil, err
	}
	if a.Name != "" {
		// A From address is a bare address; a display name in it would
		// say something the settings do not.
		return nil, fmt.Errorf("%q is not a bare e-mail address", address)
	}
	if SenderNameWorks(name) {
		a.Name = name
	}
	return a, nil
}

// SenderNameWorks reports whether name survives the From header: written
// the way the transport writes it and parsed back, it is one display name,
// the same text, of the same address. net/mail quotes any plain name
// correctly, but it writes a name with non-ASCII or control characters as
// an RFC 2047 encoded-word without escaping a backslash in it, which no
// parser reads back ("Schüler \ Lehrer").
func SenderNameWorks(name string) bool {
	const probe = "sender@example.test"
	a, err := netmail.ParseAddress((&netmail.Address{Name: name, Address: probe}).String())
	return err == nil && a.Name == name && a.Address == probe
}
