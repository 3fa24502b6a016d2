package models

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Webhooks: endpoints admins register, to which the change feed's events
// are delivered (package webhooks sends them). The deliveries are an
// outbox driven from the durable events: an endpoint's cursor says which
// events were queued for it (FanOutWebhook), a delivery row is queued once
// per event and endpoint, and one instance at a time delivers to an
// endpoint under a lease (ClaimWebhook), so a crash or restart loses none
// and a delivery is repeated only after a failure or an expired lease.

// Webhook is an endpoint. Its secrets sign deliveries; they are shown
// once, when made, and never again.
type Webhook struct {
	ID          int64
	URL         string
	Description string
	// EventTypes lists the event types it receives, comma separated; ""
	// receives every type.
	EventTypes          string
	Secret              string
	PreviousSecret      *string
	PreviousExpiresAt   *time.Time
	Enabled             bool
	DisabledReason      string
	CursorEventID       int64
	LeaseOwner          *string
	LeaseUntil          *time.Time
	LastSuccessAt       *time.Time
	FailingSince        *time.Time
	ConsecutiveFailures int
	CreatedBy           string
	CreatedAt           time.Time
	UpdatedAt           time.Time
}

// TableName is the endpoints' table.
func (Webhook) TableName() string { return "webhook_endpoints" }

// Types are the event types the endpoint receives (nil: every type).
func (w Webhook) Types() []string {
	if w.EventTypes == "" {
		return nil
	}
	return strings.Split(w.EventTypes, ",")
}

// Wants reports whether the endpoint receives events of type t.
func (w Webhook) Wants(t string) bool {
	return w.EventTypes == "" || slices.Contains(w.Types(), t)
}

// Secrets are the secrets a delivery made at now is signed with: the
// current one, then the previous one while it is still valid.
func (w Webhook) Secrets(now time.Time) []string {
	s := []string{w.Secret}
	if w.PreviousSecret != nil && w.PreviousExpiresAt != nil && now.Before(*w.PreviousExpiresAt) {
		s = append(s, *w.PreviousSecret)
	}
	return s
}

// The states of a delivery.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// WebhookDelivery is one event queued for one endpoint, and what its last
// attempt got.
type WebhookDelivery struct {
	ID             int64
	EndpointID     int64
	EventID        string
	EventType      string
	Body           []byte `gorm:"type:text"`
	Status         string
	Attempts       int
	NextAttemptAt  time.Time
	LastAttemptAt  *time.Time
	LastStatus     *int
	LastError      string
	LastDurationMS *int `gorm:"column:last_duration_ms"`
	CreatedAt      time.Time
	DeliveredAt    *time.Time
}

// TableName is the deliveries' table.
func (WebhookDelivery) TableName() string { return "webhook_deliveries" }

// EventPing is the type of the test event "Send test event" sends.
const EventPing = "ping"

// WebhookEventTypes are the event types an endpoint may ask for.
var WebhookEventTypes = []string{string(EventPetCreated), string(EventPetUpdated), string(EventPetArchived), string(EventPetRestored)}

// Audit actions and the target type of webhooks.
const (
	ActionWebhookCreated        = "webhook.created"
	ActionWebhookDeleted        = "webhook.deleted"
	ActionWebhookDisabled       = "webhook.disabled"
	ActionWebhookEnabled        = "webhook.enabled"
	ActionWebhookSecretRotated  = "webhook.secret_rotated"
	ActionWebhookTestSent       = "webhook.test_sent"
	ActionWebhookDeliveryResent = "webhook.delivery_resent"
	TargetWebhook               = "webhook"
)

// Fields of the webhook form.
const (
	FieldURL         = "url"
	FieldEventTypes  = "events"
	FieldDescription = "description"
)

// MaxWebhookURL bounds an endpoint's URL.
const MaxWebhookURL = 2000

// WebhookInput is a new endpoint as an admin typed it.
type WebhookInput struct {
	URL         string
	EventTypes  []string
	Description string
}

// Validate checks in; checkURL checks the URL's destination (package
// webhooks: scheme, host, and no address of the server's own network). It
// returns a validation error naming each bad field.
func (in *WebhookInput) Validate(checkURL func(string) error) error {
	v := validation{}
	in.URL = strings.TrimSpace(in.URL)
	switch {
	case in.URL == "":
		v.add(FieldURL, "URL is required.")
	case len(in.URL) > MaxWebhookURL:
		v.add(FieldURL, fmt.Sprintf("URL must be at most %d characters.", MaxWebhookURL))
	default:
		if err := checkURL(in.URL); err != nil {
			v.add(FieldURL, err.Error())
		}
	}
	seen := map[string]bool{}
	for _, t := range in.EventTypes {
		if !slices.Contains(WebhookEventTypes, t) {
			v.add(FieldEventTypes, fmt.Sprintf("Unknown event type %q: choose from %s.", t, strings.Join(WebhookEventTypes, ", ")))
			break
		}
		seen[t] = true
	}
	in.EventTypes = in.EventTypes[:0]
	for _, t := range WebhookEventTypes {
		if seen[t] {
			in.EventTypes = append(in.EventTypes, t)
		}
	}
	if len(in.EventTypes) == len(WebhookEventTypes) {
		in.EventTypes = nil // every type, including those added later
	}
	in.Description = strings.TrimSpace(in.Description)
	if utf8.RuneCountInString(in.Description) > 255 || !utf8.ValidString(in.Description) {
		v.add(FieldDescription, "Description must be at most 255 characters.")
	}
	return v.err()
}

// CreateWebhook stores a validated endpoint with its signing secret. It
// receives the events committed from now on.
func (s *Store) CreateWebhook(ctx context.Context, in WebhookInput, secret, actor string) (Webhook, error) {
	head, _, err := s.eventClock(ctx)
	if err != nil {
		return Webhook{}, err
	}
	now := s.now()
	w := Webhook{URL: in.URL, Description: in.Description, EventTypes: strings.Join(in.EventTypes, ","), Secret: secret,
		Enabled: true, CursorEventID: head, CreatedBy: actor, CreatedAt: now, UpdatedAt: now}
	err = s.transaction(ctx, func(tx *gorm.DB) error {
		w.ID = 0
		if err := tx.Create(&w).Error; err != nil {
			return err
		}
		return tx.Create(&AuditEvent{At: now, Actor: actor, Action: ActionWebhookCreated, TargetType: TargetWebhook,
			TargetID: w.ID, Detail: webhookDetail(w)}).Error
	})
	if err != nil {
		return Webhook{}, s.dbErr("create webhook", err)
	}
	return w, nil
}

func webhookDetail(w Webhook) string {
	types := w.EventTypes
	if types == "" {
		types = "all"
	}
	return fmt.Sprintf("url=%q events=%s", w.URL, types)
}

// ListWebhooks returns every endpoint, oldest first.
func (s *Store) ListWebhooks(ctx context.Context) ([]Webhook, error) {
	var ws []Webhook
	if err := s.db.WithContext(ctx).Order("id").Find(&ws).Error; err != nil {
		return nil, s.dbErr("list webhooks", err)
	}
	return ws, nil
}

// GetWebhook returns endpoint id.
func (s *Store) GetWebhook(ctx context.Context, id int64) (Webhook, error) {
	var w Webhook
	err := s.db.WithContext(ctx).Where("id = ?", id).Take(&w).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Webhook{}, notFound("webhook", id)
	}
	if err != nil {
		return Webhook{}, s.dbErr("get webhook", err)
	}
	return w, nil
}

// changeWebhook runs fn on endpoint id, read and locked in a transaction,
// and records its audit event when fn returns an action.
func (s *Store) changeWebhook(ctx context.Context, id int64, actor string, fn func(tx *gorm.DB, w *Webhook, now time.Time) (action, detail string, err error)) (Webhook, error) {
	var w Webhook
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ?", id).Take(&w).Error; err != nil {
			return err
		}
		now := s.now()
		action, detail, err := fn(tx, &w, now)
		if err != nil || action == "" {
			return err
		}
		return tx.Create(&AuditEvent{At: now, Actor: actor, Action: action, TargetType: TargetWebhook, TargetID: id, Detail: detail}).Error
	})
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Webhook{}, notFound("webhook", id)
	}
	var e *Error
	if errors.As(err, &e) {
		return Webhook{}, err
	}
	if err != nil {
		return Webhook{}, s.dbErr("change webhook", err)
	}
	return w, nil
}

// SetWebhookEnabled turns endpoint id on or off. An endpoint turned back on
// starts with a clean record of failures, and receives what was queued
// for it meanwhile.
func (s *Store) SetWebhookEnabled(ctx context.Context, id int64, enabled bool, actor string) (Webhook, error) {
	return s.changeWebhook(ctx, id, actor, func(tx *gorm.DB, w *Webhook, now time.Time) (string, string, error) {
		if w.Enabled == enabled {
			return "", "", nil
		}
		updates := map[string]any{"enabled": enabled, "updated_at": now, "disabled_reason": ""}
		action := ActionWebhookEnabled
		if enabled {
			updates["failing_since"], updates["consecutive_failures"] = nil, 0
			w.FailingSince, w.ConsecutiveFailures = nil, 0
		} else {
			action = ActionWebhookDisabled
			updates["disabled_reason"] = "Disabled by " + actor + "."
		}
		w.Enabled, w.DisabledReason = enabled, fmt.Sprint(updates["disabled_reason"])
		return action, webhookDetail(*w), tx.Model(&Webhook{}).Where("id = ?", w.ID).Updates(updates).Error
	})
}

// RotateWebhookSecret gives endpoint id the secret secret; the one it
// replaces still signs deliveries for grace (beside the new one), so that
// a receiver can switch without losing any.
func (s *Store) RotateWebhookSecret(ctx context.Context, id int64, secret string, grace time.Duration, actor string) (Webhook, error) {
	return s.changeWebhook(ctx, id, actor, func(tx *gorm.DB, w *Webhook, now time.Time) (string, string, error) {
		until := now.Add(grace)
		old := w.Secret
		w.Secret, w.PreviousSecret, w.PreviousExpiresAt = secret, &old, &until
		err := tx.Model(&Webhook{}).Where("id = ?", w.ID).Updates(map[string]any{"secret": secret, "previous_secret": old,
			"previous_expires_at": until, "updated_at": now}).Error
		return ActionWebhookSecretRotated, fmt.Sprintf("url=%q previous secret valid until %s", w.URL, until.Format(time.RFC3339)), err
	})
}

// DeleteWebhook deletes endpoint id and its deliveries.
func (s *Store) DeleteWebhook(ctx context.Context, id int64, actor string) (Webhook, error) {
	return s.changeWebhook(ctx, id, actor, func(tx *gorm.DB, w *Webhook, now time.Time) (string, string, error) {
		if err := tx.Where("endpoint_id = ?", w.ID).Delete(&WebhookDelivery{}).Error; err != nil {
			return "", "", err
		}
		return ActionWebhookDeleted, webhookDetail(*w), tx.Delete(&Webhook{}, w.ID).Error
	})
}

// QueueWebhookPing queues the test event body (type ping, id eventID) for
// endpoint id, to go at once.
func (s *Store) QueueWebhookPing(ctx context.Context, id int64, eventID string, body []byte, actor string) error {
	_, err := s.changeWebhook(ctx, id, actor, func(tx *gorm.DB, w *Webhook, now time.Time) (string, string, error) {
		d := WebhookDelivery{EndpointID: w.ID, EventID: eventID, EventType: EventPing, Body: body, Status: DeliveryPending,
			NextAttemptAt: now, CreatedAt: now}
		return ActionWebhookTestSent, fmt.Sprintf("url=%q event=%s", w.URL, eventID), tx.Create(&d).Error
	})
	return err
}

// ResendWebhookDelivery queues delivery deliveryID of endpoint id again, at
// once and with its attempts counted afresh: a failed one, or a pending
// one waiting for its next attempt.
func (s *Store) ResendWebhookDelivery(ctx context.Context, id, deliveryID int64, actor string) error {
	_, err := s.changeWebhook(ctx, id, actor, func(tx *gorm.DB, w *Webhook, now time.Time) (string, string, error) {
		res := tx.Model(&WebhookDelivery{}).Where("id = ? AND endpoint_id = ? AND status <> ?", deliveryID, id, DeliveryDelivered).
			Updates(map[string]any{"status": DeliveryPending, "attempts": 0, "next_attempt_at": now})
		if res.Error != nil {
			return "", "", res.Error
		}
		if res.RowsAffected != 1 {
			return "", "", &Error{Code: CodeConflict, Message: "Only a delivery that failed or waits for a retry can be sent again."}
		}
		return ActionWebhookDeliveryResent, fmt.Sprintf("url=%q delivery=%d", w.URL, deliveryID), nil
	})
	return err
}

// WebhookDeliveries returns endpoint id's latest deliveries, newest first.
func (s *Store) WebhookDeliveries(ctx context.Context, id int64, limit int) ([]WebhookDelivery, error) {
	var ds []WebhookDelivery
	if err := s.db.WithContext(ctx).Where("endpoint_id = ?", id).Order("id DESC").Limit(limit).Find(&ds).Error; err != nil {
		return nil, s.dbErr("list webhook deliveries", err)
	}
	return ds, nil
}

// FanOutWebhook queues for endpoint id a delivery of each event it wants
// after its cursor, at most limit events, and moves the cursor past them,
// in one transaction holding the endpoint's row: an event is queued once
// whichever instances fan out at once. encode writes an event's body. It
// returns how many events it read; when fewer than limit, the endpoint is
// up to date. An endpoint whose cursor fell behind the retention skips
// what was purged.
func (s *Store) FanOutWebhook(ctx context.Context, id int64, limit int, encode func(Event) []byte) (int, error) {
	var n int
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		n = 0
		var w Webhook
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ?", id).Take(&w).Error; err != nil {
			return err
		}
		if !w.Enabled {
			return nil
		}
		page, _, err := s.readEvents(ctx, w.CursorEventID, limit)
		if ErrorCode(err) == CodeCursorExpired {
			page, _, err = s.readEvents(ctx, FeedStart, limit)
		}
		if err != nil {
			return err
		}
		n = len(page.Events)
		now := s.now()
		var ds []WebhookDelivery
		for _, e := range page.Events {
			if w.Wants(string(e.Type)) {
				ds = append(ds, WebhookDelivery{EndpointID: id, EventID: FormatEventID(e.ID), EventType: string(e.Type), Body: encode(e),
					Status: DeliveryPending, NextAttemptAt: now, CreatedAt: now})
			}
		}
		if len(ds) > 0 {
			if err := tx.Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(ds, 100).Error; err != nil {
				return err
			}
		}
		if page.Next == w.CursorEventID {
			return nil
		}
		return tx.Model(&Webhook{}).Where("id = ?", id).Update("cursor_event_id", page.Next).Error
	})
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return 0, nil // deleted meanwhile
	}
	if err != nil {
		return 0, s.dbErr("queue webhook deliveries", err)
	}
	return n, nil
}

// WebhooksDue returns the enabled endpoints with a delivery due at now
// and no live lease.
func (s *Store) WebhooksDue(ctx context.Context, now time.Time) ([]int64, error) {
	var ids []int64
	err := s.db.WithContext(ctx).Raw("SELECT e.id FROM webhook_endpoints e WHERE e.enabled"+
		" AND (e.lease_until IS NULL OR e.lease_until < ?)"+
		" AND EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.status = ? AND d.next_attempt_at <= ?)"+
		" ORDER BY e.id", now, DeliveryPending, now).Scan(&ids).Error
	if err != nil {
		return nil, s.dbErr("find due webhooks", err)
	}
	return ids, nil
}

// ClaimWebhook takes (or renews) the lease of endpoint id for owner until
// now+lease, unless another owner holds a live one; it reports whether
// owner holds it.
func (s *Store) ClaimWebhook(ctx context.Context, id int64, owner string, lease time.Duration) (bool, error) {
	now := s.now()
	res := s.db.WithContext(ctx).Exec("UPDATE webhook_endpoints SET lease_owner = ?, lease_until = ? WHERE id = ? AND enabled"+
		" AND (lease_until IS NULL OR lease_until < ? OR lease_owner = ?)", owner, now.Add(lease), id, now, owner)
	if res.Error != nil {
		return false, s.dbErr("claim webhook", res.Error)
	}
	return res.RowsAffected == 1, nil
}

// ReleaseWebhook gives back owner's lease of endpoint id.
func (s *Store) ReleaseWebhook(ctx context.Context, id int64, owner string) error {
	if err := s.db.WithContext(ctx).Exec("UPDATE webhook_endpoints SET lease_owner = NULL, lease_until = NULL WHERE id = ? AND lease_owner = ?",
		id, owner).Error; err != nil {
		return s.dbErr("release webhook", err)
	}
	return nil
}

// DueWebhookDeliveries returns up to limit deliveries of endpoint id due
// at now, in the order they were queued.
func (s *Store) DueWebhookDeliveries(ctx context.Context, id int64, now time.Time, limit int) ([]WebhookDelivery, error) {
	var ds []WebhookDelivery
	err := s.db.WithContext(ctx).Where("endpoint_id = ? AND status = ? AND next_attempt_at <= ?", id, DeliveryPending, now).
		Order("id").Limit(limit).Find(&ds).Error
	if err != nil {
		return nil, s.dbErr("read due webhook deliveries", err)
	}
	return ds, nil
}

// WebhookDeliveryWaiting reports whether delivery d is still pending with
// the attempts it had when read: not delivered, failed or tried by another
// instance since.
func (s *Store) WebhookDeliveryWaiting(ctx context.Context, d WebhookDelivery) (bool, error) {
	var n int64
	err := s.db.WithContext(ctx).Model(&WebhookDelivery{}).Where("id = ? AND status = ? AND attempts = ?", d.ID, DeliveryPending, d.Attempts).
		Count(&n).Error
	if err != nil {
		return false, s.dbErr("read a webhook delivery", err)
	}
	return n == 1, nil
}

// WebhookAttempt is what one attempt of a delivery got.
type WebhookAttempt struct {
	At       time.Time
	Status   int // the HTTP status; 0 when there was no answer
	Error    string
	Duration time.Duration
	// Delivered: a 2xx. Otherwise Final says no attempt is left, and
	// NextAttemptAt when the next one is due.
	Delivered     bool
	Final         bool
	NextAttemptAt time.Time
}

// RecordWebhookAttempt records attempt a of delivery d and the endpoint's
// health: a success clears its failures; a failure counts, puts off the
// endpoint's other due deliveries until the retry, and an endpoint failing
// for disableAfter is disabled (and audited). It reports whether
// it disabled the endpoint.
func (s *Store) RecordWebhookAttempt(ctx context.Context, d WebhookDelivery, a WebhookAttempt, disableAfter time.Duration) (bool, error) {
	disabled := false
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		disabled = false
		ms := int(a.Duration / time.Millisecond)
		updates := map[string]any{"attempts": gorm.Expr("attempts + 1"), "last_attempt_at": a.At, "last_error": clip(a.Error, 255),
			"last_duration_ms": ms, "last_status": nil}
		if a.Status != 0 {
			updates["last_status"] = a.Status
		}
		switch {
		case a.Delivered:
			updates["status"], updates["delivered_at"] = DeliveryDelivered, a.At
		case a.Final:
			updates["status"] = DeliveryFailed
		default:
			updates["next_attempt_at"] = a.NextAttemptAt
		}
		if err := tx.Model(&WebhookDelivery{}).Where("id = ? AND status = ?", d.ID, DeliveryPending).Updates(updates).Error; err != nil {
			return err
		}
		if a.Delivered {
			return tx.Model(&Webhook{}).Where("id = ?", d.EndpointID).Updates(map[string]any{"last_success_at": a.At,
				"failing_since": nil, "consecutive_failures": 0}).Error
		}
		if !a.Final {
			// The endpoint's other deliveries wait as long: a receiver that
			// is down gets one attempt per retry, not one per queued event.
			if err := tx.Model(&WebhookDelivery{}).Where("endpoint_id = ? AND status = ? AND next_attempt_at < ?", d.EndpointID, DeliveryPending, a.NextAttemptAt).
				Update("next_attempt_at", a.NextAttemptAt).Error; err != nil {
				return err
			}
		}
		var w Webhook
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ?", d.EndpointID).Take(&w).Error; err != nil {
			return err
		}
		since := a.At
		if w.FailingSince != nil {
			since = *w.FailingSince
		}
		updates = map[string]any{"failing_since": since, "consecutive_failures": w.ConsecutiveFailures + 1}
		if w.Enabled && a.At.Sub(since) >= disableAfter {
			disabled = true
			reason := fmt.Sprintf("Disabled automatically: every delivery failed for %s (since %s).", disableAfter, since.Format(time.RFC3339))
			updates["enabled"], updates["disabled_reason"], updates["lease_owner"], updates["lease_until"] = false, reason, nil, nil
			if err := tx.Create(&AuditEvent{At: a.At, Actor: "system", ActorKind: ActorKindSystem, Action: ActionWebhookDisabled,
				TargetType: TargetWebhook, TargetID: w.ID, Detail: reason}).Error; err != nil {
				return err
			}
		}
		return tx.Model(&Webhook{}).Where("id = ?", w.ID).Updates(updates).Error
	})
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return false, nil // deleted meanwhile
	}
	if err != nil {
		return false, s.dbErr("record webhook attempt", err)
	}
	return disabled, nil
}

// clip cuts s to at most n bytes on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// WebhookQueue is the deliveries waiting: how many, and when the oldest
// was queued (zero when none).
type WebhookQueue struct {
	Pending int64
	Oldest  time.Time
}

// WebhookQueueStats reads the queue of pending deliveries.
func (s *Store) WebhookQueueStats(ctx context.Context) (WebhookQueue, error) {
	var row struct {
		N      int64
		Oldest *time.Time
	}
	err := s.db.WithContext(ctx).Raw("SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM webhook_deliveries WHERE status = ?", DeliveryPending).
		Scan(&row).Error
	if err != nil {
		return WebhookQueue{}, s.dbErr("read the webhook queue", err)
	}
	q := WebhookQueue{Pending: row.N}
	if row.Oldest != nil {
		q.Oldest = row.Oldest.UTC()
	}
	return q, nil
}

// PurgeWebhookDeliveries deletes the delivered and failed deliveries
// queued before cutoff, in batches, and returns how many.
func (s *Store) PurgeWebhookDeliveries(ctx context.Context, cutoff time.Time) (int64, error) {
	query := "DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries WHERE status <> ? AND created_at < ? LIMIT 1000)"
	if s.driver == DriverMySQL {
		query = "DELETE FROM webhook_deliveries WHERE status <> ? AND created_at < ? LIMIT 1000"
	}
	var total int64
	for {
		res, err := s.sqlDB.ExecContext(ctx, query, DeliveryPending, cutoff)
		if err != nil {
			return total, s.dbErr("purge webhook deliveries", err)
		}
		n, _ := res.RowsAffected()
		total += n
		if n < 1000 {
			return total, nil
		}
	}
}
