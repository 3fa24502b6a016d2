package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"time"

	"petstore/models"
)

// seed adds example pets. The count is checked before the database is
// opened; progress goes to stderr at most once a second, the result to
// stdout.
func (c cli) seed(ctx context.Context, args []string) int {
	var pets string
	fs, code, ok := c.flags("seed --pets N", fmt.Sprintf("Adds N example pets (N a whole number from 1 to %d) to DATABASE_URL, created now, "+
		"named like \"Luna 1\" and \"Mochi 🐾 11\" (accents and emoji included), with categories 1 to 100 and statuses "+
		"60%% available, 25%% pending, 15%% sold. Existing pets are kept. Prints progress on stderr and, at the end, "+
		"how many were added; the audit trail records it. A million take well under 30 seconds.", models.MaxSeedPets), args,
		func(fs *flag.FlagSet) {
			fs.StringVar(&pets, "pets", "", "how many pets to add: `N`, a whole number from 1 to 10000000 (required)")
		})
	if !ok {
		return code
	}
	if pets == "" || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	n, err := models.ParseSeedCount(pets)
	if err != nil {
		fmt.Fprintf(c.stderr, "petstore: --pets %q: %s\n", pets, userMessage(err))
		return 2
	}
	// Its batches of thousands of rows are slow by design: only errors are
	// logged, so that stderr holds the progress lines alone.
	store, err := c.openLogging(ctx, slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	if err != nil {
		return c.fail(err)
	}
	defer store.Close()
	start := time.Now()
	var shown time.Time
	progress := func(done int) {
		if done < n && time.Since(shown) < time.Second {
			return
		}
		shown = time.Now()
		fmt.Fprintf(c.stderr, "seeded %d/%d pets (%.1f s)\n", done, n, time.Since(start).Seconds())
	}
	res, err := store.SeedPets(ctx, n, "cli", progress)
	if err != nil {
		if res.Added > 0 {
			return c.fail(fmt.Errorf("stopped after adding %d of %d pets (ids %d to %d): %w", res.Added, n, res.FirstID, res.LastID, userMessage(err)))
		}
		return c.fail(userMessage(err))
	}
	fmt.Fprintf(c.stdout, "added %d example pets (ids %d to %d) in %.1f s\n", res.Added, res.FirstID, res.LastID, time.Since(start).Seconds())
	return 0
}
