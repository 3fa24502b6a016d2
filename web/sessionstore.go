package web

import (
	"bytes"
	"cmp"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/gin-contrib/sessions"
	"github.com/gorilla/securecookie"
	gsessions "github.com/gorilla/sessions"

	"petstore/models"
)

// sessionStore is the console's gin-contrib/sessions store. A signed-in
// session lives in the database (models.Session): the cookie holds its
// random id, the table only the id's hash. Before sign-in nothing is stored
// on the server: the visitor's few values (the sign-in form's CSRF token,
// flash messages) travel in a cookie signed and encrypted with keys shared
// by every instance, so a flood of visits to the sign-in page costs no
// database write. Every query runs under the request's context and every
// database error is returned, from Get as from Save.
//
// Per-request state (what was loaded, to skip writes that change nothing)
// lives in the request's context, like gorilla's registry; the store itself
// holds only settings, so requests share nothing mutable but the cookie
// options, which a lock guards.
type sessionStore struct {
	store    *models.Store
	codec    *securecookie.SecureCookie
	now      func() time.Time
	idle     time.Duration
	absolute time.Duration
	log      *slog.Logger

	mu   sync.Mutex
	opts sessions.Options
}

// maxCookieBytes bounds the anonymous session's cookie (and what is
// accepted as one): a visitor's values are a token and a flash or two.
const maxCookieBytes = 4096

func newSessionStore(store *models.Store, hashKey, blockKey []byte, idle, absolute time.Duration, opts sessions.Options, log *slog.Logger, now func() time.Time) *sessionStore {
	codec := securecookie.New(hashKey, blockKey)
	codec.MaxAge(int(absolute.Seconds()))
	codec.MaxLength(maxCookieBytes)
	return &sessionStore{store: store, codec: codec, now: now, idle: idle, absolute: absolute, log: log, opts: opts}
}

// loadState is what the store knows of one session during one request.
type loadState struct {
	err       error  // loading failed: Save refuses to write over a session it could not read
	data      []byte // the stored data as loaded or last written, to skip writes that change nothing
	created   time.Time
	clientIP  string
	hadCookie bool // the browser holds a cookie of this name
}

type stateKey string

func stateOf(r *http.Request, name string) *loadState {
	st, _ := r.Context().Value(stateKey(name)).(*loadState)
	return st
}

// Options sets the cookie options of sessions made from now on.
func (st *sessionStore) Options(o sessions.Options) {
	st.mu.Lock()
	st.opts = o
	st.mu.Unlock()
}

func (st *sessionStore) options() *gsessions.Options {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.opts.ToGorillaOptions() // a fresh copy: a session may change its own
}

// Get returns the request's session, loading it once per request.
func (st *sessionStore) Get(r *http.Request, name string) (*gsessions.Session, error) {
	return gsessions.GetRegistry(r).Get(st, name)
}

// New loads the session named by the request's cookie: a signed-in session
// from the database, a visitor's from the signed cookie, or a new empty one
// when the cookie is missing, forged, expired or ended. It returns a usable
// session and the error when the database could not be read.
func (st *sessionStore) New(r *http.Request, name string) (*gsessions.Session, error) {
	sess := gsessions.NewSession(st, name)
	sess.Options = st.options()
	sess.IsNew = true
	state := &loadState{}
	*r = *r.WithContext(context.WithValue(r.Context(), stateKey(name), state))
	ck, err := r.Cookie(name)
	if err != nil {
		return sess, nil
	}
	state.hadCookie = true
	if models.IsSessionID(ck.Value) {
		row, err := st.store.GetSession(r.Context(), ck.Value)
		if models.ErrorCode(err) == models.CodeNotFound {
			return sess, nil
		}
		if err == nil && !st.now().Before(row.ExpiresAt) {
			// Idle or absolute timeout: end it now rather than at the
			// next cleaning.
			err = st.store.DeleteSession(r.Context(), ck.Value)
			if err == nil {
				return sess, nil
			}
		}
		if err != nil {
			state.err = err
			return sess, err
		}
		values, err := decodeValues(row.Data)
		if err != nil {
			st.log.Warn("unreadable session: starting a new one", "error", err)
			return sess, nil
		}
		sess.ID, sess.Values, sess.IsNew = ck.Value, values, false
		state.data, state.created = row.Data, row.CreatedAt
		return sess, nil
	}
	if err := securecookie.DecodeMulti(name, ck.Value, &sess.Values, st.codec); err != nil {
		sess.Values = map[any]any{}
		return sess, nil
	}
	// Only a stored session is signed in: whoever could sign a cookie
	// (with the keys of the settings table) still cannot forge a sign-in.
	delete(sess.Values, keyUserID)
	sess.IsNew = false
	return sess, nil
}

// load loads the request's session and notes the client's address for a
// session started on this request.
func (st *sessionStore) load(r *http.Request, name, clientIP string) (*gsessions.Session, error) {
	sess, err := st.Get(r, name)
	if s := stateOf(r, name); s != nil {
		s.clientIP = clientIP
	}
	return sess, err
}

// renew forgets the request's stored session, if any, so that the next
// Save stores the session under a new id.
func (st *sessionStore) renew(r *http.Request, name string) error {
	sess, err := st.Get(r, name)
	if err != nil || sess.ID == "" {
		return err
	}
	if err := st.store.DeleteSession(r.Context(), sess.ID); err != nil {
		return err
	}
	sess.ID = ""
	if s := stateOf(r, name); s != nil {
		s.data = nil
	}
	return nil
}

// Save writes the session: a signed-in one to the database (only when its
// values changed), a visitor's to the signed cookie. A session that is no
// longer signed in, or whose MaxAge is negative, is deleted from the
// database.
func (st *sessionStore) Save(r *http.Request, w http.ResponseWriter, sess *gsessions.Session) error {
	state := stateOf(r, sess.Name())
	if state == nil {
		state = &loadState{}
	}
	if state.err != nil {
		return state.err
	}
	uid, _ := sess.Values[keyUserID].(int64)
	end := sess.Options.MaxAge < 0
	if sess.ID != "" && (uid <= 0 || end) {
		if err := st.store.DeleteSession(r.Context(), sess.ID); err != nil {
			return err
		}
		sess.ID, state.data = "", nil
	}
	if uid > 0 && !end {
		return st.saveStored(r, w, sess, state, uid)
	}
	return st.saveCookie(w, sess, state, end)
}

func (st *sessionStore) saveStored(r *http.Request, w http.ResponseWriter, sess *gsessions.Session, state *loadState, uid int64) error {
	data, err := encodeValues(sess.Values)
	if err != nil {
		return err
	}
	now := st.now()
	if sess.ID == "" {
		id, err := st.store.CreateSession(r.Context(), models.Session{UserID: uid, Data: data, ClientIP: state.clientIP,
			UserAgent: r.UserAgent(), CreatedAt: now, UpdatedAt: now, ExpiresAt: st.expiry(now, now)})
		if err != nil {
			return err
		}
		sess.ID, state.data, state.created, state.hadCookie = id, data, now, true
		http.SetCookie(w, gsessions.NewCookie(sess.Name(), id, sess.Options))
		return nil
	}
	if bytes.Equal(data, state.data) {
		return nil // nothing changed; last-seen is a value (keySeenAt) written once a minute
	}
	if err := st.store.UpdateSession(r.Context(), sess.ID, data, now, st.expiry(state.created, now)); err != nil {
		return err
	}
	state.data = data
	return nil
}

// expiry is when a session started at created and used at now ends unless
// used again: after the idle timeout, and never past the absolute one.
func (st *sessionStore) expiry(created, now time.Time) time.Time {
	idle, absolute := now.Add(st.idle), created.Add(st.absolute)
	if absolute.Before(idle) {
		return absolute
	}
	return idle
}

func (st *sessionStore) saveCookie(w http.ResponseWriter, sess *gsessions.Session, state *loadState, end bool) error {
	if end || len(sess.Values) == 0 {
		if state.hadCookie {
			o := *sess.Options
			o.MaxAge = -1
			http.SetCookie(w, gsessions.NewCookie(sess.Name(), "", &o))
			state.hadCookie = false
		}
		return nil
	}
	v, err := securecookie.EncodeMulti(sess.Name(), sess.Values, st.codec)
	if err != nil {
		return fmt.Errorf("encode session cookie: %w", err)
	}
	http.SetCookie(w, gsessions.NewCookie(sess.Name(), v, sess.Options))
	state.hadCookie = true
	return nil
}

// sessionValue is one session value as stored. Values are stored sorted by
// key, so equal values encode to equal bytes and an unchanged session is
// not written again.
type sessionValue struct {
	Key   string
	Value any
}

func encodeValues(values map[any]any) ([]byte, error) {
	list := make([]sessionValue, 0, len(values))
	for k, v := range values {
		key, ok := k.(string)
		if !ok {
			return nil, fmt.Errorf("session key %v is not a string", k)
		}
		list = append(list, sessionValue{key, v})
	}
	slices.SortFunc(list, func(a, b sessionValue) int { return cmp.Compare(a.Key, b.Key) })
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(list); err != nil {
		return nil, fmt.Errorf("encode session: %w", err)
	}
	return buf.Bytes(), nil
}

func decodeValues(data []byte) (map[any]any, error) {
	var list []sessionValue
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&list); err != nil {
		return nil, fmt.Errorf("decode session: %w", err)
	}
	values := make(map[any]any, len(list))
	for _, v := range list {
		values[v.Key] = v.Value
	}
	if len(values) != len(list) {
		return nil, errors.New("decode session: duplicate keys")
	}
	return values, nil
}
