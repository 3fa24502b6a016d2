package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// healthz says the process is alive; it touches nothing else.
func (a *API) healthz(c *gin.Context) {
	c.Header("Cache-Control", "no-store")
	writeJSON(c, http.StatusOK, gin.H{"status": "ok"})
}

// readyz says whether the database answers, so a load balancer only sends
// traffic to instances that can serve it.
func (a *API) readyz(c *gin.Context) {
	c.Header("Cache-Control", "no-store")
	ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
	defer cancel()
	if err := a.store.Ping(ctx); err != nil {
		writeError(c, a.log, err)
		return
	}
	writeJSON(c, http.StatusOK, gin.H{"status": "ready"})
}
