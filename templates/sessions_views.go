package templates

// SessionsView is the "Your sessions" page: the signed-in member's live
// sessions, this browser's first.
type SessionsView struct {
	Sessions []SessionRow
	// Others is how many of them are not this browser's.
	Others int
}

// SessionRow is one session, ready to show.
type SessionRow struct {
	// Handle names the session in the sign-out form; it cannot be used as
	// a cookie.
	Handle string
	// Browser is a short name of the browser, such as "Firefox 128 on Linux".
	Browser string
	// Address is the client address the session signed in from.
	Address  string
	SignedIn Time
	LastSeen Time
	// Current marks this browser's session.
	Current bool
}
