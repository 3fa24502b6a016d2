package models

import (
	"fmt"
	"math"
	"strconv"
)

// The one rule for ids written in URLs, by partners and by staff alike: a
// path segment (/v1/pets/{petId}, /admin/users/{id}), the API's after, the
// console's after and before, the audit trail's target and before. An id
// is written in decimal as strconv.ParseInt reads it (leading zeros are
// fine: "05" is 5) but without a leading '+', and fits in an int64.

// ParseID reads an id from a URL: a whole number from 1 to 2^63-1.
func ParseID(s string) (int64, bool) { return parseID(s, 1) }

// parseID reads an id of at least lowest: 1, or 0 for an after that
// starts at the beginning (which, as ParseInt reads it, "-0" also does).
func parseID(s string, lowest int64) (int64, bool) {
	if s == "" || s[0] == '+' {
		return 0, false
	}
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil && id >= lowest
}

// ParsePetID parses the API's {petId}, refusing anything but an id with
// the error the API answers.
func ParsePetID(s string) (int64, error) {
	id, ok := ParseID(s)
	if !ok {
		return 0, &Error{Code: CodeInvalidRequest,
			Message: fmt.Sprintf("Pet id must be a whole number from 1 to %d.", int64(math.MaxInt64)),
			Fields:  []FieldError{{FieldPetID, "Must be a whole number from 1 to 9223372036854775807."}}}
	}
	return id, nil
}
