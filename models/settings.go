package models

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// setting is one shared value, such as the session keys, that every
// instance reads from the database.
type setting struct {
	Name      string `gorm:"primaryKey"`
	Value     string
	CreatedAt time.Time
}

// sharedSetting returns the shared setting name, creating it with create()
// the first time. Instances racing to create it all end up with the first
// value.
func (s *Store) sharedSetting(ctx context.Context, name string, create func() string) (string, error) {
	db := s.db.WithContext(ctx)
	var st setting
	err := db.Where("name = ?", name).Take(&st).Error
	if err == nil {
		return st.Value, nil
	}
	if !errors.Is(err, gorm.ErrRecordNotFound) {
		return "", s.dbErr("read setting", err)
	}
	st = setting{Name: name, Value: create(), CreatedAt: s.now()}
	err = retry(ctx, func() error { return db.Clauses(clause.OnConflict{DoNothing: true}).Create(&st).Error })
	if err != nil {
		return "", s.dbErr("create setting", err)
	}
	if err := db.Where("name = ?", name).Take(&st).Error; err != nil {
		return "", s.dbErr("read setting", err)
	}
	return st.Value, nil
}

// randomHex returns n random bytes, hex encoded.
func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return hex.EncodeToString(b)
}
