package web

import (
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"petstore/models"
	"petstore/templates"
)

// auditActionNames are the plain names of the audit actions, as the
// trail's filter offers them.
var auditActionNames = map[string]string{
	models.ActionPetCreated:            "Pet added",
	models.ActionPetStatusChanged:      "Pet status changed",
	models.ActionPetEdited:             "Pet edited",
	models.ActionPetsSeeded:            "Example pets added",
	models.ActionPetsExported:          "Pets exported",
	models.ActionPetsBulkStatus:        "Status set for every match",
	models.ActionPetArchived:           "Pet archived",
	models.ActionPetRestored:           "Pet restored from the archive",
	models.ActionPetsPurged:            "Archived pets deleted for good",
	models.ActionPetsBulkArchive:       "Every match archived",
	models.ActionPetUndone:             "Change undone",
	models.ActionPetsImported:          "Pets imported from CSV",
	models.ActionPasswordAccepted:      "Password accepted, second step next",
	models.ActionTwoFactorEnabled:      "Two-step sign-in turned on",
	models.ActionTwoFactorDisabled:     "Two-step sign-in turned off",
	models.ActionTwoFactorReset:        "Two-step sign-in reset",
	models.ActionRecoveryCodesRenewed:  "New recovery codes",
	models.ActionRecoveryCodeUsed:      "Recovery code used",
	models.ActionSecondStepFailed:      "Failed second step",
	models.ActionTwoFactorRequired:     "Two-step sign-in required for a role",
	models.ActionTwoFactorOptional:     "Two-step sign-in optional for a role",
	models.ActionPasskeyAdded:          "Passkey added",
	models.ActionPasskeyRemoved:        "Passkey removed",
	models.ActionKeyCreated:            "API key created",
	models.ActionKeyRevoked:            "API key revoked",
	models.ActionUserCreated:           "Staff member added",
	models.ActionPasswordChanged:       "Own password changed",
	models.ActionLogin:                 "Signed in",
	models.ActionLoginFailed:           "Failed sign-in",
	models.ActionUserDisabled:          "Account disabled",
	models.ActionUserEnabled:           "Account enabled",
	models.ActionPasswordReset:         "Password reset",
	models.ActionSessionsEnded:         "Sessions ended",
	models.ActionSessionEnded:          "Signed out a session",
	models.ActionRoleChanged:           "Role changed",
	models.ActionForbidden:             "Refused for the role",
	models.ActionWebhookCreated:        "Webhook added",
	models.ActionWebhookDeleted:        "Webhook deleted",
	models.ActionWebhookDisabled:       "Webhook turned off",
	models.ActionWebhookEnabled:        "Webhook turned on",
	models.ActionWebhookSecretRotated:  "Webhook secret replaced",
	models.ActionWebhookTestSent:       "Webhook test sent",
	models.ActionWebhookDeliveryResent: "Webhook delivery sent again",
}

// auditActionName is an action's plain name; an action without one reads
// as its code in words ("pet.archived": "Pet archived").
func auditActionName(action string) string {
	if n, ok := auditActionNames[action]; ok {
		return n
	}
	return capitalize(strings.NewReplacer(".", " ", "_", " ").Replace(action))
}

// scopeWords are the API key scopes as staff say them.
var scopeWords = map[string]string{"pets:read": "read pets", "pets:write": "change pets", "metrics:read": "read metrics"}

// auditNames are the current names of what a page's events act on
// (Store.AuditNames), and which kinds of thing link to their pages: those
// the member may open, and no pet on its own page.
type auditNames struct {
	names                          map[string]map[int64]string
	petLinks, userLinks, hookLinks bool
}

func (n auditNames) name(ev models.AuditEvent) (string, bool) {
	s, ok := n.names[ev.TargetType][ev.TargetID]
	return s, ok
}

// sentence is an event told in words: parts to show in a row, one of them
// the actor, and a note of what the sentence leaves out.
type sentence struct {
	parts []templates.AuditPart
	note  string
}

func (s *sentence) say(text string) { s.parts = append(s.parts, templates.AuditPart{Text: text}) }

func (s *sentence) link(text, href string) {
	s.parts = append(s.parts, templates.AuditPart{Text: text, Href: href})
}

func (s *sentence) actor(text string) {
	s.parts = append(s.parts, templates.AuditPart{Text: text, Actor: true})
}

// who says who acted: a staff member by username, or the kind of actor.
func (s *sentence) who(ev models.AuditEvent) {
	switch ev.ActorKind {
	case models.ActorKindAPIKey:
		name := ev.Actor
		if i, j := strings.IndexByte(name, '('), strings.LastIndexByte(name, ')'); i >= 0 && j > i {
			name = name[i+1 : j]
		}
		s.say("the API key “")
		s.actor(name)
		s.say("”")
	case models.ActorKindCLI:
		s.say("someone at the command line")
	case models.ActorKindSystem:
		if ev.Actor == models.ActorFirstStart {
			s.say("the service, on its first start,")
		} else {
			s.say("the service")
		}
	case models.ActorKindAnonymous:
		s.say("someone")
	default:
		s.actor(ev.Actor)
	}
}

// pet names the pet acted on: its name now, linked to its page, or the
// name the event recorded when it is gone.
func (s *sentence) pet(ev models.AuditEvent, n auditNames, recorded string) {
	if name, ok := n.name(ev); ok && n.petLinks {
		s.link(name, petPath(ev.TargetID))
		return
	} else if ok {
		s.say(name)
		return
	}
	if recorded != "" {
		s.say(recorded)
		return
	}
	s.say("pet #" + strconv.FormatInt(ev.TargetID, 10))
}

// member names the staff member acted on.
func (s *sentence) member(ev models.AuditEvent, n auditNames, recorded string) {
	name, ok := n.name(ev)
	switch {
	case ok && n.userLinks:
		s.link(name, Prefix+"/users/"+strconv.FormatInt(ev.TargetID, 10))
	case ok:
		s.say(name)
	case recorded != "":
		s.say(recorded)
	default:
		s.say("a removed account")
	}
}

// webhook names the webhook acted on by the address it delivers to.
func (s *sentence) webhook(ev models.AuditEvent, n auditNames) {
	url, ok := n.name(ev)
	if !ok {
		url = quotedField(ev.Detail, "url")
	}
	s.say("the webhook to ")
	if ok && n.hookLinks {
		s.link(url, Prefix+"/webhooks/"+strconv.FormatInt(ev.TargetID, 10))
	} else if url != "" {
		s.say(url)
	} else {
		s.say("a removed address")
	}
}

// describeEvent tells ev as a sentence a store employee reads at a
// glance. when shows a recorded time in the store's zone.
func describeEvent(ev models.AuditEvent, n auditNames, when func(time.Time) templates.Time) sentence {
	var s sentence
	fields := detailFields(ev.Detail)
	switch ev.Action {
	case models.ActionPetCreated:
		s.who(ev)
		s.say(" added ")
		s.pet(ev, n, quotedField(ev.Detail, "name"))
		if c, st := plainField(ev.Detail, "categoryId"), plainField(ev.Detail, "status"); c != "" {
			s.say(" (category " + c + ", " + st + ")")
		}
	case models.ActionPetStatusChanged:
		from, to, _ := strings.Cut(ev.Detail, " -> ")
		s.who(ev)
		s.say(" changed ")
		s.pet(ev, n, "")
		s.say("'s status from " + from + " to " + to)
	case models.ActionPetEdited:
		s.who(ev)
		s.say(" edited ")
		s.pet(ev, n, "")
		s.say(": " + editWords(ev.Detail))
	case models.ActionPetUndone:
		s.who(ev)
		s.say(" undid a change to ")
		s.pet(ev, n, "")
		s.say(": " + editWords(ev.Detail))
	case models.ActionPetsSeeded, models.ActionPetsImported:
		s.who(ev)
		s.say(" " + ev.Detail)
	case models.ActionPetArchived, models.ActionPetRestored:
		s.who(ev)
		if ev.Action == models.ActionPetArchived {
			s.say(" archived ")
		} else {
			s.say(" restored ")
		}
		s.pet(ev, n, quotedField(ev.Detail, "name"))
		if ev.Action == models.ActionPetRestored {
			s.say(" from the archive")
		}
	case models.ActionPetsPurged:
		what, ids, _ := strings.Cut(ev.Detail, ": ids ")
		s.who(ev)
		s.say(" deleted for good " + strings.Replace(strings.TrimPrefix(what, "purged "), " archived before ", ", archived before ", 1))
		if ids != "" {
			s.note = "Their ids: " + ids + "."
		}
	case models.ActionPetsBulkStatus, models.ActionPetsBulkArchive:
		what, filter, _ := strings.Cut(ev.Detail, "; filter: ")
		s.who(ev)
		s.say(" " + what)
		if filter != "" {
			s.note = "Filter: " + filter + "."
		}
	case models.ActionPetsExported:
		what, filter, _ := strings.Cut(ev.Detail, "; filter: ")
		s.who(ev)
		if strings.HasPrefix(what, "exported ") {
			s.say(" " + what)
		} else {
			s.say(" started a CSV export, " + strings.Replace(strings.TrimPrefix(what, "CSV export "), " after ", " after sending ", 1))
		}
		if filter != "" {
			s.note = "Filter: " + filter + "."
		}
	case models.ActionKeyCreated, models.ActionKeyRevoked:
		name, ok := n.name(ev)
		if !ok {
			name = quotedField(ev.Detail, "name")
		}
		s.who(ev)
		verb := " created"
		if ev.Action == models.ActionKeyRevoked {
			verb = " revoked"
		}
		s.say(verb + " the API key “" + name + "”")
		if sc := quotedField(ev.Detail, "scopes"); sc != "" {
			var words []string
			for _, w := range strings.Fields(sc) {
				if sw, ok := scopeWords[w]; ok {
					w = sw
				}
				words = append(words, w)
			}
			s.say(" (" + strings.Join(words, ", ") + ")")
		}
		if exp := plainField(ev.Detail, "expires"); exp != "" && exp != "never" {
			if t, err := time.Parse(time.RFC3339, exp); err == nil {
				s.note = "It expires on " + when(t).Text + "."
			}
		}
	case models.ActionUserCreated:
		s.who(ev)
		s.say(" added the staff member ")
		s.member(ev, n, fields["username"])
		if r := fields["role"]; r != "" {
			s.say(" as " + article(r) + " " + r)
		}
	case models.ActionPasswordChanged:
		s.who(ev)
		s.say(" changed their password")
		s.note = "Their other sessions were ended."
	case models.ActionLogin:
		s.who(ev)
		s.say(" signed in")
		s.note = sentenceOf(strings.Replace(ev.Detail, " with ", ", with ", 1))
	case models.ActionLoginFailed:
		what, from, _ := strings.Cut(ev.Detail, " from ")
		s.say("someone failed to ")
		change, confirming := strings.CutPrefix(what, models.PasswordCheckBefore)
		switch {
		case strings.HasPrefix(what, "password change"):
			s.say("change the password of ")
		case confirming:
			s.say("give the password of ")
			s.note = "Asked before " + change + ". "
		default:
			s.say("sign in as ")
		}
		if ev.ActorKind == models.ActorKindAnonymous {
			s.say("an unknown username")
		} else {
			s.actor(ev.Actor)
		}
		if strings.HasSuffix(what, "of a disabled account") {
			s.note = "The account is disabled. "
		}
		if from != "" {
			s.note += "From " + from + "."
		}
	case models.ActionUserDisabled:
		s.who(ev)
		s.say(" disabled the account of ")
		s.member(ev, n, fields["username"])
		s.note = "Their sessions were ended; the API keys they created still work."
	case models.ActionUserEnabled:
		s.who(ev)
		s.say(" enabled the account of ")
		s.member(ev, n, fields["username"])
		s.say(" again")
	case models.ActionTwoFactorEnabled, models.ActionTwoFactorDisabled, models.ActionRecoveryCodesRenewed, models.ActionPasswordAccepted,
		models.ActionRecoveryCodeUsed, models.ActionSecondStepFailed, models.ActionPasskeyAdded, models.ActionPasskeyRemoved:
		s.member(ev, n, fields["username"])
		s.say(map[string]string{
			models.ActionTwoFactorEnabled:     " turned on two-step sign-in",
			models.ActionTwoFactorDisabled:    " turned off two-step sign-in",
			models.ActionRecoveryCodesRenewed: " made new recovery codes",
			models.ActionRecoveryCodeUsed:     " signed in with a recovery code",
			models.ActionPasswordAccepted:     " typed the right password; the second step comes next",
			models.ActionSecondStepFailed:     " failed the second step of signing in",
			models.ActionPasskeyAdded:         " added a passkey",
			models.ActionPasskeyRemoved:       " removed a passkey",
		}[ev.Action])
		s.note = capitalFirst(fields[""])
	case models.ActionTwoFactorReset:
		s.who(ev)
		s.say(" reset the two-step sign-in of ")
		s.member(ev, n, fields["username"])
		s.note = capitalFirst(fields[""])
	case models.ActionTwoFactorRequired, models.ActionTwoFactorOptional:
		s.who(ev)
		if ev.Action == models.ActionTwoFactorRequired {
			s.say(" required two-step sign-in of every " + fields["role"])
		} else {
			s.say(" made two-step sign-in optional for every " + fields["role"])
		}
	case models.ActionPasswordReset:
		s.who(ev)
		s.say(" reset the password of ")
		s.member(ev, n, fields["username"])
		s.note = "A one-time password was issued and their sessions were ended."
	case models.ActionSessionsEnded:
		s.who(ev)
		if ev.Actor == fields["username"] {
			s.say(" signed out their other sessions")
			if k := fields[""]; k != "" {
				s.note = sentenceOf(strings.Replace(k, "; this one kept", "", 1) + " ended")
			}
		} else {
			s.say(" ended every session of ")
			s.member(ev, n, fields["username"])
		}
	case models.ActionSessionEnded:
		s.who(ev)
		s.say(" signed out one of their sessions")
		s.note = sentenceOf(fields[""])
	case models.ActionRoleChanged:
		from, to, _ := strings.Cut(strings.TrimPrefix(fields[""], "role "), " -> ")
		s.who(ev)
		s.say(" changed the role of ")
		s.member(ev, n, fields["username"])
		s.say(" from " + from + " to " + to)
	case models.ActionForbidden:
		s.who(ev)
		s.say(" was refused something their role does not allow")
		s.note = ev.Detail
	case models.ActionWebhookCreated, models.ActionWebhookDeleted, models.ActionWebhookEnabled, models.ActionWebhookTestSent:
		s.who(ev)
		s.say(map[string]string{models.ActionWebhookCreated: " added ", models.ActionWebhookDeleted: " deleted ",
			models.ActionWebhookEnabled: " turned on ", models.ActionWebhookTestSent: " sent a test event to "}[ev.Action])
		s.webhook(ev, n)
		if ev.Action == models.ActionWebhookCreated {
			if types := plainField(ev.Detail, "events"); types != "" && types != "all" {
				s.note = "Events: " + strings.ReplaceAll(types, ",", ", ") + "."
			} else {
				s.note = "Every kind of event."
			}
		}
	case models.ActionWebhookDisabled:
		if ev.ActorKind == models.ActorKindSystem {
			s.webhook(ev, n)
			s.say(" was turned off automatically")
			s.note = ev.Detail
			break
		}
		s.who(ev)
		s.say(" turned off ")
		s.webhook(ev, n)
	case models.ActionWebhookSecretRotated:
		s.who(ev)
		s.say(" replaced the signing secret of ")
		s.webhook(ev, n)
		if _, until, ok := strings.Cut(ev.Detail, "valid until "); ok {
			if t, err := time.Parse(time.RFC3339, until); err == nil {
				s.note = "The previous secret signs too until " + when(t).Text + "."
			}
		}
	case models.ActionWebhookDeliveryResent:
		s.who(ev)
		s.say(" sent delivery " + plainField(ev.Detail, "delivery") + " of ")
		s.webhook(ev, n)
		s.say(" again")
	default:
		s.who(ev)
		s.say(": " + strings.ToLower(auditActionName(ev.Action)))
		if ev.TargetID > 0 {
			s.say(", " + ev.TargetType + " ")
			if name, ok := n.name(ev); ok {
				s.say("“" + name + "”")
			} else {
				s.say("#" + strconv.FormatInt(ev.TargetID, 10))
			}
		}
		s.note = ev.Detail
	}
	if len(s.parts) > 0 {
		s.parts[0].Text = capitalize(s.parts[0].Text)
	}
	return s
}

// detailFields reads a detail of "key=value; key=value; words" (the
// staff events' form): its keyed fields, and the rest under "".
func detailFields(d string) map[string]string {
	out := map[string]string{}
	var rest []string
	for _, part := range strings.Split(d, "; ") {
		if k, v, ok := strings.Cut(part, "="); ok && !strings.ContainsAny(k, " \"") {
			out[k] = v
			continue
		}
		rest = append(rest, part)
	}
	out[""] = strings.Join(rest, "; ")
	return out
}

// quotedField reads key="value" (Go quoting) from a detail.
func quotedField(d, key string) string {
	i := strings.Index(d, key+"=\"")
	if i < 0 {
		return ""
	}
	q, err := strconv.QuotedPrefix(d[i+len(key)+1:])
	if err != nil {
		return ""
	}
	s, _ := strconv.Unquote(q)
	return s
}

// plainField reads key=value (up to a space) from a detail.
func plainField(d, key string) string {
	for _, f := range strings.Fields(d) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			return v
		}
	}
	return ""
}

// editWords tells an edit's changes: `name "Rex" -> "Max"; status
// available -> sold` reads `name from “Rex” to “Max”, status from
// available to sold`.
func editWords(d string) string {
	var out []string
	for _, part := range strings.Split(d, "; ") {
		field, change, _ := strings.Cut(part, " ")
		from, to, ok := strings.Cut(change, " -> ")
		if !ok {
			out = append(out, part)
			continue
		}
		if field == "name" {
			if f, err := strconv.Unquote(from); err == nil {
				from = "“" + f + "”"
			}
			if t, err := strconv.Unquote(to); err == nil {
				to = "“" + t + "”"
			}
		}
		if field == "categoryId" {
			field = "category"
		}
		out = append(out, field+" from "+from+" to "+to)
	}
	return strings.Join(out, ", ")
}

// sentenceOf makes words a sentence: a capital and a full stop.
func sentenceOf(words string) string {
	if words == "" {
		return ""
	}
	return capitalize(words) + "."
}

// joinNote adds more to a note.
func joinNote(note, more string) string {
	if note == "" {
		return capitalize(more) + "."
	}
	return strings.TrimSuffix(note, ".") + " (" + more + ")."
}

func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 || !unicode.IsLower(r) {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// article is "an" before a vowel ("an editor", "an admin"), else "a".
func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}

// capitalFirst starts a note with a capital.
func capitalFirst(t string) string {
	if t == "" {
		return ""
	}
	return strings.ToUpper(t[:1]) + t[1:] + "."
}
