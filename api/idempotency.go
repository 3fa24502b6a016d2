package api

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"petstore/models"
)

// Idempotency-Key on POST /v1/pets (the IETF httpapi draft "The
// Idempotency-Key HTTP Header Field", with Stripe's semantics): a client
// that sends a key may repeat its create safely, and gets the first answer
// again, marked Idempotent-Replayed: true. The store keeps the keys
// (models/idempotency.go); this file reads the header and answers.

// maxIdempotencyKey is the longest key, in characters.
const maxIdempotencyKey = 255

// errBadIdempotencyKey refuses a malformed key or several key headers. It
// names the header in details, as every 400 about a named parameter does.
var errBadIdempotencyKey = &models.Error{Code: models.CodeInvalidRequest,
	Message: badIdempotencyKey, Fields: []models.FieldError{{Field: "Idempotency-Key", Message: badIdempotencyKey}}}

const badIdempotencyKey = `Idempotency-Key must be one header of 1 to 255 printable ASCII characters, sent bare (Idempotency-Key: 8e03978e) or as a quoted string (Idempotency-Key: "8e03978e").`

// idempotencyKey returns the request's Idempotency-Key, or "" when it has
// none. The draft makes the value a structured-field String ("abc"); most
// clients send it bare (abc); both are read, as the same key.
func idempotencyKey(h http.Header) (string, error) {
	vs := h["Idempotency-Key"] // net/http's canonical form of the name
	if len(vs) == 0 {
		return "", nil
	}
	if len(vs) > 1 {
		return "", errBadIdempotencyKey
	}
	key, ok := parseIdempotencyKey(vs[0])
	if !ok {
		return "", errBadIdempotencyKey
	}
	return key, nil
}

// parseIdempotencyKey reads a key: an RFC 9651 String (its parameters, if
// any, ignored) when it starts with a double quote, else the bare value.
// Either way it must hold 1 to 255 characters from space to tilde, and a
// bare value no space at either end.
func parseIdempotencyKey(v string) (string, bool) {
	if strings.HasPrefix(v, `"`) {
		return parseSFString(v)
	}
	if v == "" || len(v) > maxIdempotencyKey || v[0] == ' ' || v[len(v)-1] == ' ' {
		return "", false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return "", false
		}
	}
	return v, true
}

// parseSFString reads v as an RFC 9651 sf-string: DQUOTE, characters from
// space to tilde with \" and \\ as the only escapes, DQUOTE; then nothing,
// or parameters (";..."), which are ignored.
func parseSFString(v string) (string, bool) {
	var b strings.Builder
	for i := 1; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\':
			if i++; i == len(v) || (v[i] != '"' && v[i] != '\\') {
				return "", false
			}
			b.WriteByte(v[i])
		case c == '"':
			if rest := v[i+1:]; rest != "" && rest[0] != ';' {
				return "", false
			}
			return b.String(), b.Len() > 0
		case c < 0x20 || c > 0x7e:
			return "", false
		default:
			b.WriteByte(c)
		}
		if b.Len() > maxIdempotencyKey {
			return "", false
		}
	}
	return "", false // no closing quote
}

// createPetOnce ends createPet for a request with an Idempotency-Key: the
// first request with the key creates and its answer is remembered; a
// repeat gets that answer again; the key with another request is 422, a
// repeat while the first still runs 409. A create that fails gives the key
// back, so that its retry can succeed.
func (a *API) createPetOnce(c *gin.Context, key string, np models.NewPet) {
	ctx := c.Request.Context()
	claim, stored, err := a.store.ClaimIdempotencyKey(ctx, callerKeyID(c), key, createFingerprint(np))
	if err != nil {
		noteCreate(c, err)
		a.writeIdempotencyError(c, err)
		return
	}
	if stored != nil {
		c.Header("Idempotent-Replayed", "true")
		writeStored(c, *stored)
		return
	}
	p, err := a.store.CreatePetOnce(ctx, np, actor(c), claim, createdAnswer)
	noteCreate(c, err)
	if err != nil {
		a.store.ReleaseIdempotencyKey(claim)
		a.writeIdempotencyError(c, err)
		return
	}
	writeStored(c, createdAnswer(p))
}

// createFingerprint is what identifies a create for its key: the validated
// pet (name trimmed, status defaulted), so that a retry matches however
// the client spaced its JSON; fields the API ignores do not count.
func createFingerprint(np models.NewPet) []byte {
	b := make([]byte, 0, 64+len(np.Name))
	b = append(b, "POST "+Prefix+"/pets\n"...)
	b = appendJSONString(b, np.Name)
	b = append(b, '\n')
	b = strconv.AppendInt(b, np.CategoryID, 10)
	b = append(b, '\n')
	return append(b, np.Status...)
}

// createdAnswer is the 201 answer to a create, as sent and remembered.
func createdAnswer(p models.Pet) models.StoredResponse {
	body := appendPet(make([]byte, 0, 64+len(p.Name)), p.ID, p.Name, p.CategoryID, p.Status)
	return models.StoredResponse{Status: http.StatusCreated, Body: append(body, '\n'),
		Location: Prefix + "/pets/" + strconv.FormatInt(p.ID, 10)}
}

// writeStored writes an answer that is remembered for a key.
func writeStored(c *gin.Context, r models.StoredResponse) {
	if r.Location != "" {
		c.Header("Location", r.Location)
	}
	c.Data(r.Status, "application/json", r.Body)
}

// writeIdempotencyError is writeError with Retry-After on a key in use.
func (a *API) writeIdempotencyError(c *gin.Context, err error) {
	if models.ErrorCode(err) == models.CodeIdempotencyKeyInUse {
		c.Header("Retry-After", "1")
	}
	writeError(c, a.log, err)
}

// callerKeyID is the id of the API key that authenticated the request.
func callerKeyID(c *gin.Context) int64 {
	v, _ := c.Get(keyContext)
	k, _ := v.(models.APIKey)
	return k.ID
}
