// Package web serves the admin console under /admin: server-rendered templ
// pages, enhanced with htmx and working without JavaScript, behind staff
// sign-in with database-backed sessions and CSRF protection.
package web

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/gin-contrib/sessions"
	"github.com/gin-gonic/gin"

	"petstore/httpcode"
	"petstore/models"
	"petstore/static"
	"petstore/templates"
)

// Options configures the console.
type Options struct {
	// PublicURL is the external base URL; an https URL makes cookies Secure.
	PublicURL string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives server errors; nil discards them.
	Logger *slog.Logger
	// IdleTimeout ends a session unused this long (default 2 h);
	// AbsoluteTimeout ends any session this long after sign-in (default 12 h).
	IdleTimeout, AbsoluteTimeout time.Duration
	// WebhookAllowPrivate lets admins add webhook endpoints on loopback,
	// private and other addresses of the server's own network
	// (WEBHOOK_ALLOW_PRIVATE), as the dispatcher then delivers to them.
	WebhookAllowPrivate bool
	// Location is the store's time zone (PETSTORE_TIMEZONE): the console
	// shows times in it and reads typed dates in it. nil is UTC.
	Location *time.Location
	// OpenAPI is the API's OpenAPI document, whose title and introduction
	// /docs shows itself; nil shows only Swagger UI's rendering.
	OpenAPI []byte
	// ArchiveRetention is how long the archive keeps a pet
	// (ARCHIVE_RETENTION), as the console tells staff; 0 is the default.
	ArchiveRetention time.Duration
	// UndoWindow is how long a member may undo a change (UNDO_WINDOW);
	// 0 means config.DefaultUndoWindow's 10 minutes.
	UndoWindow time.Duration
}

// Web holds the console handlers' dependencies.
type Web struct {
	store    *models.Store
	sessions *sessionStore
	cookie   string
	secure   bool
	assets   templates.Assets
	docs     templates.DocsView
	now      func() time.Time
	log      *slog.Logger
	idle     time.Duration
	absolute time.Duration
	origin   *http.CrossOriginProtection

	webhookAllowPrivate bool
	// location is the store's time zone (Options.Location).
	location *time.Location
	// publicURL is Options.PublicURL: the passkeys' relying party.
	publicURL string
	// archiveRetention is Options.ArchiveRetention.
	archiveRetention time.Duration
	// undoWindow is Options.UndoWindow.
	undoWindow time.Duration
}

// Prefix is the path every console page starts with.
const Prefix = "/admin"

// New returns the console over store. It reads (or on first use creates)
// the session keys shared by all instances.
func New(ctx context.Context, store *models.Store, o Options) (*Web, error) {
	hashKey, blockKey, err := store.SessionKeys(ctx)
	if err != nil {
		return nil, err
	}
	ui := &Web{
		store:    store,
		secure:   strings.HasPrefix(o.PublicURL, "https://"),
		now:      o.Now,
		log:      o.Logger,
		idle:     o.IdleTimeout,
		absolute: o.AbsoluteTimeout,
		origin:   http.NewCrossOriginProtection(),
		assets: templates.Assets{
			PicoCSS: static.Path("vendor/pico-2.1.1.min.css"),
			AppCSS:  static.Path("css/app.css"),
			HTMX:    static.Path("vendor/htmx-2.0.11.min.js"),
			AppJS:   static.Path("js/app.js"),
			// The passkey buttons' script, on the pages that have them.
			PasskeysJS: static.Path("js/passkeys.js"),
		},
		docs:                newDocsView(o.OpenAPI),
		webhookAllowPrivate: o.WebhookAllowPrivate,
		location:            o.Location,
		publicURL:           o.PublicURL,
		archiveRetention:    o.ArchiveRetention,
		undoWindow:          o.UndoWindow,
	}
	if ui.archiveRetention <= 0 {
		ui.archiveRetention = 720 * time.Hour
	}
	if ui.undoWindow <= 0 {
		ui.undoWindow = 10 * time.Minute
	}
	if ui.location == nil {
		ui.location = time.UTC
	}
	if ui.now == nil {
		ui.now = time.Now
	}
	if ui.log == nil {
		ui.log = slog.New(slog.DiscardHandler)
	}
	if ui.idle <= 0 {
		ui.idle = 2 * time.Hour
	}
	if ui.absolute <= 0 {
		ui.absolute = 12 * time.Hour
	}
	ui.cookie = "petstore_session"
	if ui.secure {
		// The __Host- prefix pins the cookie to this host, path / and https.
		ui.cookie = "__Host-petstore_session"
	}
	ui.sessions = newSessionStore(store, hashKey, blockKey, ui.idle, ui.absolute, ui.sessionOptions(int(ui.absolute.Seconds())), ui.log, ui.now)
	return ui, nil
}

// Register mounts the console, its static files, the API reference and the
// / redirect on r.
func (ui *Web) Register(r *gin.Engine) {
	r.GET("/", func(c *gin.Context) { c.Redirect(http.StatusFound, Prefix) })
	r.GET(DocsPath, ui.showDocs)
	r.GET(static.Prefix+"*file", gin.WrapH(static.Handler()))
	r.HEAD(static.Prefix+"*file", gin.WrapH(static.Handler()))

	admin := r.Group(Prefix, ui.pageHeaders, sessions.Sessions(ui.cookie, ui.sessions), ui.loadSession, ui.checkCSRF)
	admin.GET("/login", ui.showLogin)
	admin.POST("/login", ui.login)
	admin.GET("/login/code", ui.showSecondStep)
	admin.POST("/login/code", ui.secondStep)

	staff := admin.Group("", ui.requireStaff, ui.checkAccount, ui.authorize)
	staff.GET("", func(c *gin.Context) { c.Redirect(http.StatusFound, Prefix+"/pets") })
	staff.POST("/logout", ui.logout)
	ui.registerPets(staff)
	ui.registerArchive(staff)
	ui.registerExport(staff)
	ui.registerImport(staff)
	ui.registerAPIKeys(staff)
	ui.registerWebhooks(staff)
	ui.registerUsers(staff)
	ui.registerAudit(staff)
	ui.registerSessions(staff)
	ui.registerAccount(staff)
	ui.registerPasskeys(admin, staff)
	ui.registerOperations(staff)
	ui.registerUndo(staff)
}

// IsConsolePath reports whether a path belongs to the console or its
// pages (and so gets HTML errors).
func IsConsolePath(path string) bool {
	return path == Prefix || strings.HasPrefix(path, Prefix+"/") || path == "/" || strings.HasPrefix(path, static.Prefix) ||
		path == DocsPath
}

// contentSecurityPolicy allows only this origin's scripts and styles: no
// inline script or style, no framing, forms post only here. data: images are
// Pico's inline SVG icons.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"

// pageHeaders is the middleware that sets the security headers of every
// console response.
func (ui *Web) pageHeaders(c *gin.Context) {
	setPageHeaders(c)
	c.Next()
}

func setPageHeaders(c *gin.Context) {
	h := c.Writer.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	h.Set("Vary", "HX-Request")
}

// render writes a component as an HTML response.
func (ui *Web) render(c *gin.Context, status int, comp templ.Component) {
	c.Status(status)
	c.Header("Content-Type", "text/html; charset=utf-8")
	// A write to a client that hung up fails; the request log's 499 says so.
	if err := comp.Render(c.Request.Context(), c.Writer); err != nil && c.Request.Context().Err() == nil {
		ui.log.Error("render page", "path", c.Request.URL.Path, "error", err)
	}
}

// isHTMX reports a request made by htmx that wants a fragment (not a
// history restore, which needs the whole page).
func isHTMX(c *gin.Context) bool {
	return c.GetHeader("HX-Request") == "true" && c.GetHeader("HX-History-Restore-Request") != "true"
}

// refusal is a console refusal whose error page has a heading of its own
// (a page that does not exist, a form refused), rather than the status's
// name.
type refusal struct {
	heading string
	err     *models.Error
}

func (r *refusal) Error() string { return r.err.Error() }
func (r *refusal) Unwrap() error { return r.err }

// refuse returns a refusal with the code (its status from httpcode's
// table), the page's heading and its message.
func refuse(code models.Code, heading, message string) error {
	return &refusal{heading: heading, err: &models.Error{Code: code, Message: message}}
}

// fail answers with the HTML error page for err and aborts the chain: the
// status from httpcode's table, which the API's JSON errors share. Every
// console error page goes through it. Errors that are not *models.Error,
// or are internal, are logged and shown generically; a server error is
// logged at ERROR with its reason (httpcode.Reason). A request its client
// gave up (models.CodeCanceled) gets no page: only the request log's 499.
func (ui *Web) fail(c *gin.Context, err error) {
	var e *models.Error
	if !errors.As(err, &e) {
		e = &models.Error{Code: models.CodeInternal, Err: err}
	}
	status := httpcode.Status(e.Code)
	v := templates.ErrorView{Status: status, Heading: http.StatusText(status), Message: e.Message}
	if r := (*refusal)(nil); errors.As(err, &r) {
		v.Heading = r.heading
	}
	switch {
	case status == httpcode.StatusClientClosedRequest:
		// Nobody reads it: the request log says 499.
		c.Status(status)
		c.Abort()
		return
	case status == http.StatusServiceUnavailable:
		v.Heading = "The store's database is not answering"
		v.Message = "Nothing was lost. Please try again in a moment."
	case status >= 500:
		v.Heading = "Something went wrong"
		v.Message = "Something went wrong on our side. Please try again; if it keeps happening, tell the team that runs the console."
	}
	p := ui.page
	if status >= 500 {
		reason := httpcode.Reason(err)
		c.Set(httpcode.ReasonKey, reason)
		ui.log.Error("console request failed", "method", c.Request.Method, "path", c.Request.URL.Path, "status", status, "reason", reason, "error", err)
		// The session may live in the database that is failing, or may
		// not have loaded: render without saving it (no new CSRF token, no
		// flash), so the page comes quickly and writes nothing.
		p = ui.pageWithoutSession
	}
	ui.render(c, status, templates.ErrorPage(p(c, v.Heading, ""), v))
	c.Abort()
}

// pageWithoutSession builds the layout data of a page without writing the
// session, for server error pages. The CSRF token is kept when the session
// has one (it loaded before the failure).
func (ui *Web) pageWithoutSession(c *gin.Context, title, section string) templates.Page {
	p := ui.pageFrame(c, title, section)
	if session(c) != nil {
		if s, err := ui.sessions.Get(c.Request, ui.cookie); err == nil {
			tok, _ := s.Values[keyCSRF].(string)
			p.CSRFToken = maskToken(tok)
		}
	}
	return p
}

// NotFound answers unknown console paths with an HTML 404.
func (ui *Web) NotFound(c *gin.Context) {
	setPageHeaders(c)
	ui.fail(c, refuse(models.CodeNotFound, "Page not found", "There is no page at this address."))
}

// MethodNotAllowed answers a console path with a method it does not allow.
func (ui *Web) MethodNotAllowed(c *gin.Context) {
	setPageHeaders(c)
	ui.fail(c, refuse(httpcode.MethodNotAllowed, "Not allowed", "This page cannot be used that way."))
}

// Recover answers a panic on a console page with the generic error page.
func (ui *Web) Recover(c *gin.Context, recovered any) {
	ui.log.Error("panic serving console request", "method", c.Request.Method, "path", c.Request.URL.Path, "panic", recovered)
	if c.Writer.Written() {
		c.Abort()
		return
	}
	setPageHeaders(c)
	ui.fail(c, errors.New("panic"))
}
