package ledger

import "github.com/shopspring/decimal"

// Scaled writes d with the places it carries, at least minPlaces: 1500.5
// with two is "1500.50", 12000.125 with two is "12000.125", 1500 with none
// is "1500". The scale a client wrote is kept: an amount goes back as it
// came. It is the one writer of amounts as text, for the API's JSON
// numbers (package api) and the pages' words (package web), so that a page
// shows the digits the API answers.
func Scaled(d decimal.Decimal, minPlaces int32) string {
	places := -d.Exponent()
	if places < minPlaces {
		places = minPlaces
	}
	return d.StringFixed(places)
}
