package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"petstore/models"
)

// Event is the API's shape of a change feed event; the handler writes it
// by hand (appendEvent), tests decode it.
type Event struct {
	ID         string    `json:"id"`
	Type       string    `json:"type"`
	OccurredAt time.Time `json:"occurredAt"`
	Pet        Pet       `json:"pet"`
	Changed    []string  `json:"changed,omitempty"`
}

// listEvents answers GET /v1/events: the events after the cursor, oldest
// first, waiting up to wait seconds for one when there is none. Every 200
// links to where the reader resumes, an empty page too.
func (a *API) listEvents(c *gin.Context) {
	params, err := models.ParseQueryString(c.Request.URL.RawQuery)
	if err != nil {
		writeError(c, a.log, err)
		return
	}
	q, err := models.ParseEventQuery(params)
	if err != nil {
		writeError(c, a.log, err)
		return
	}
	page, err := a.store.WaitEvents(c.Request.Context(), q.After, q.Limit, q.Wait)
	if err != nil {
		writeError(c, a.log, err)
		return
	}
	bp := bodyPool.Get().(*[]byte)
	b := append((*bp)[:0], '[')
	for i := range page.Events {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendEvent(b, &page.Events[i])
	}
	c.Header("Link", a.eventsLink(q, page.Next))
	b = append(b, ']', '\n')
	writeBody(c, http.StatusOK, b)
	putBody(bp, b)
}

// eventsLink is the Link to the page after the cursor next, with the
// request's limit and wait.
func (a *API) eventsLink(q models.EventQuery, next int64) string {
	b := make([]byte, 0, 96)
	b = append(b, '<')
	b = append(b, a.publicURL...)
	b = append(b, Prefix+"/events?after="...)
	b = append(b, models.FormatEventID(next)...)
	b = append(b, "&limit="...)
	b = strconv.AppendInt(b, int64(q.Limit), 10)
	if q.WaitGiven {
		b = append(b, "&wait="...)
		b = strconv.AppendInt(b, int64(q.Wait/time.Second), 10)
	}
	b = append(b, `>; rel="next"`...)
	return string(b)
}

// appendEvent appends e as encoding/json writes Event.
func appendEvent(b []byte, e *models.Event) []byte {
	b = append(b, `{"id":"`...)
	b = append(b, models.FormatEventID(e.ID)...)
	b = append(b, `","type":`...)
	b = appendJSONString(b, string(e.Type))
	b = append(b, `,"occurredAt":"`...)
	b = e.OccurredAt.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","pet":`...)
	p := &e.Pet
	b = appendPet(b, p.ID, p.Name, p.CategoryID, p.Status)
	if len(e.Changed) > 0 {
		b = append(b, `,"changed":[`...)
		for i, f := range e.Changed {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, f)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// EventJSON is e exactly as GET /v1/events writes it in its page: the body
// of a webhook's delivery.
func EventJSON(e models.Event) []byte { return appendEvent(nil, &e) }
