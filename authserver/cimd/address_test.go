package cimd

import (
	"net/netip"
	"testing"
)

func TestPublicAddr(t *testing.T) {
	tests := []struct {
		addr         string
		public       bool
		publicIfLoop bool // with allowLoopback
	}{
		{"93.184.216.34", true, true},
		{"8.8.8.8", true, true},
		{"2606:2800:220:1:248:1893:25c8:1946", true, true},
		{"64:ff9b::8.8.8.8", true, true},     // NAT64 of a public address
		{"2002:808:808::1", true, true},      // 6to4 of 8.8.8.8
		{"::ffff:93.184.216.34", true, true}, // IPv4-mapped public

		{"127.0.0.1", false, true},
		{"127.1.2.3", false, true},
		{"::1", false, true},
		{"::ffff:127.0.0.1", false, true},

		{"10.0.0.1", false, false},
		{"172.16.0.1", false, false},
		{"172.31.255.255", false, false},
		{"192.168.1.1", false, false},
		{"169.254.169.254", false, false}, // cloud metadata
		{"100.64.0.1", false, false},      // CGNAT
		{"100.127.255.254", false, false},
		{"0.0.0.0", false, false},
		{"0.1.2.3", false, false},
		{"192.0.0.1", false, false},
		{"192.0.2.1", false, false},
		{"198.18.0.1", false, false},
		{"198.19.255.1", false, false},
		{"198.51.100.1", false, false},
		{"203.0.113.1", false, false},
		{"224.0.0.1", false, false},
		{"239.255.255.250", false, false},
		{"240.0.0.1", false, false},
		{"255.255.255.255", false, false},
		{"::", false, false},
		{"::ffff:10.0.0.1", false, false},
		{"::ffff:169.254.169.254", false, false},
		{"::10.0.0.1", false, false}, // IPv4-compatible
		{"::8.8.8.8", false, false},
		{"::ffff:0:808:808", false, false}, // IPv4-translated
		{"fd00::1", false, false},          // ULA
		{"fc00::1", false, false},
		{"fe80::1", false, false},
		{"fe80::1%eth0", false, false},
		{"fec0::1", false, false}, // site-local
		{"ff02::1", false, false},
		{"ff01::1", false, false},
		{"ff0e::1", false, false},
		{"64:ff9b::10.0.0.1", false, false},
		{"64:ff9b::127.0.0.1", false, false}, // loopback only when direct
		{"64:ff9b::169.254.169.254", false, false},
		{"64:ff9b:1::8.8.8.8", false, false},
		{"2002:a00:1::1", false, false},                        // 6to4 of 10.0.0.1
		{"2002:7f00:1::1", false, false},                       // 6to4 of 127.0.0.1
		{"2002:a9fe:a9fe::", false, false},                     // 6to4 of 169.254.169.254
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", false, false}, // Teredo
		{"2001:db8::1", false, false},
		{"100::1", false, false},
	}
	for _, tc := range tests {
		a := netip.MustParseAddr(tc.addr)
		if got := publicAddr(a, false); got != tc.public {
			t.Errorf("publicAddr(%s, false) = %v, want %v", tc.addr, got, tc.public)
		}
		if got := publicAddr(a, true); got != tc.publicIfLoop {
			t.Errorf("publicAddr(%s, allowLoopback) = %v, want %v", tc.addr, got, tc.publicIfLoop)
		}
	}
	if publicAddr(netip.Addr{}, true) {
		t.Error("the zero Addr is public")
	}
}
