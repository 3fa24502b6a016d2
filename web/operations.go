package web

import (
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"petstore/models"
	"petstore/templates"
)

func (ui *Web) registerOperations(r gin.IRouter) {
	r.GET("/operations", ui.showOperations)
}

// showOperations shows the state of the scheduled backups, with a warning
// when the last one failed or the newest good one is too old.
func (ui *Web) showOperations(c *gin.Context) {
	ctx := c.Request.Context()
	st, err := ui.store.BackupStatus(ctx)
	if err != nil {
		ui.fail(c, err)
		return
	}
	version, err := ui.store.SchemaVersion(ctx)
	if err != nil {
		ui.fail(c, err)
		return
	}
	v := templates.OperationsView{SchemaVersion: version, Scheduled: st.Latest != nil}
	v.Last, v.Warning = ui.backupView(st.LastSuccess), backupWarning(st, ui.now())
	if st.Latest != nil && st.Latest.Interval > 0 {
		v.Interval = st.Latest.Interval.String()
	}
	ui.render(c, http.StatusOK, templates.OperationsPage(ui.page(c, "Operations", "operations"), v))
}

func (ui *Web) backupView(r *models.BackupRun) *templates.BackupView {
	if r == nil || r.FinishedAt == nil {
		return nil
	}
	at := r.FinishedAt.In(ui.location)
	return &templates.BackupView{When: at.Format("2006-01-02 15:04:05 MST"), Age: age(ui.now().Sub(*r.FinishedAt)), Size: byteSize(r.Size),
		File: r.File, Instance: r.Instance, Version: r.PetstoreVersion, SchemaVersion: r.SchemaVersion}
}

// backupWarning says what an operator must look at: the last scheduled
// backup failed, or the newest good one is older than twice the interval
// (the schedule stopped, or every instance is down).
func backupWarning(st models.BackupStatus, now time.Time) string {
	if st.Latest == nil {
		return ""
	}
	if l := st.Latest; l.FinishedAt != nil && l.Error != "" {
		return fmt.Sprintf("The last scheduled backup (started %s UTC) failed: %s", l.StartedAt.Format("2006-01-02 15:04"), l.Error)
	}
	if st.LastSuccess == nil {
		return "No scheduled backup has succeeded yet."
	}
	interval := st.Latest.Interval
	if old := now.Sub(*st.LastSuccess.FinishedAt); interval > 0 && old > 2*interval {
		return fmt.Sprintf("The newest backup is %s old, more than twice the interval (%s): check that the service is taking them.", age(old), interval)
	}
	return ""
}

// age says how long ago, roughly.
func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "less than a minute"
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%.1f h", d.Hours())
	default:
		return fmt.Sprintf("%d days", int(d.Hours()/24))
	}
}

// byteSize writes a size in bytes for people.
func byteSize(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	default:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	}
}
