package api

import (
	"net/http"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"petstore/models"
)

// The pet bodies are the API's hot path: they are written by hand into
// pooled buffers, byte for byte as encoding/json writes them (HTML
// characters unescaped, as writeJSON does). petencode_test.go holds the two to
// the same output.

var bodyPool = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

// maxPooledBody is the largest buffer returned to the pool; a rare big body
// is left to the collector.
const maxPooledBody = 64 << 10

// sendBody answers status with the JSON body b, a newline added, built in
// the pooled buffer bp, and returns the buffer to the pool. A GET's (or
// HEAD's) 200 carries an ETag and may be answered 304 instead
// (conditional).
func sendBody(c *gin.Context, status int, bp *[]byte, b []byte) {
	b = append(b, '\n')
	if status != http.StatusOK || (c.Request.Method != http.MethodGet && c.Request.Method != http.MethodHead) || !conditional(c, b) {
		writeBody(c, status, b)
	}
	putBody(bp, b)
}

// putBody returns b, grown from the pooled *bp, to the pool.
func putBody(bp *[]byte, b []byte) {
	if cap(b) <= maxPooledBody {
		*bp = b
		bodyPool.Put(bp)
	}
}

// jsonContentType is the Content-Type of every pet body, shared (header
// values are replaced, never written in place).
var jsonContentType = []string{"application/json"}

// chunkingSize is net/http's bufferBeforeChunkingSize: a body larger than
// this, written at once, goes out chunked unless its length is stated.
const chunkingSize = 2048

// writeBody writes a JSON body. It states Content-Length only where
// net/http would not (a body over chunkingSize), not always as gin's c.Data
// does: that ninth entry would take a page's header map over the eight a
// small Go map holds, and it and net/http's copy of it at WriteHeader would
// be built as hash tables on every page.
func writeBody(c *gin.Context, status int, b []byte) {
	h := c.Writer.Header()
	h["Content-Type"] = jsonContentType
	if len(b) > chunkingSize {
		h["Content-Length"] = []string{strconv.Itoa(len(b))}
	}
	c.Status(status)
	c.Writer.Write(b)
}

// writePet answers status with p as one Pet.
func writePet(c *gin.Context, status int, p models.Pet) {
	bp := bodyPool.Get().(*[]byte)
	sendBody(c, status, bp, appendPet((*bp)[:0], p.ID, p.Name, p.CategoryID, p.Status))
}

// appendPet appends a pet as encoding/json writes it as the Pet type; its
// name may be a string or the driver's bytes (a page's rows).
func appendPet[S string | []byte](b []byte, id int64, name S, categoryID int64, status models.Status) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"name":`...)
	b = appendJSONString(b, name)
	b = append(b, `,"categoryId":`...)
	b = strconv.AppendInt(b, categoryID, 10)
	b = append(b, `,"status":`...)
	b = appendJSONString(b, string(status))
	return append(b, '}')
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string exactly as encoding/json
// does with HTML escaping off: quotes, backslashes and control characters
// escaped, invalid UTF-8 as U+FFFD, U+2028 and U+2029 escaped.
func appendJSONString[S string | []byte](b []byte, s S) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := decodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// decodeRune is utf8.DecodeRuneInString or utf8.DecodeRune, as s is.
func decodeRune[S string | []byte](s S) (rune, int) {
	if b, ok := any(s).([]byte); ok {
		return utf8.DecodeRune(b)
	}
	return utf8.DecodeRuneInString(string(s))
}
