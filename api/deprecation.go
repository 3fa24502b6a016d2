package api

import (
	"github.com/gin-gonic/gin"

	"petstore/models"
)

// countDeprecatedCall counts each call of the deprecated getPet by the API
// key that made it, so that staff can tell which partners still call it
// before its sunset: the petstore_deprecated_calls_total metric, by key
// prefix, and the key's "last deprecated call" time, written at most once
// a minute (models.Store.NoteDeprecatedCall). It runs after the rest of the
// chain and counts every call made with a valid key, whatever its answer (a
// refusal for scope or rate included); a call without one is not counted.
func (a *API) countDeprecatedCall(c *gin.Context) {
	c.Next()
	v, ok := c.Get(keyContext)
	if !ok {
		return
	}
	k := v.(models.APIKey)
	a.metrics.countDeprecatedCall(k.Prefix)
	a.store.NoteDeprecatedCall(c.Request.Context(), k)
}
