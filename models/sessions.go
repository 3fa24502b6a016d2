package models

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
)

// Session is one signed-in console session. Its id is a random secret that
// only the browser's cookie holds: the table keeps the SHA-256 of it, so a
// leaked table cannot be replayed as cookies. Visitors who have not signed
// in have no row (their session is a signed cookie), so a flood of visits
// stores nothing.
type Session struct {
	// Handle names a stored session in the account's list of sessions and
	// its forms: the hash of its id (SessionHandle), which the table holds
	// and which no cookie can be made from. CreateSession ignores it.
	Handle string
	// UserID is the signed-in account.
	UserID int64
	// Data is the session's values, encoded by the console.
	Data []byte
	// ClientIP and UserAgent say where the session was started, for a
	// list of an account's sessions; they are cut to their columns' sizes.
	ClientIP  string
	UserAgent string
	CreatedAt time.Time
	// UpdatedAt is when the session was last written (last seen).
	UpdatedAt time.Time
	// ExpiresAt is when the session ends unless it is used again; the
	// console ends a session found past it, DeleteExpiredSessions the rest.
	ExpiresAt time.Time
}

// sessionRow is a Session as stored.
type sessionRow struct {
	IDHash    string `gorm:"column:id_hash;primaryKey"`
	UserID    int64
	Data      []byte
	ClientIP  string `gorm:"column:client_ip"`
	UserAgent string
	CreatedAt time.Time `gorm:"autoCreateTime:false"`
	UpdatedAt time.Time `gorm:"autoUpdateTime:false"`
	ExpiresAt time.Time
}

func (sessionRow) TableName() string { return "sessions" }

// Column sizes of the descriptive session fields.
const (
	maxSessionClientIP  = 64
	maxSessionUserAgent = 255
)

// sessionIDLen is the length of a session id: 32 random bytes, base64url.
const sessionIDLen = 43

// IsSessionID reports whether s has the shape of a session id, so that a
// cookie holding something else is not looked up.
func IsSessionID(s string) bool {
	if len(s) != sessionIDLen {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil
}

// SessionHandle returns the handle of the session with id (see
// Session.Handle).
func SessionHandle(id string) string { return hashSessionID(id) }

// hashSessionID returns the key a session id is stored under.
func hashSessionID(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}

// CreateSession stores a new session and returns its id, the secret for
// the browser's cookie: it is not kept, only its hash.
func (s *Store) CreateSession(ctx context.Context, sess Session) (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", internal("session id", err)
	}
	id := base64.RawURLEncoding.EncodeToString(b)
	row := sessionRow{IDHash: hashSessionID(id), UserID: sess.UserID, Data: sess.Data,
		ClientIP: truncate(sess.ClientIP, maxSessionClientIP), UserAgent: truncate(sess.UserAgent, maxSessionUserAgent),
		CreatedAt: sess.CreatedAt, UpdatedAt: sess.UpdatedAt, ExpiresAt: sess.ExpiresAt}
	err := s.transaction(ctx, func(tx *gorm.DB) error { return tx.Create(&row).Error })
	if err != nil {
		return "", s.dbErr("create session", err)
	}
	return id, nil
}

// GetSession returns the session with id, not_found when there is none.
// An expired session is returned too (its ExpiresAt is past), so that the
// caller can end it: check ExpiresAt before trusting it.
func (s *Store) GetSession(ctx context.Context, id string) (Session, error) {
	var row sessionRow
	err := s.db.WithContext(ctx).Where("id_hash = ?", hashSessionID(id)).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Session{}, &Error{Code: CodeNotFound, Message: "The session has ended."}
	}
	if err != nil {
		return Session{}, s.dbErr("get session", err)
	}
	return row.session(), nil
}

func (row sessionRow) session() Session {
	return Session{Handle: row.IDHash, UserID: row.UserID, Data: row.Data, ClientIP: row.ClientIP, UserAgent: row.UserAgent,
		CreatedAt: row.CreatedAt, UpdatedAt: row.UpdatedAt, ExpiresAt: row.ExpiresAt}
}

// UpdateSession replaces the data of session id and records it as seen at
// seen, to end at expires. A session deleted meanwhile (signed out on
// another tab, ended by an administrator) stays deleted.
func (s *Store) UpdateSession(ctx context.Context, id string, data []byte, seen, expires time.Time) error {
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		return tx.Model(&sessionRow{}).Where("id_hash = ?", hashSessionID(id)).
			Updates(map[string]any{"data": data, "updated_at": seen, "expires_at": expires}).Error
	})
	return s.dbErr("update session", err)
}

// DeleteSession ends the session with id.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		return tx.Where("id_hash = ?", hashSessionID(id)).Delete(&sessionRow{}).Error
	})
	return s.dbErr("delete session", err)
}

// ListUserSessions returns the account's sessions that have not expired,
// the most recently seen first (UpdatedAt, which the console writes at most
// once a minute per session). The data stays behind.
func (s *Store) ListUserSessions(ctx context.Context, userID int64) ([]Session, error) {
	var rows []sessionRow
	err := s.db.WithContext(ctx).Omit("data").Where("user_id = ? AND expires_at > ?", userID, s.now()).
		Order("updated_at DESC").Order("id_hash").Find(&rows).Error
	if err != nil {
		return nil, s.dbErr("list user sessions", err)
	}
	list := make([]Session, 0, len(rows))
	for _, row := range rows {
		list = append(list, row.session())
	}
	return list, nil
}

// EndUserSession signs the account userID out of its session handle (one
// browser) and records it, with what describes the session (such as its
// browser and address). A handle that names none of the account's sessions
// is not_found.
func (s *Store) EndUserSession(ctx context.Context, userID int64, handle, describe string) error {
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		var u User
		if err := tx.Where("id = ?", userID).Take(&u).Error; err != nil {
			return err
		}
		res := tx.Where("user_id = ? AND id_hash = ?", userID, handle).Delete(&sessionRow{})
		if res.Error != nil || res.RowsAffected == 0 {
			return cmp.Or(res.Error, gorm.ErrRecordNotFound)
		}
		return auditUser(tx, s.now(), u.Username, ActionSessionEnded, u, describe)
	})
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return &Error{Code: CodeNotFound, Message: "This session has ended already."}
	}
	return s.dbErr("end user session", err)
}

// EndOtherSessions signs the account userID out of every session but keep
// (a handle), records it, and returns how many ended.
func (s *Store) EndOtherSessions(ctx context.Context, userID int64, keep string) (int64, error) {
	var n int64
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		var u User
		if err := tx.Where("id = ?", userID).Take(&u).Error; err != nil {
			return err
		}
		res := tx.Where("user_id = ? AND id_hash <> ?", userID, keep).Delete(&sessionRow{})
		if n = res.RowsAffected; res.Error != nil || n == 0 {
			return res.Error
		}
		return auditUser(tx, s.now(), u.Username, ActionSessionsEnded, u, fmt.Sprintf("%d other sessions; this one kept", n))
	})
	return n, s.accountErr(userID, "end other sessions", err)
}

// endSessions deletes every stored session of the account userID within
// tx, beside the session-version bump that refuses them: the rows go at
// once instead of waiting for their expiry.
func endSessions(tx *gorm.DB, userID int64) error {
	return tx.Where("user_id = ?", userID).Delete(&sessionRow{}).Error
}

// DeleteExpiredSessions removes sessions past their expiry.
func (s *Store) DeleteExpiredSessions(ctx context.Context) (int64, error) {
	var n int64
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		res := tx.Where("expires_at < ?", s.now()).Delete(&sessionRow{})
		n = res.RowsAffected
		return res.Error
	})
	return n, s.dbErr("delete expired sessions", err)
}

// SessionKeys returns the keys that sign and encrypt the console's session
// cookies, shared by every instance through the settings table (created on
// first use): a 64-byte HMAC key and a 32-byte AES key.
func (s *Store) SessionKeys(ctx context.Context) (hashKey, blockKey []byte, err error) {
	hk, err := s.sharedSetting(ctx, "session_hash_key", func() string { return randomHex(64) })
	if err != nil {
		return nil, nil, err
	}
	bk, err := s.sharedSetting(ctx, "session_block_key", func() string { return randomHex(32) })
	if err != nil {
		return nil, nil, err
	}
	hashKey, err1 := hex.DecodeString(hk)
	blockKey, err2 := hex.DecodeString(bk)
	if err := errors.Join(err1, err2); err != nil {
		return nil, nil, internal("decode session keys", err)
	}
	return hashKey, blockKey, nil
}

// truncate cuts s to at most n bytes of valid UTF-8 (a header may hold
// any bytes; MySQL refuses invalid utf8mb4) without splitting a character.
func truncate(s string, n int) string {
	s = strings.ToValidUTF8(s, "")
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
