package web

import (
	"strings"
	"testing"
	"time"

	"petstore/models"
	"petstore/templates"
)

// The details below are written as the models write them; the audit page
// test reads real ones through the store.
func TestDescribeEvent(t *testing.T) {
	t.Parallel()
	loc, err := time.LoadLocation("Europe/Madrid")
	if err != nil {
		t.Fatal(err)
	}
	ui := &Web{location: loc}
	names := auditNames{petLinks: true, userLinks: true, hookLinks: true, names: map[string]map[int64]string{
		models.TargetPet:     {7: "Luna"},
		models.TargetUser:    {2: "bob"},
		models.TargetAPIKey:  {3: "shop"},
		models.TargetWebhook: {4: "https://partner.example/hook"},
	}}
	ana := func(action, typ string, id int64, detail string) models.AuditEvent {
		return models.AuditEvent{Actor: "ana", ActorKind: models.ActorKindStaff, Action: action, TargetType: typ, TargetID: id, Detail: detail}
	}
	tests := []struct {
		name       string
		ev         models.AuditEvent
		want, note string
	}{
		{"pet added", ana(models.ActionPetCreated, models.TargetPet, 7, `name="Luna" categoryId=2 status=available`), "Ana added Luna (category 2, available)", ""},
		{"pet gone", ana(models.ActionPetCreated, models.TargetPet, 9, `name="Old \"Tom\"" categoryId=2 status=sold`), `Ana added Old "Tom" (category 2, sold)`, ""},
		{"status", ana(models.ActionPetStatusChanged, models.TargetPet, 7, "available -> sold"), "Ana changed Luna's status from available to sold", ""},
		{"status of a gone pet", ana(models.ActionPetStatusChanged, models.TargetPet, 9, "available -> sold"), "Ana changed pet #9's status from available to sold", ""},
		{"edit", ana(models.ActionPetEdited, models.TargetPet, 7, `name "Rex" -> "Luna"; categoryId 1 -> 2; status available -> sold`),
			"Ana edited Luna: name from “Rex” to “Luna”, category from 1 to 2, status from available to sold", ""},
		{"seed", models.AuditEvent{Actor: "cli", ActorKind: models.ActorKindCLI, Action: models.ActionPetsSeeded, TargetType: models.TargetPet, Detail: "added 500 example pets, ids 1 to 500"},
			"Someone at the command line added 500 example pets, ids 1 to 500", ""},
		{"export", ana(models.ActionPetsExported, models.TargetPet, 0, `exported 2500 pets as CSV; filter: status sold, search "cat"`),
			"Ana exported 2500 pets as CSV", `Filter: status sold, search "cat".`},
		{"export aborted", ana(models.ActionPetsExported, models.TargetPet, 0, "CSV export aborted by the client after 3 pets; filter: all pets"),
			"Ana started a CSV export, aborted by the client after sending 3 pets", "Filter: all pets."},
		{"key created", ana(models.ActionKeyCreated, models.TargetAPIKey, 3, `name="shop" prefix=pst_ab12 scopes="pets:read" expires=2026-12-01T00:00:00Z`),
			"Ana created the API key “shop” (read pets)", "It expires on 1 Dec 2026, 01:00 CET."},
		{"key revoked", ana(models.ActionKeyRevoked, models.TargetAPIKey, 5, `name="old app" prefix=pst_cd34`), "Ana revoked the API key “old app”", ""},
		{"member added", ana(models.ActionUserCreated, models.TargetUser, 2, "username=bob; role=editor"), "Ana added the staff member bob as an editor", ""},
		{"own password", models.AuditEvent{Actor: "bob", Action: models.ActionPasswordChanged, TargetType: models.TargetUser, TargetID: 2, Detail: "own password; other sessions ended"},
			"Bob changed their password", "Their other sessions were ended."},
		{"sign-in", ana(models.ActionLogin, models.TargetUser, 1, "from 10.0.0.1 with a one-time password"), "Ana signed in", "From 10.0.0.1, with a one-time password."},
		{"failed sign-in", models.AuditEvent{Actor: "ana", ActorKind: models.ActorKindStaff, Action: models.ActionLoginFailed, TargetType: models.TargetUser, TargetID: 1, Detail: "sign-in from 10.0.0.1"},
			"Someone failed to sign in as ana", "From 10.0.0.1."},
		{"failed sign-in, disabled", models.AuditEvent{Actor: "ana", ActorKind: models.ActorKindStaff, Action: models.ActionLoginFailed, TargetType: models.TargetUser, TargetID: 1, Detail: "sign-in of a disabled account from 10.0.0.1"},
			"Someone failed to sign in as ana", "The account is disabled. From 10.0.0.1."},
		{"failed sign-in, unknown", models.AuditEvent{Actor: "(unknown account)", ActorKind: models.ActorKindAnonymous, Action: models.ActionLoginFailed, TargetType: models.TargetUser, Detail: "sign-in from 10.0.0.1"},
			"Someone failed to sign in as an unknown username", "From 10.0.0.1."},
		{"failed password change", models.AuditEvent{Actor: "ana", ActorKind: models.ActorKindStaff, Action: models.ActionLoginFailed, TargetType: models.TargetUser, TargetID: 1, Detail: "password change from 10.0.0.1"},
			"Someone failed to change the password of ana", "From 10.0.0.1."},
		{"wrong password before a change to the second steps", models.AuditEvent{Actor: "ana", ActorKind: models.ActorKindStaff, Action: models.ActionLoginFailed, TargetType: models.TargetUser, TargetID: 1, Detail: "password check before removing a passkey from 10.0.0.1"},
			"Someone failed to give the password of ana", "Asked before removing a passkey. From 10.0.0.1."},
		{"disabled", ana(models.ActionUserDisabled, models.TargetUser, 2, "username=bob; sessions ended; API keys not revoked"),
			"Ana disabled the account of bob", "Their sessions were ended; the API keys they created still work."},
		{"enabled", ana(models.ActionUserEnabled, models.TargetUser, 2, "username=bob"), "Ana enabled the account of bob again", ""},
		{"reset", ana(models.ActionPasswordReset, models.TargetUser, 2, "username=bob; one-time password issued; sessions ended"),
			"Ana reset the password of bob", "A one-time password was issued and their sessions were ended."},
		{"sessions ended by an admin", ana(models.ActionSessionsEnded, models.TargetUser, 2, "username=bob"), "Ana ended every session of bob", ""},
		{"own other sessions", models.AuditEvent{Actor: "bob", Action: models.ActionSessionsEnded, TargetType: models.TargetUser, TargetID: 2, Detail: "username=bob; 2 other sessions; this one kept"},
			"Bob signed out their other sessions", "2 other sessions ended."},
		{"one session", models.AuditEvent{Actor: "bob", Action: models.ActionSessionEnded, TargetType: models.TargetUser, TargetID: 2, Detail: "username=bob; Firefox 128 on Linux at 10.0.0.2"},
			"Bob signed out one of their sessions", "Firefox 128 on Linux at 10.0.0.2."},
		{"role", ana(models.ActionRoleChanged, models.TargetUser, 2, "username=bob; role editor -> admin"), "Ana changed the role of bob from editor to admin", ""},
		{"refused", models.AuditEvent{Actor: "vera", Action: models.ActionForbidden, TargetType: models.TargetUser, TargetID: 8, Detail: "POST /admin/pets needs editor; role viewer"},
			"Vera was refused something their role does not allow", "POST /admin/pets needs editor; role viewer"},
		{"webhook added", ana(models.ActionWebhookCreated, models.TargetWebhook, 4, `url="https://partner.example/hook" events=pet.created,pet.deleted`),
			"Ana added the webhook to https://partner.example/hook", "Events: pet.created, pet.deleted."},
		{"webhook deleted", ana(models.ActionWebhookDeleted, models.TargetWebhook, 6, `url="https://gone.example/" events=all`), "Ana deleted the webhook to https://gone.example/", ""},
		{"webhook off", ana(models.ActionWebhookDisabled, models.TargetWebhook, 4, `url="https://partner.example/hook" events=all`), "Ana turned off the webhook to https://partner.example/hook", ""},
		{"webhook off by itself", models.AuditEvent{Actor: "system", ActorKind: models.ActorKindSystem, Action: models.ActionWebhookDisabled, TargetType: models.TargetWebhook, TargetID: 4, Detail: "Disabled automatically: every delivery failed for 72h0m0s."},
			"The webhook to https://partner.example/hook was turned off automatically", "Disabled automatically: every delivery failed for 72h0m0s."},
		{"webhook on", ana(models.ActionWebhookEnabled, models.TargetWebhook, 4, `url="https://partner.example/hook" events=all`), "Ana turned on the webhook to https://partner.example/hook", ""},
		{"secret", ana(models.ActionWebhookSecretRotated, models.TargetWebhook, 4, `url="https://partner.example/hook" previous secret valid until 2026-07-01T12:00:00Z`),
			"Ana replaced the signing secret of the webhook to https://partner.example/hook", "The previous secret signs too until 1 Jul 2026, 14:00 CEST."},
		{"test", ana(models.ActionWebhookTestSent, models.TargetWebhook, 4, `url="https://partner.example/hook" event=99`), "Ana sent a test event to the webhook to https://partner.example/hook", ""},
		{"resent", ana(models.ActionWebhookDeliveryResent, models.TargetWebhook, 4, `url="https://partner.example/hook" delivery=12`),
			"Ana sent delivery 12 of the webhook to https://partner.example/hook again", ""},
		{"an API key acting", models.AuditEvent{Actor: "apikey pst_ab12 (shop)", ActorKind: models.ActorKindAPIKey, Action: models.ActionPetCreated, TargetType: models.TargetPet, TargetID: 7, Detail: `name="Luna" categoryId=2 status=available`},
			"The API key “shop” added Luna (category 2, available)", ""},
		{"archived", ana(models.ActionPetArchived, models.TargetPet, 9, `name="Old Tom" categoryId=2 status=sold`), "Ana archived Old Tom", ""},
		{"restored", ana(models.ActionPetRestored, models.TargetPet, 7, `name="Luna" categoryId=2 status=sold`), "Ana restored Luna from the archive", ""},
		{"purged", models.AuditEvent{Actor: models.ActorArchivePurge, ActorKind: models.ActorKindSystem, Action: models.ActionPetsPurged, TargetType: models.TargetPet,
			Detail: "purged 3 pets archived before 2026-03-01T10:00:00Z: ids 4, 5, 9"},
			"The service deleted for good 3 pets, archived before 2026-03-01T10:00:00Z", "Their ids: 4, 5, 9."},
		{"bulk archive", ana(models.ActionPetsBulkArchive, models.TargetPet, 0, "archived 2 pets of 2 matching when confirmed; filter: status sold"),
			"Ana archived 2 pets of 2 matching when confirmed", "Filter: status sold."},
		{"unknown action", ana("pet.teleported", models.TargetPet, 7, "to the moon"), "Ana: pet teleported, pet “Luna”", "to the moon"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := describeEvent(tt.ev, names, ui.when)
			var b strings.Builder
			for _, p := range s.parts {
				b.WriteString(p.Text)
			}
			if b.String() != tt.want || s.note != tt.note {
				t.Errorf("reads %q, note %q\nwant  %q, note %q", b.String(), s.note, tt.want, tt.note)
			}
		})
	}
}

// Every action has a plain name for the filter.
func TestAuditActionNames(t *testing.T) {
	t.Parallel()
	for _, a := range models.AuditActions {
		if _, ok := auditActionNames[a]; !ok {
			t.Errorf("%s has no plain name", a)
		}
	}
	if got := auditActionName("pet.teleported"); got != "Pet teleported" {
		t.Errorf("an unnamed action reads %q", got)
	}
}

// Times show in the store's zone with the zone named, UTC in datetime.
func TestWhen(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 27, 13, 5, 0, 0, time.UTC)
	for _, tt := range []struct {
		zone string
		want templates.Time
	}{
		{"UTC", templates.Time{Text: "27 Nov 2026, 13:05 UTC", UTC: "2026-11-27T13:05:00Z", Title: "2026-11-27 13:05:00 UTC"}},
		{"Europe/Berlin", templates.Time{Text: "27 Nov 2026, 14:05 CET", UTC: "2026-11-27T13:05:00Z", Title: "Europe/Berlin; 2026-11-27 13:05 UTC"}},
		{"America/Chicago", templates.Time{Text: "27 Nov 2026, 07:05 CST", UTC: "2026-11-27T13:05:00Z", Title: "America/Chicago; 2026-11-27 13:05 UTC"}},
		{"Asia/Dubai", templates.Time{Text: "27 Nov 2026, 17:05 UTC+04", UTC: "2026-11-27T13:05:00Z", Title: "Asia/Dubai; 2026-11-27 13:05 UTC"}},
	} {
		loc, err := time.LoadLocation(tt.zone)
		if err != nil {
			t.Fatal(err)
		}
		if got := (&Web{location: loc}).when(at); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.zone, got, tt.want)
		}
	}
}
