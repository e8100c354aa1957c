package vocab

import (
	"strconv"
	"strings"
)

// minorUnits lists the ISO 4217 currencies whose minor unit is not the
// usual cent (two decimals). Prices are stored in minor units.
var minorUnits = map[string]int{
	"BIF": 0, "CLP": 0, "DJF": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KMF": 0, "KRW": 0,
	"PYG": 0, "RWF": 0, "UGX": 0, "VND": 0, "VUV": 0, "XAF": 0, "XOF": 0, "XPF": 0,
	"BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3,
}

// Price formats an amount in minor units for people and models: "49.00
// USD", or "Free" for zero. The agent documents and the MCP tools share it,
// so that a price reads the same everywhere.
func Price(minor int64, currency string) string {
	if minor == 0 {
		return "Free"
	}
	return Amount(minor, currency)
}

// Amount formats a sum of money in minor units, zero included ("0.00
// USD"): revenue, totals. Price is for what something costs, where zero
// reads "Free".
func Amount(minor int64, currency string) string {
	currency = strings.ToUpper(currency)
	digits, ok := minorUnits[currency]
	if !ok {
		digits = 2
	}
	sign := ""
	if minor < 0 {
		sign, minor = "-", -minor
	}
	s := strconv.FormatInt(minor, 10)
	if digits > 0 {
		for len(s) <= digits {
			s = "0" + s
		}
		s = s[:len(s)-digits] + "." + s[len(s)-digits:]
	}
	if currency == "" {
		return sign + s
	}
	return sign + s + " " + currency
}
