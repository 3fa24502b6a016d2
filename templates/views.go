// Package templates holds the admin console's templ components and the view
// structs they take. Views are shaped like the screen; they carry strings
// ready to show and know nothing of the database, Gin or HTTP. Each page's
// view structs live in its own *_views.go (pets_views.go for pets.templ);
// this file holds the layout's, which every page shares.
package templates

// Page is what every full page needs: the layout's data.
type Page struct {
	// Title is the page's own title; the layout adds the product name.
	Title string
	// Section marks the active navigation entry: "pets", "api-keys",
	// "webhooks", "users", "audit" or "sessions"; "" marks none.
	Section string
	// Username is the signed-in staff member, "" on the sign-in page.
	Username string
	// Role is the signed-in member's role ("viewer", "editor", "admin").
	Role string
	// Nav lists the pages the member's role may open.
	Nav []NavItem
	// CSRFToken goes into every form and into htmx's request headers.
	CSRFToken string
	Assets    Assets
	// Flash is a one-time message shown at the top of the page.
	Flash Flash
}

// NavItem is one entry of the navigation.
type NavItem struct {
	Href, Label string
	// Section is the Page.Section that marks the entry current.
	Section string
}

// Assets are the content-hashed URLs of the static files.
type Assets struct {
	PicoCSS, AppCSS, HTMX, AppJS string
	// PasskeysJS runs the passkey buttons, on the pages that have them.
	PasskeysJS string
}

// Flash is a success or error message.
type Flash struct {
	Kind string // "success" or "error"; "" shows nothing
	Text string
	// Undo, when set, offers to undo the change the message reports.
	Undo *UndoOffer
}

// LoginView is the sign-in form.
type LoginView struct {
	Username string
	Error    string
	// Next is where to go after signing in.
	Next string
}

// ErrorView is an error page.
type ErrorView struct {
	Status  int
	Heading string
	Message string
}

// Time is a moment as the console shows it, in the store's time zone.
type Time struct {
	// Text is the moment to the minute with the zone named, such as
	// "27 Nov 2026, 14:05 CET"; "never" (or another word) when UTC is "".
	Text string
	// UTC is the moment in RFC 3339 in UTC, for the element's datetime.
	UTC string
	// Title names the zone in full and the moment in UTC, shown on hover.
	Title string
}
