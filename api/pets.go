package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"petstore/httpcode"
	"petstore/models"
)

// MaxBodyBytes caps a request body.
const MaxBodyBytes = 1 << 20

// The getPet deprecation (RFC 9745) and sunset (RFC 8594).
var (
	// DeprecatedAt is when getPet was declared deprecated: the release of
	// API 1.0.0 by this service.
	DeprecatedAt = time.Date(2026, time.November, 21, 0, 0, 0, 0, time.UTC)
	// SunsetAt is when getPet stops answering (410 Gone from then on).
	SunsetAt = time.Date(2030, time.December, 5, 0, 0, 0, 0, time.UTC)
)

// Pet is the API's shape of an animal ("Pet" in the specification). The
// handlers write it by hand from models.Pet (petencode.go); tests decode it.
type Pet struct {
	ID         int64         `json:"id"`
	Name       string        `json:"name"`
	CategoryID int64         `json:"categoryId"`
	Status     models.Status `json:"status"`
}

// listPets answers GET /v1/pets: one page in id order, with a Link to the
// next page when there is one.
func (a *API) listPets(c *gin.Context) {
	params, err := models.ParseQueryString(c.Request.URL.RawQuery)
	if err != nil {
		writeError(c, a.log, err)
		return
	}
	q, err := models.ParsePetQuery(params)
	if err != nil {
		writeError(c, a.log, err)
		return
	}
	q.AllowStale = true // a read replica may answer, when there are some
	// The page is encoded as it is read, each pet from the driver's row.
	bp := bodyPool.Get().(*[]byte)
	b := append((*bp)[:0], '[')
	n, last := 0, int64(0)
	more, err := a.store.EachPetAPI(c.Request.Context(), q, func(p models.PetRow) {
		if n > 0 {
			b = append(b, ',')
		}
		b = appendPet(b, p.ID, p.Name, p.CategoryID, p.Status)
		n, last = n+1, p.ID
	})
	if err != nil {
		putBody(bp, b)
		writeError(c, a.log, err)
		return
	}
	if more {
		c.Header("Link", a.nextLink(q, last))
	}
	sendBody(c, http.StatusOK, bp, append(b, ']'))
}

// nextLink is the Link header to the page after the pet lastID, with the
// query's limit and status, its parameters in the order url.Values.Encode
// gives them (the values need no escaping).
func (a *API) nextLink(q models.PetQuery, lastID int64) string {
	b := make([]byte, 0, 96)
	b = append(b, '<')
	b = append(b, a.publicURL...)
	b = append(b, Prefix+"/pets?after="...)
	b = strconv.AppendInt(b, lastID, 10)
	b = append(b, "&limit="...)
	b = strconv.AppendInt(b, int64(q.Limit), 10)
	if q.Status != "" {
		b = append(b, "&status="...)
		b = append(b, q.Status...)
	}
	b = append(b, `>; rel="next"`...)
	return string(b)
}

// createPet answers POST /v1/pets; with an Idempotency-Key, createPetOnce
// creates (a request without one claims and stores no idempotency record).
func (a *API) createPet(c *gin.Context) {
	if err := models.RefuseQuery(c.Request.URL.RawQuery); err != nil {
		writeError(c, a.log, err)
		return
	}
	key, err := idempotencyKey(c.Request.Header)
	if err != nil {
		writeError(c, a.log, err)
		return
	}
	body, err := readJSONBody(c)
	if err != nil {
		writeError(c, a.log, err)
		return
	}
	in, err := decodePetInput(body)
	if err != nil {
		writeError(c, a.log, err)
		return
	}
	np, err := in.Validate()
	if err != nil {
		writeError(c, a.log, err)
		return
	}
	if key != "" {
		a.createPetOnce(c, key, np)
		return
	}
	p, err := a.store.CreatePet(c.Request.Context(), np, actor(c))
	noteCreate(c, err)
	if err != nil {
		writeError(c, a.log, err)
		return
	}
	c.Header("Location", Prefix+"/pets/"+strconv.FormatInt(p.ID, 10))
	writePet(c, http.StatusCreated, p)
}

// noteCreate records, for the log line of a create whose client hung up,
// whether its pet was written: err nil means committed, even when the
// client was gone by then (models.Store.CreatePet); CodeCanceled means it
// never was. Another error leaves the outcome unsaid: it is a 5xx, logged
// as one.
func noteCreate(c *gin.Context, err error) {
	switch {
	case err == nil:
		noteWrite(c, true)
	case models.ErrorCode(err) == models.CodeCanceled:
		noteWrite(c, false)
	}
}

// deprecated marks every getPet response as deprecated, with its sunset
// date and successor.
func (a *API) deprecated(c *gin.Context) {
	h := c.Writer.Header()
	h.Set("Deprecation", "@"+strconv.FormatInt(DeprecatedAt.Unix(), 10))
	h.Set("Sunset", SunsetAt.Format(http.TimeFormat))
	h.Set("Link", "<"+Prefix+`/pets>; rel="successor-version"`)
	c.Next()
}

// getPet answers GET /v1/pets/{petId} until the sunset date, then 410.
func (a *API) getPet(c *gin.Context) {
	if !a.now().Before(SunsetAt) {
		writeError(c, a.log, &models.Error{Code: httpcode.Gone,
			Message: "GET /v1/pets/{petId} was removed on 5 December 2030; use GET /v1/pets with the status filter."})
		return
	}
	if err := models.RefuseQuery(c.Request.URL.RawQuery); err != nil {
		writeError(c, a.log, err)
		return
	}
	id, err := models.ParsePetID(c.Param("petId"))
	if err != nil {
		writeError(c, a.log, err)
		return
	}
	p, err := a.store.GetPet(c.Request.Context(), id)
	if err != nil {
		writeError(c, a.log, err)
		return
	}
	writePet(c, http.StatusOK, p)
}

// readJSONBody checks the media type and reads at most MaxBodyBytes of
// UTF-8 text.
func readJSONBody(c *gin.Context) ([]byte, error) {
	mt, _, err := mime.ParseMediaType(c.GetHeader("Content-Type"))
	if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return nil, &models.Error{Code: httpcode.UnsupportedMediaType, Message: "The body must be JSON: send Content-Type: application/json."}
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, MaxBodyBytes))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, &models.Error{Code: httpcode.PayloadTooLarge, Message: "The body is larger than 1 MiB."}
	}
	if err != nil {
		return nil, &models.Error{Code: models.CodeInvalidRequest, Message: "The body could not be read.", Err: err}
	}
	if !utf8.Valid(body) {
		return nil, &models.Error{Code: models.CodeInvalidRequest, Message: "The body is not valid UTF-8."}
	}
	return body, nil
}

// decodePetInput reads a NewPet JSON object into a PetInput, noting values
// of the wrong JSON type; the value rules are PetInput.Validate's. Unknown
// fields, and a client-sent id, are ignored.
func decodePetInput(body []byte) (models.PetInput, error) {
	f, err := readPetFields(body)
	if err != nil {
		return models.PetInput{}, err
	}
	var in models.PetInput
	bad := func(field, msg string) {
		in.Invalid = append(in.Invalid, models.FieldError{Field: field, Message: msg})
	}
	if f.name != nil {
		if !jsonString(f.name, &in.Name) {
			bad(models.FieldName, "Name must be a string.")
		}
	}
	if raw := f.categoryID; raw != nil {
		// The body is valid JSON, so a value starting with a digit or a
		// minus sign is a number; its literal text goes to validation.
		// (json.Number would also accept a quoted number.)
		if raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9') {
			in.CategoryID = string(raw)
		} else {
			bad(models.FieldCategoryID, "Category ID must be a JSON number: a whole number from 1 to 9223372036854775807.")
		}
	}
	if f.status != nil {
		var s string
		if !jsonString(f.status, &s) {
			bad(models.FieldStatus, models.StatusMessage)
		} else {
			in.Status = &s
		}
	}
	return in, nil
}

// jsonString reads a JSON string value: without escapes it is the text
// between the quotes (the body is valid UTF-8), else encoding/json's.
func jsonString(raw []byte, s *string) bool {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		*s = string(raw[1 : len(raw)-1])
		return true
	}
	return json.Unmarshal(raw, s) == nil
}
