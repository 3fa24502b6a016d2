package main

import (
	"context"
	"flag"
	"fmt"
	"text/tabwriter"

	"petstore/config"
	"petstore/models"
	"petstore/webhooks"
)

func (c cli) webhookCreate(ctx context.Context, args []string) int {
	var in models.WebhookInput
	fs, code, ok := c.flags("webhook create --url URL [--event TYPE]... [--description TEXT]",
		"Registers a webhook endpoint and prints its signing secret (whsec_...) alone on stdout. It is shown only this once.", args,
		func(fs *flag.FlagSet) {
			fs.StringVar(&in.URL, "url", "", "where deliveries are POSTed: an http or https URL, not on the server's own network\n"+
				"unless WEBHOOK_ALLOW_PRIVATE=true (required)")
			fs.Func("event", "an event type it receives: pet.created, pet.updated, pet.archived or pet.restored;\n"+
				"repeat the flag for several (default: every type, also those added later)", func(s string) error {
				in.EventTypes = append(in.EventTypes, s)
				return nil
			})
			fs.StringVar(&in.Description, "description", "", "what or whom the endpoint is for")
		})
	if !ok {
		return code
	}
	if in.URL == "" || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	cfg, err := config.Load(c.getenv)
	if err != nil {
		return c.fail(err)
	}
	// A bad URL or type is bad usage, refused before the database is opened.
	check := in
	if err := check.Validate(func(raw string) error { _, err := webhooks.CheckURL(raw, cfg.Webhooks.AllowPrivate); return err }); err != nil {
		return c.badUsage(firstField(err))
	}
	store, err := c.open(ctx)
	if err != nil {
		return c.fail(err)
	}
	defer store.Close()
	_, secret, err := webhooks.Create(ctx, store, in, cfg.Webhooks.AllowPrivate, models.ActorCLI)
	if err != nil {
		return c.fail(userMessage(err))
	}
	fmt.Fprintln(c.stdout, secret)
	return 0
}

func (c cli) webhookList(ctx context.Context, args []string) int {
	if _, code, ok := c.flags("webhook list", "Lists webhook endpoints: id, URL, event types, state, last success, failures and description. Secrets are never shown.", args, nil); !ok {
		return code
	}
	store, err := c.open(ctx)
	if err != nil {
		return c.fail(err)
	}
	defer store.Close()
	ws, err := store.ListWebhooks(ctx)
	if err != nil {
		return c.fail(userMessage(err))
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tURL\tEVENTS\tSTATE\tLAST SUCCESS\tFAILING SINCE\tFAILURES\tDESCRIPTION")
	for _, w := range ws {
		events, state := w.EventTypes, "enabled"
		if events == "" {
			events = "all"
		}
		if !w.Enabled {
			state = "disabled"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", w.ID, w.URL, events, state, timeOrDash(w.LastSuccessAt),
			timeOrDash(w.FailingSince), w.ConsecutiveFailures, w.Description)
	}
	tw.Flush()
	return 0
}

// webhookID reads the one argument of delete and rotate.
func (c cli) webhookID(fs *flag.FlagSet) (int64, int) {
	if fs.NArg() != 1 {
		fs.Usage()
		return 0, 2
	}
	id, ok := models.ParseID(fs.Arg(0))
	if !ok {
		fmt.Fprintf(c.stderr, "petstore: %q is not a webhook id (a whole number; see petstore webhook list)\n", fs.Arg(0))
		return 0, 2
	}
	return id, 0
}

func (c cli) webhookDelete(ctx context.Context, args []string) int {
	fs, code, ok := c.flags("webhook delete ID", "Deletes the webhook endpoint with this id and its deliveries (see webhook list). Deliveries stop at once.", args, nil)
	if !ok {
		return code
	}
	id, code := c.webhookID(fs)
	if code != 0 {
		return code
	}
	store, err := c.open(ctx)
	if err != nil {
		return c.fail(err)
	}
	defer store.Close()
	w, err := store.DeleteWebhook(ctx, id, models.ActorCLI)
	if err != nil {
		return c.fail(userMessage(err))
	}
	fmt.Fprintf(c.stdout, "deleted webhook %d (%s)\n", w.ID, w.URL)
	return 0
}

func (c cli) webhookRotate(ctx context.Context, args []string) int {
	fs, code, ok := c.flags("webhook rotate ID",
		fmt.Sprintf("Gives the webhook endpoint with this id a new signing secret and prints it alone on stdout. The old one keeps signing deliveries, beside the new one, for %s.", webhooks.RotationGrace),
		args, nil)
	if !ok {
		return code
	}
	id, code := c.webhookID(fs)
	if code != 0 {
		return code
	}
	store, err := c.open(ctx)
	if err != nil {
		return c.fail(err)
	}
	defer store.Close()
	secret, err := webhooks.Rotate(ctx, store, id, models.ActorCLI)
	if err != nil {
		return c.fail(userMessage(err))
	}
	fmt.Fprintln(c.stdout, secret)
	return 0
}

// webhookOptions are the dispatcher's options from the configuration.
func webhookOptions(cfg config.Config) webhooks.Options {
	w := cfg.Webhooks
	return webhooks.Options{Timeout: w.Timeout, RetryBase: w.RetryBase, MaxAttempts: w.MaxAttempts, DisableAfter: w.DisableAfter,
		AllowPrivate: w.AllowPrivate}
}
