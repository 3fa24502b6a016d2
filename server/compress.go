package server

import (
	"bufio"
	"net"
	"net/http"
	"strings"

	"github.com/klauspost/compress/gzhttp"
)

// minCompressed is the smallest answer compressed: below it, a packet or
// two either way.
const minCompressed = 1024

// compressed wraps h so that an answer of minCompressed (1 KiB) or more to
// a GET that accepts zstd or gzip goes out compressed (zstd when both are
// accepted alike): the API's JSON, the console's pages and CSV, /docs and
// anything else. The static files come compressed already (static.Handler
// sets Content-Encoding, which the wrapper leaves alone).
//
// What goes out as it is:
//   - a request with no Accept-Encoding, such as the API's load: it meets h
//     directly, with no writer of the wrapper's and no header added, so it
//     costs nothing (docs/performance.md has the benchmark);
//   - HEAD, which has no body to compress;
//   - an answer to anything but GET. Every secret the console shows once
//     (a new API key, a new or rotated webhook signing secret, a one-time
//     password) is in the answer to the POST that made it, next to text
//     the requester typed: left uncompressed, its length cannot leak it
//     (BREACH). The CSRF token on every page is masked afresh in each
//     answer instead (web), so GET pages are compressed.
func compressed(h http.Handler) (http.Handler, error) {
	wrap, err := gzhttp.NewWrapper(gzhttp.MinSize(minCompressed))
	if err != nil {
		return nil, err
	}
	z := wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&heldFlusher{ResponseWriter: w}, r)
	}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || len(r.Header["Accept-Encoding"]) == 0 {
			h.ServeHTTP(w, r)
			return
		}
		z.ServeHTTP(&weakTagWriter{ResponseWriter: w}, r)
	}), nil
}

// weakTagWriter sits under the compressing writer and makes the ETag of
// every answer to a request that accepts compression weak, as nginx does
// for what it compresses: compressed bytes are not the bytes a strong tag
// names. Every such answer, not only the compressed ones, so that a 304
// carries the tag its 200 did, whatever that one's size; a revalidation
// with the weak tag still matches (If-None-Match compares weakly, in the
// API and in http.ServeContent alike). A request without Accept-Encoding
// keeps the strong tag. It also drops what the compressing writer would
// write after a handler hijacked the connection (the CSV export's abort),
// which net/http would log.
type weakTagWriter struct {
	http.ResponseWriter
	done     bool // the header went out
	hijacked bool
}

func (w *weakTagWriter) weaken() {
	if w.done {
		return
	}
	w.done = true
	h := w.ResponseWriter.Header()
	if tag := h.Get("Etag"); tag != "" && !strings.HasPrefix(tag, "W/") {
		h.Set("Etag", "W/"+tag)
	}
}

func (w *weakTagWriter) WriteHeader(status int) {
	if status >= 200 {
		w.weaken()
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *weakTagWriter) Write(b []byte) (int, error) {
	if w.hijacked {
		return 0, http.ErrHijacked
	}
	w.weaken()
	return w.ResponseWriter.Write(b)
}

// Hijack hands over the connection; nothing is written after it.
func (w *weakTagWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil {
		w.hijacked = true
	}
	return conn, rw, err
}

// Unwrap lets http.ResponseController reach net/http's writer (flushes,
// write deadlines).
func (w *weakTagWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// heldFlusher sits between the handler and the compressing writer and
// holds a flush back until minCompressed bytes were written. templ flushes
// at the end of every render; a flush makes the compressing writer decide
// at once, and with less than minCompressed bytes it would compress a
// small page or fragment that should go out plain. A held flush costs
// nothing: the answer goes out when the handler returns. Streams (the CSV
// export) flush chunks larger than that.
type heldFlusher struct {
	http.ResponseWriter
	n int // bytes written
}

func (w *heldFlusher) Write(b []byte) (int, error) {
	n, err := w.ResponseWriter.Write(b)
	w.n += n
	return n, err
}

// FlushError flushes through the compressing writer once minCompressed
// bytes were written; before that it does nothing.
func (w *heldFlusher) FlushError() error {
	if w.n < minCompressed {
		return nil
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *heldFlusher) Flush() { _ = w.FlushError() }

// Unwrap lets http.ResponseController reach the writers under it (write
// deadlines, the export's hijack).
func (w *heldFlusher) Unwrap() http.ResponseWriter { return w.ResponseWriter }
