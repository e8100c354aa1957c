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

// An amount of zero is an amount, not a price label: "0.00 USD", not
// "Free" (sales_summary's revenue of a quiet month).
func TestAmount(t *testing.T) {
	for _, c := range []struct {
		cents    int64
		currency string
		want     string
	}{
		{0, "USD", "0.00 USD"},
		{0, "jpy", "0 JPY"},
		{0, "KWD", "0.000 KWD"},
		{0, "", "0.00"},
		{27910, "usd", "279.10 USD"},
		{-250, "EUR", "-2.50 EUR"},
	} {
		if got := Amount(c.cents, c.currency); got != c.want {
			t.Errorf("Amount(%d, %q) = %q; want %q", c.cents, c.currency, got, c.want)
		}
	}
}
