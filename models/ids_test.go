package models_test

import (
	"math"
	"testing"

	"petstore/models"
)

// One rule for ids in URLs: decimal as ParseInt reads it, leading zeros
// allowed, no leading '+', 1 to 2^63-1.
func TestParseID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1", 1, true},
		{"42", 42, true},
		{"05", 5, true},
		{"9223372036854775807", math.MaxInt64, true},
		{"", 0, false},
		{"0", 0, false},
		{"-0", 0, false},
		{"-1", 0, false},
		{"+5", 0, false},
		{"+0", 0, false},
		{" 5", 0, false},
		{"5 ", 0, false},
		{"1.0", 0, false},
		{"1e3", 0, false},
		{"0x10", 0, false},
		{"5_000", 0, false},
		{"abc", 0, false},
		{"9223372036854775808", 0, false},
		{"٥", 0, false}, // an Arabic-Indic five
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := models.ParseID(tt.in)
			if ok != tt.ok || (ok && got != tt.want) {
				t.Errorf("ParseID(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
			}
			// The API's {petId} follows the same rule.
			id, err := models.ParsePetID(tt.in)
			if (err == nil) != tt.ok || (err == nil && id != tt.want) {
				t.Errorf("ParsePetID(%q) = %d, %v; want ok %v", tt.in, id, err, tt.ok)
			}
		})
	}
}

func TestParsePetID(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"0", "-1", "abc", "1.0", "9223372036854775808", "", "+1"} {
		if _, err := models.ParsePetID(s); models.ErrorCode(err) != models.CodeInvalidRequest {
			t.Errorf("ParsePetID(%q) err = %v, want invalid_request", s, err)
		}
	}
	if id, err := models.ParsePetID("9223372036854775807"); err != nil || id != math.MaxInt64 {
		t.Errorf("ParsePetID(max) = %d, %v", id, err)
	}
}
