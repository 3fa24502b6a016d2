package templates

import "strings"

// AuditView is the audit page: filters and one page of events.
type AuditView struct {
	Action string
	Actor  string
	Target string
	// Actions are the actions the filter offers, by their plain names.
	Actions []Choice
	Rows    []AuditRow
	// OlderURL leads to the next page; NewestURL back to the first ("" when on it).
	OlderURL  string
	NewestURL string
	Filtered  bool
	Error     string
	// Zone is the store's time zone, in which the times are shown.
	Zone string
}

// Choice is one option of a select: the value sent and the words shown.
type Choice struct {
	Value, Label string
}

// AuditRow is one event.
type AuditRow struct {
	// At is when it happened; When is At's text, for pages that show the
	// events as plain text (a pet's history).
	At   Time
	When string
	// Sentence tells the event in words, naming who and what by their
	// names; Note adds what the sentence leaves out (an address, a reason).
	Sentence []AuditPart
	Note     string
	// Actor, Action (the code, such as pet.status_changed) and Detail are
	// as recorded.
	Actor  string
	Action string
	Detail string
	// Target names what was acted on ("pet 12"); TargetURL leads to its
	// history in the trail.
	Target    string
	TargetURL string
}

// AuditPart is a piece of an event's sentence: plain text, a link to what
// was acted on, or the actor.
type AuditPart struct {
	Text string
	// Href, when set, makes the part a link.
	Href string
	// Actor marks the part that names who acted.
	Actor bool
}

// targetWord names the kind of thing a target ("pet 12") is.
func targetWord(target string) string {
	switch kind, _, _ := strings.Cut(target, " "); kind {
	case "user":
		return "staff member"
	case "apikey":
		return "API key"
	case "":
		return "thing"
	default:
		return kind
	}
}
