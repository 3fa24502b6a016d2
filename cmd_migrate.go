package main

import (
	"context"
	"fmt"

	"petstore/config"
)

// migrate applies the pending migrations (as every command that opens the
// database does) and prints the schema version.
func (c cli) migrate(ctx context.Context, args []string) int {
	if _, code, ok := c.flags("migrate", "Applies the pending schema migrations to DATABASE_URL and prints the schema version.", args, nil); !ok {
		return code
	}
	cfg, err := config.Load(c.getenv)
	if err != nil {
		return c.fail(err)
	}
	store, res, err := openDatabase(ctx, cfg, c.logger(cfg))
	if err != nil {
		return c.fail(err)
	}
	defer store.Close()
	fmt.Fprintf(c.stdout, "%s: schema at version %d\n", cfg.Database.Redacted, res.Version)
	return 0
}
