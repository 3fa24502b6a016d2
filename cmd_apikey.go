package main

import (
	"context"
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"petstore/models"
)

func (c cli) apikeyCreate(ctx context.Context, args []string) int {
	var name string
	fs, code, ok := c.flags("apikey create --name NAME", "Issues an API key for a partner and prints it alone on stdout. It is shown only this once.", args,
		func(fs *flag.FlagSet) {
			fs.StringVar(&name, "name", "", "who or what the key is for, such as the partner's app (required)")
		})
	if !ok {
		return code
	}
	if name == "" || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	store, err := c.open(ctx)
	if err != nil {
		return c.fail(err)
	}
	defer store.Close()
	_, key, err := store.CreateAPIKey(ctx, name, "cli")
	if err != nil {
		return c.fail(userMessage(err))
	}
	fmt.Fprintln(c.stdout, key)
	return 0
}

func (c cli) apikeyList(ctx context.Context, args []string) int {
	if _, code, ok := c.flags("apikey list", "Lists API keys: id, name, public prefix, creator, times. Keys themselves are never stored, so never shown.", args, nil); !ok {
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
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tPREFIX\tCREATED BY\tCREATED\tLAST USED\tREVOKED")
	for _, k := range keys {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Name, k.Prefix, k.CreatedBy,
			k.CreatedAt.Format(time.RFC3339), timeOrDash(k.LastUsedAt), timeOrDash(k.RevokedAt))
	}
	tw.Flush()
	return 0
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
	k, err := store.RevokeAPIKey(ctx, id, "cli")
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
