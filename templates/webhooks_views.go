package templates

import "strconv"

// WebhooksView is the webhooks page: the endpoint just created with its
// secret (if any), the add form and the endpoints.
type WebhooksView struct {
	Endpoints []WebhookRow
	Form      WebhookForm
	// Created is the endpoint this very request created, with its secret
	// shown once; nil otherwise.
	Created *WebhookSecret
}

// WebhookRow is one endpoint: what it receives, its state and its health.
// Times are ready to show, in UTC.
type WebhookRow struct {
	ID  int64
	URL string
	// Events is "all" or the event types it receives, comma separated.
	Events      string
	Description string
	Enabled     bool
	// DisabledReason says who or what disabled it; "" while enabled.
	DisabledReason string
	// LastSuccess is when a delivery last succeeded, "never" if none has.
	LastSuccess Time
	// FailingSince is when its deliveries started failing; "" while they
	// succeed.
	FailingSince Time
	// Failures counts the failed attempts since the last success.
	Failures  int
	CreatedBy string
	Created   Time
}

// WebhookForm is the add form as typed, with each field's error if any.
type WebhookForm struct {
	URL      string
	URLError string
	// Events are the event type checkboxes, in order; none checked means
	// every type.
	Events           []EventTypeOption
	EventsError      string
	Description      string
	DescriptionError string
}

// EventTypeOption is one event type's checkbox in the add form.
type EventTypeOption struct {
	// ID is unique on the page and safe in an id attribute.
	ID      string
	Name    string
	Checked bool
}

// WebhookSecret is a signing secret just made, by a create or a rotation.
// It exists only in the response that made it: it is never stored in the
// session, flashed, put in a URL or shown again.
type WebhookSecret struct {
	EndpointID int64
	URL        string
	Secret     string
	// PreviousUntil, after a rotation, is when the replaced secret stops
	// signing deliveries; "" after a create.
	PreviousUntil Time
	// Grace is how long a replaced secret keeps signing, in words ("24
	// hours").
	Grace string
}

// WebhookView is one endpoint's page: its details, its latest deliveries
// and the actions on it.
type WebhookView struct {
	Endpoint   WebhookRow
	Deliveries []DeliveryRow
	// DeliveryLimit is how many of the latest deliveries the page shows
	// at most.
	DeliveryLimit int
	// Rotated is the secret a rotation just made, shown once; nil
	// otherwise.
	Rotated *WebhookSecret
	// PreviousUntil is when the secret replaced by the last rotation stops
	// signing; "" when none is valid any more.
	PreviousUntil Time
	// Error says why an action was refused; "" when none was.
	Error string
	// Grace is how long a replaced secret keeps signing, in words ("24
	// hours").
	Grace string
}

// DeliveryRow is one delivery of an event to the endpoint.
type DeliveryRow struct {
	ID      int64
	EventID string
	Type    string
	// Status is "pending", "delivered" or "failed".
	Status   string
	Attempts int
	// LastResponse is the last attempt's HTTP status or error, "not tried
	// yet" before the first.
	LastResponse string
	// Duration is the last attempt's, "" before the first.
	Duration string
	Created  Time
	// NextAttempt is when a pending delivery is tried next; "" otherwise.
	NextAttempt Time
	// Resendable offers "Resend": a delivery not delivered, failed or
	// waiting for its next attempt.
	Resendable bool
}

// ConfirmWebhookView is the confirmation page before an action that cannot
// be taken back (rotating the secret, deleting the endpoint).
type ConfirmWebhookView struct {
	Endpoint WebhookRow
	// Grace is how long a replaced secret keeps signing, as words ("24
	// hours").
	Grace string
}

// WebhookPath is the address of an endpoint's page, or with action of
// one of its actions ("rotate", "delete", …).
func WebhookPath(id int64, action string) string {
	p := "/admin/webhooks/" + strconv.FormatInt(id, 10)
	if action != "" {
		p += "/" + action
	}
	return p
}

// resendPath is the address that sends a delivery again.
func resendPath(endpoint, delivery int64) string {
	return WebhookPath(endpoint, "deliveries/"+strconv.FormatInt(delivery, 10)+"/resend")
}
