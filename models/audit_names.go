package models

import (
	"context"
	"slices"
)

// AuditNames returns what the things events act on are called now, by
// target type and id: pets' names, staff members' usernames, API keys'
// names and webhooks' URLs. It reads one query per type, whatever the
// number of events; a thing that no longer exists is absent, and the
// audit trail then names it from the event's own detail.
func (s *Store) AuditNames(ctx context.Context, events []AuditEvent) (map[string]map[int64]string, error) {
	ids := map[string][]int64{}
	for _, ev := range events {
		if ev.TargetID > 0 && !slices.Contains(ids[ev.TargetType], ev.TargetID) {
			ids[ev.TargetType] = append(ids[ev.TargetType], ev.TargetID)
		}
	}
	out := map[string]map[int64]string{}
	for _, t := range []struct{ typ, column string }{
		{TargetPet, "name"}, {TargetUser, "username"}, {TargetAPIKey, "name"}, {TargetWebhook, "url"},
	} {
		if len(ids[t.typ]) == 0 {
			continue
		}
		var model any
		switch t.typ {
		case TargetPet:
			model = &Pet{}
		case TargetUser:
			model = &User{}
		case TargetAPIKey:
			model = &APIKey{}
		case TargetWebhook:
			model = &Webhook{}
		}
		var rows []struct {
			ID   int64
			Name string
		}
		err := s.db.WithContext(ctx).Model(model).Select("id", t.column+" AS name").Where("id IN ?", ids[t.typ]).Find(&rows).Error
		if err != nil {
			return nil, s.dbErr("read audit names", err)
		}
		names := make(map[int64]string, len(rows))
		for _, r := range rows {
			names[r.ID] = r.Name
		}
		if t.typ == TargetPet && len(rows) < len(ids[t.typ]) {
			// An archived pet is still called by its name.
			var missing []int64
			for _, id := range ids[t.typ] {
				if _, ok := names[id]; !ok {
					missing = append(missing, id)
				}
			}
			rows = rows[:0]
			if err := s.db.WithContext(ctx).Model(&ArchivedPet{}).Select("id", "name").Where("id IN ?", missing).Find(&rows).Error; err != nil {
				return nil, s.dbErr("read audit names", err)
			}
			for _, r := range rows {
				names[r.ID] = r.Name
			}
		}
		out[t.typ] = names
	}
	return out, nil
}
