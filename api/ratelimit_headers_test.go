package api_test

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"petstore/config"
	"petstore/models"
	"petstore/models/modelstest"
	"petstore/server"
)

// sfItem is one member of an RFC 9651 structured-field list whose value is
// a String and whose parameters are Integers (or true when bare).
type sfItem struct {
	value  string
	keys   []string // in the order sent
	params map[string]int64
}

// parseSFList parses an RFC 9651 §4.2.1 List of Items, accepting only
// String values and Integer or Boolean-true parameters (the RateLimit
// fields' shapes); anything else is an error.
func parseSFList(field string) ([]sfItem, error) {
	s := strings.Trim(field, " ")
	var out []sfItem
	for {
		it, rest, err := parseSFItem(s)
		if err != nil {
			return nil, err
		}
		out = append(out, it)
		rest = strings.TrimLeft(rest, " \t")
		if rest == "" {
			return out, nil
		}
		if rest[0] != ',' {
			return nil, errors.New("want ',' between members, got " + strconv.Quote(rest))
		}
		if s = strings.TrimLeft(rest[1:], " \t"); s == "" {
			return nil, errors.New("trailing comma")
		}
	}
}

func parseSFItem(s string) (sfItem, string, error) {
	it := sfItem{params: map[string]int64{}}
	if s == "" || s[0] != '"' {
		return it, "", errors.New("item value is not a String: " + strconv.Quote(s))
	}
	var b strings.Builder
	i := 1
	for ; ; i++ {
		if i >= len(s) {
			return it, "", errors.New("unterminated String")
		}
		c := s[i]
		if c == '"' {
			break
		}
		if c == '\\' {
			if i+1 >= len(s) || (s[i+1] != '"' && s[i+1] != '\\') {
				return it, "", errors.New("bad escape in String")
			}
			i++
			c = s[i]
		} else if c < 0x20 || c > 0x7e {
			return it, "", errors.New("bad character in String")
		}
		b.WriteByte(c)
	}
	it.value, s = b.String(), s[i+1:]
	for strings.HasPrefix(s, ";") {
		s = strings.TrimLeft(s[1:], " ")
		j := 0
		for j < len(s) && (s[j] >= 'a' && s[j] <= 'z' || j > 0 && (s[j] >= '0' && s[j] <= '9' || strings.IndexByte("_-.*", s[j]) >= 0) || s[j] == '*') {
			j++
		}
		if j == 0 {
			return it, "", errors.New("bad parameter key in " + strconv.Quote(s))
		}
		key := s[:j]
		if _, dup := it.params[key]; dup {
			return it, "", errors.New("duplicate parameter " + key)
		}
		s = s[j:]
		v := int64(1) // a bare key is Boolean true
		if strings.HasPrefix(s, "=") {
			k := 1
			if k < len(s) && s[k] == '-' {
				k++
			}
			for k < len(s) && s[k] >= '0' && s[k] <= '9' {
				k++
			}
			n, err := strconv.ParseInt(s[1:k], 10, 64)
			if err != nil || k-1 > 15+strings.Count(s[1:k], "-") {
				return it, "", errors.New("parameter " + key + " is not an Integer: " + strconv.Quote(s))
			}
			v, s = n, s[k:]
		}
		it.keys = append(it.keys, key)
		it.params[key] = v
	}
	return it, s, nil
}

func TestParseSFList(t *testing.T) {
	t.Parallel()
	good := map[string]string{
		`"default";q=100;w=2`:                 "default q=100 w=2",
		` "burst";q=100;w=60, "daily";q=1000`: "burst q=100 w=60|daily q=1000",
		`"a\"b";r=0;t=5`:                      `a"b r=0 t=5`,
		`"x"; r=-1;flag`:                      "x r=-1 flag=1",
	}
	for in, want := range good {
		items, err := parseSFList(in)
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		var parts []string
		for _, it := range items {
			p := it.value
			for _, k := range it.keys {
				p += " " + k + "=" + strconv.FormatInt(it.params[k], 10)
			}
			parts = append(parts, p)
		}
		if got := strings.Join(parts, "|"); got != want {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
	for _, bad := range []string{``, `default;q=1`, `"default";q=1.5`, `"default";Q=1`, `"default";q=1;q=2`,
		`"default",`, `"default";q=1x`, `"unterminated`, `"default";q=1234567890123456`} {
		if _, err := parseSFList(bad); err == nil {
			t.Errorf("%s: parsed, want an error", bad)
		}
	}
}

// rateLimitHeaders parses an answer's RateLimit-Policy and RateLimit and
// checks their shape: one item each, the String "default", parameters q
// and w, r and t, exactly.
func rateLimitHeaders(t *testing.T, what string, r response) (policy, limit map[string]int64) {
	t.Helper()
	get := func(name string, keys ...string) map[string]int64 {
		values := r.Header.Values(name)
		if len(values) != 1 {
			t.Fatalf("%s: %d %s field lines %q, want 1", what, len(values), name, values)
		}
		items, err := parseSFList(values[0])
		if err != nil {
			t.Fatalf("%s: %s %q: %v", what, name, values[0], err)
		}
		if len(items) != 1 || items[0].value != "default" || strings.Join(items[0].keys, ";") != strings.Join(keys, ";") {
			t.Fatalf("%s: %s %q, want the one policy \"default\" with parameters %v", what, name, values[0], keys)
		}
		return items[0].params
	}
	return get("RateLimit-Policy", "q", "w"), get("RateLimit", "r", "t")
}

// TestRateLimitHeadersOverHTTP follows one key through a burst of five at
// one request per 100 s (so no token comes back during the test): every
// answer after authentication, whatever its status, states the policy and
// what is left, r falling by one per request; the sixth is 429 with r=0
// and t equal to Retry-After. Strangers' 401s carry neither header.
func TestRateLimitHeadersOverHTTP(t *testing.T) {
	t.Parallel()
	modelstest.ForEach(t, func(t *testing.T, s *models.Store) {
		o := newObserved(t, s, server.Deps{Config: config.Config{RateLimitRPS: 0.01, RateLimitBurst: 5}})
		key, other := o.keys[0], o.keys[1]

		for _, k := range []string{"", "pst_aaaaaaaa_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"} {
			r := o.do("GET", "/v1/pets", k, "")
			wantError(t, r, http.StatusUnauthorized, models.CodeUnauthorized)
			if r.Header.Get("RateLimit") != "" || r.Header.Get("RateLimit-Policy") != "" {
				t.Errorf("401 with rate-limit headers: %q, %q", r.Header.Get("RateLimit-Policy"), r.Header.Get("RateLimit"))
			}
		}

		requests := []struct {
			method, path, body string
			status             int
		}{
			{"GET", "/v1/pets", "", http.StatusOK},
			{"POST", "/v1/pets", `{"name":"Rex","categoryId":1}`, http.StatusCreated},
			{"GET", "/v1/pets?limit=abc", "", http.StatusBadRequest},
			{"GET", "/v1/pets/987654", "", http.StatusNotFound},
			{"GET", "/v1/no-such-path", "", http.StatusNotFound},
		}
		for i, rq := range requests {
			what := rq.method + " " + rq.path
			r := o.do(rq.method, rq.path, key, rq.body)
			if r.Status != rq.status {
				t.Fatalf("%s: status %d, want %d; body %s", what, r.Status, rq.status, r.Body)
			}
			policy, limit := rateLimitHeaders(t, what, r)
			if policy["q"] != 5 || policy["w"] != 500 {
				t.Errorf("%s: policy %v, want q=5 (the burst) w=500 (5 tokens at 0.01/s)", what, policy)
			}
			if want := int64(len(requests) - 1 - i); limit["r"] != want {
				t.Errorf("%s: r=%d, want %d", what, limit["r"], want)
			}
			if limit["t"] < 1 || limit["t"] > 100 {
				t.Errorf("%s: t=%d, want 1..100 (a token every 100 s)", what, limit["t"])
			}
		}

		r := o.do("GET", "/v1/pets", key, "")
		wantError(t, r, http.StatusTooManyRequests, models.CodeRateLimited)
		_, limit := rateLimitHeaders(t, "429", r)
		retry, err := strconv.ParseInt(r.Header.Get("Retry-After"), 10, 64)
		if err != nil || limit["r"] != 0 || limit["t"] != retry || retry < 1 || retry > 100 {
			t.Errorf("429: r=%d t=%d, Retry-After %q; want r=0 and t = Retry-After in 1..100", limit["r"], limit["t"], r.Header.Get("Retry-After"))
		}

		// The count is the key's own.
		r = o.do("GET", "/v1/pets", other, "")
		if _, limit := rateLimitHeaders(t, "another key", r); r.Status != http.StatusOK || limit["r"] != 4 {
			t.Errorf("another key: status %d, r=%d; want 200 and r=4", r.Status, limit["r"])
		}
	})
}
