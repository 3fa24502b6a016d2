package web

import "testing"

func TestGroupDigits(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		n    int64
		want string
	}{
		{0, "0"}, {7, "7"}, {999, "999"}, {1000, "1,000"}, {600012, "600,012"}, {1000016, "1,000,016"},
		{-1, "-1"}, {-1234, "-1,234"}, {9223372036854775807, "9,223,372,036,854,775,807"},
	} {
		if got := groupDigits(tt.n); got != tt.want {
			t.Errorf("groupDigits(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}
