// Command petstore serves the animal store: the bearer-authenticated JSON
// API under /v1 for partner apps and the admin console under /admin for
// store staff, over one database. It also carries the operator commands:
// migrate, user create|list|disable|enable|reset-password|reset-2fa|rekey-2fa, apikey
// create|list|revoke, seed, backup, restore, healthcheck and version.
//
// This file is the entry point and the command table; each command lives
// in a cmd_*.go file of its own, their shared plumbing in cli.go, and the
// HTTP surface that serve listens with in package server.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	// The zone database goes into the binary, so that PETSTORE_TIMEZONE
	// works on machines and images without one.
	_ "time/tzdata"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

const usage = `petstore serves the animal store's JSON API and admin console.

Usage:
  petstore [serve]                        run the server (the default)
  petstore migrate                        bring the database schema up to date
  petstore user create --username NAME [--role viewer|editor|admin]
                                          add a staff account, an editor by default
                                          (password: first line of stdin)
  petstore user list                      list staff accounts, their roles and states
  petstore user disable --username NAME   disable an account: its sessions end, sign-in is refused
  petstore user enable --username NAME    enable a disabled account again
  petstore user reset-password --username NAME
                                          give an account a one-time password (printed alone on stdout)
  petstore user reset-2fa --username NAME remove an account's second sign-in steps; its sessions end
  petstore user rekey-2fa                 seal authenticator app secrets again under PETSTORE_SECRET_KEY
  petstore apikey create --name NAME [--scope pets:read] [--scope pets:write] [--expires 90d|RFC 3339 time]
                                          issue an API key (printed alone on stdout); scopes
                                          pets:read, pets:write (both by default), metrics:read
  petstore apikey list                    list API keys (no secrets)
  petstore apikey revoke ID               revoke an API key at once
  petstore webhook create --url URL [--event TYPE]... [--description TEXT]
                                          register a webhook endpoint (its signing secret
                                          is printed alone on stdout)
  petstore webhook list                   list webhook endpoints and their health (no secrets)
  petstore webhook delete ID              delete an endpoint and its deliveries
  petstore webhook rotate ID              new signing secret (printed); the old one stays valid 24 h
  petstore seed --pets N                  add N example pets (1 to 10000000), to try the console or measure
  petstore backup --out PATH|-            write a backup of the database (- for stdout)
  petstore restore --in PATH [--replace]  load a backup into the database (--check: only verify it)
  petstore version                        print the version
  petstore healthcheck [--ready]          probe the local server (for container health checks)

Configuration is read from the environment: LISTEN_ADDR, DATABASE_URL,
PETSTORE_PUBLIC_URL, DATABASE_MAX_OPEN_CONNS, DATABASE_MAX_IDLE_CONNS,
DATABASE_CONN_MAX_LIFETIME, DATABASE_CONNECT_TIMEOUT, DATABASE_REPLICA_URLS,
TRUSTED_PROXIES, LOG_FORMAT,
RATE_LIMIT_RPS, RATE_LIMIT_BURST, METRICS_ADDR, EVENTS_RETENTION,
WEBHOOK_TIMEOUT, WEBHOOK_RETRY_BASE, WEBHOOK_MAX_ATTEMPTS, WEBHOOK_DISABLE_AFTER,
WEBHOOK_ALLOW_PRIVATE, BACKUP_DIR, BACKUP_INTERVAL, BACKUP_KEEP,
ARCHIVE_RETENTION.
See README.md.
`

// run is the whole program; it returns the exit code: 0 success, 1 failure,
// 2 bad usage.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	c := cli{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv}
	cmd, rest := "serve", args
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, rest = args[0], args[1:]
	}
	if len(args) == 1 && isHelp(args[0]) {
		cmd = "help"
	}
	switch cmd {
	case "serve":
		return c.serve(ctx, rest)
	case "migrate":
		return c.migrate(ctx, rest)
	case "user":
		return c.sub(ctx, "user", rest, map[string]func(context.Context, []string) int{"create": c.userCreate,
			"list": c.userList, "disable": c.userDisable, "enable": c.userEnable, "reset-password": c.userResetPassword,
			"reset-2fa": c.userResetTwoFactor, "rekey-2fa": c.userRekeyTwoFactor})
	case "apikey":
		return c.sub(ctx, "apikey", rest, map[string]func(context.Context, []string) int{
			"create": c.apikeyCreate, "list": c.apikeyList, "revoke": c.apikeyRevoke})
	case "webhook":
		return c.sub(ctx, "webhook", rest, map[string]func(context.Context, []string) int{
			"create": c.webhookCreate, "list": c.webhookList, "delete": c.webhookDelete, "rotate": c.webhookRotate})
	case "seed":
		return c.seed(ctx, rest)
	case "backup":
		return c.backup(ctx, rest)
	case "restore":
		return c.restore(ctx, rest)
	case "version":
		return c.printVersion()
	case "healthcheck":
		return c.healthcheck(ctx, rest)
	case "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "petstore: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
}

// sub runs one command of a group (user, apikey) from cmds; with no
// command or with help it lists them.
func (c cli) sub(ctx context.Context, name string, args []string, cmds map[string]func(context.Context, []string) int) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		w := c.stdout
		code := 0
		if len(args) == 0 {
			w, code = c.stderr, 2
		}
		fmt.Fprintf(w, "Usage: petstore %s COMMAND (one of:", name)
		for _, k := range []string{"create", "list", "disable", "enable", "reset-password", "reset-2fa", "rekey-2fa", "revoke", "delete", "rotate"} {
			if cmds[k] != nil {
				fmt.Fprint(w, " "+k)
			}
		}
		fmt.Fprintf(w, "); petstore %s COMMAND --help for details\n", name)
		return code
	}
	fn, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(c.stderr, "petstore: unknown command %q for %s\n", args[0], name)
		return 2
	}
	return fn(ctx, args[1:])
}
