package cimd

import "net/netip"

// nonPublic4 are the IPv4 ranges, beyond what netip's predicates cover, that
// are not reachable on the public internet (RFC 6890 special-purpose
// registry): a CIMD host there is either a mistake or an attempt to reach
// something inside our network.
var nonPublic4 = prefixes(
	"0.0.0.0/8",       // "this network"
	"100.64.0.0/10",   // carrier-grade NAT (RFC 6598)
	"192.0.0.0/24",    // IETF protocol assignments
	"192.0.2.0/24",    // TEST-NET-1
	"198.18.0.0/15",   // benchmarking
	"198.51.100.0/24", // TEST-NET-2
	"203.0.113.0/24",  // TEST-NET-3
	"240.0.0.0/4",     // reserved, and 255.255.255.255
)

// nonPublic6 are the IPv6 ranges, beyond netip's predicates, refused
// outright.
var nonPublic6 = prefixes(
	"::/96",           // IPv4-compatible (deprecated), with :: and ::1
	"::ffff:0:0:0/96", // IPv4-translated (SIIT)
	"64:ff9b:1::/48",  // local-use NAT64 (RFC 8215)
	"100::/64",        // discard-only
	"2001::/32",       // Teredo: tunnels to an address we cannot vet
	"2001:db8::/32",   // documentation
	"fec0::/10",       // site-local (deprecated)
)

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96") // RFC 6052: v4 in the last 32 bits
	sixToFour = netip.MustParsePrefix("2002::/16")    // RFC 3056: v4 in bits 16-47
)

func prefixes(ss ...string) []netip.Prefix {
	ps := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		ps[i] = netip.MustParsePrefix(s)
	}
	return ps
}

// publicAddr reports whether a may be dialled: a public unicast address.
// IPv4-mapped addresses are judged as IPv4, and NAT64 and 6to4 addresses by
// the IPv4 address they lead to. allowLoopback admits loopback addresses,
// and nothing else, for tests (Options.AllowLoopbackForTests).
func publicAddr(a netip.Addr, allowLoopback bool) bool {
	a = a.Unmap()
	if !a.IsValid() || a.Zone() != "" {
		return false
	}
	if a.IsLoopback() {
		return allowLoopback
	}
	if a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsMulticast() || a.IsInterfaceLocalMulticast() || a.IsUnspecified() {
		return false
	}
	if a.Is4() {
		for _, p := range nonPublic4 {
			if p.Contains(a) {
				return false
			}
		}
		return true
	}
	for _, p := range nonPublic6 {
		if p.Contains(a) {
			return false
		}
	}
	b := a.As16()
	switch {
	case nat64.Contains(a):
		return publicAddr(netip.AddrFrom4([4]byte(b[12:16])), false)
	case sixToFour.Contains(a):
		return publicAddr(netip.AddrFrom4([4]byte(b[2:6])), false)
	}
	return true
}
