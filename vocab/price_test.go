package vocab

import "testing"

func TestPrice(t *testing.T) {
	for _, c := range []struct {
		cents    int64
		currency string
		want     string
	}{
		{4900, "USD", "49.00 USD"},
		{5, "usd", "0.05 USD"},
		{0, "EUR", "Free"},
		{1500, "JPY", "1500 JPY"},
		{12345, "KWD", "12.345 KWD"},
		{-250, "EUR", "-2.50 EUR"},
		{27910, "", "279.10"},
	} {
		if got := Price(c.cents, c.currency); got != c.want {
			t.Errorf("Price(%d, %q) = %q; want %q", c.cents, c.currency, got, c.want)
		}
	}
}
