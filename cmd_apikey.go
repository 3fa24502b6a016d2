package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"petstore/models"
)

func (c cli) apikeyCreate(ctx context.Context, args []string) int {
	var name, expires string
	var scopes []string
	fs, code, ok := c.flags("apikey create --name NAME [--scope pets:read] [--scope pets:write] [--expires 90d|RFC 3339 time]",
		"Issues an API key for a partner and prints it alone on stdout. It is shown only this once.", args,
		func(fs *flag.FlagSet) {
			fs.StringVar(&name, "name", "", "who or what the key is for, such as the partner's app (required)")
			fs.Func("scope", "a scope the key grants: pets:read (the GET operations), pets:write (POST /v1/pets) or\n"+
				"metrics:read (never granted unless named); repeat the flag or separate scopes with commas\n"+
				"(default pets:read,pets:write)", func(s string) error {
				scopes = append(scopes, s)
				return nil
			})
			fs.StringVar(&expires, "expires", "", "when the key stops working: a number of days from now (90d), a date\n"+
				"(2027-03-01: from 00:00 UTC that day) or an RFC 3339 time (2027-03-01T12:00:00Z); default: never")
		})
	if !ok {
		return code
	}
	if name == "" || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	if len(scopes) == 0 {
		scopes = []string{models.DefaultScopes.String()}
	}
	// Bad values (a name, scopes that are unknown or none, as --scope ''
	// gives, an expiry) are bad usage, refused before the database is
	// opened, in one line: the first bad field's.
	in := models.APIKeyInput{Name: name, Scopes: scopes, Expires: expires}
	if _, err := in.Validate(time.Now()); err != nil {
		return c.badUsage(firstField(err))
	}
	store, err := c.open(ctx)
	if err != nil {
		return c.fail(err)
	}
	defer store.Close()
	_, key, err := store.CreateAPIKeyFrom(ctx, models.APIKeyInput{Name: name, Scopes: scopes, Expires: expires}, models.ActorCLI)
	if err != nil {
		return c.fail(userMessage(err))
	}
	fmt.Fprintln(c.stdout, key)
	return 0
}

// firstField is a validation error's first field error, whose message
// says what is wrong with that field alone; other errors are as they are.
func firstField(err error) error {
	if e := (*models.Error)(nil); errors.As(err, &e) && len(e.Fields) > 0 {
		return &models.Error{Code: e.Code, Message: e.Fields[0].Message}
	}
	return err
}

// badUsage prints a refused flag value's message in one line and returns
// exit code 2.
func (c cli) badUsage(err error) int {
	fmt.Fprintf(c.stderr, "petstore: %v\n", userMessage(err))
	return 2
}

func (c cli) apikeyList(ctx context.Context, args []string) int {
	if _, code, ok := c.flags("apikey list", "Lists API keys: id, name, public prefix, scopes, creator, times (expiry, last use, last call of the deprecated GET /v1/pets/{petId}, revocation) and state (active, expired or revoked). Keys themselves are never stored, so never shown.", args, nil); !ok {
		return code
	}
	store, err := c.open(ctx)
	if err != nil {
		return c.fail(err)
	}
	defer store.Close()
	keys, err := store.ListAPIKeys(ctx)
	if err != nil {
		return c.fail(userMessage(err))
	}
	now := time.Now()
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tPREFIX\tSCOPES\tCREATED BY\tCREATED\tEXPIRES\tLAST USED\tLAST DEPRECATED CALL\tREVOKED\tSTATE")
	for _, k := range keys {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Name, k.Prefix,
			strings.Join(k.Scopes.Names(), ","), k.CreatedBy, k.CreatedAt.Format(time.RFC3339), timeOrDash(k.ExpiresAt),
			timeOrDash(k.LastUsedAt), timeOrDash(k.DeprecatedCallAt), timeOrDash(k.RevokedAt), keyState(k, now))
	}
	tw.Flush()
	return 0
}

// keyState says whether a key works at now: active, expired or revoked.
func keyState(k models.APIKey, now time.Time) string {
	switch {
	case k.Revoked():
		return "revoked"
	case k.Expired(now):
		return "expired"
	}
	return "active"
}

func (c cli) apikeyRevoke(ctx context.Context, args []string) int {
	fs, code, ok := c.flags("apikey revoke ID", "Revokes the API key with this id (see apikey list). It is refused at once.", args, nil)
	if !ok {
		return code
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	id, ok := models.ParseID(fs.Arg(0))
	if !ok {
		fmt.Fprintf(c.stderr, "petstore: %q is not an API key id (a whole number; see petstore apikey list)\n", fs.Arg(0))
		return 2
	}
	store, err := c.open(ctx)
	if err != nil {
		return c.fail(err)
	}
	defer store.Close()
	k, err := store.RevokeAPIKey(ctx, id, models.ActorCLI)
	if err != nil {
		return c.fail(userMessage(err))
	}
	fmt.Fprintf(c.stdout, "revoked API key %d (%s, %s)\n", k.ID, k.Name, k.Prefix)
	return 0
}

// timeOrDash formats an optional time for a table column.
func timeOrDash(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Format(time.RFC3339)
}
