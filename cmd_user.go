package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"petstore/models"
)

func (c cli) userCreate(ctx context.Context, args []string) int {
	var username string
	var role models.Role
	fs, code, ok := c.flags("user create --username NAME [--role viewer|editor|admin]", "Adds a staff account for the admin console. "+
		"Viewers read every console page; editors also add and change pets; admins also manage API keys and staff accounts. "+
		"The password is the first line of standard input: at least 12 characters, not a common password, not the username, not one character repeated.", args,
		func(fs *flag.FlagSet) {
			fs.StringVar(&username, "username", "", "the new account's username (required)")
			fs.Func("role", "the account's role: viewer, editor or admin (default editor; the first account on an empty database is an admin)", func(s string) error {
				r, err := models.ParseRole(s)
				if err != nil {
					return errors.New("must be viewer, editor or admin")
				}
				role = r
				return nil
			})
		})
	if !ok {
		return code
	}
	if username == "" || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	line, err := bufio.NewReader(c.stdin).ReadString('\n')
	if err != nil && !(errors.Is(err, io.EOF) && line != "") {
		return c.fail(errors.New("no password on standard input: pipe it in, as in: echo 'a long password' | petstore user create --username NAME"))
	}
	password := strings.TrimRight(line, "\r\n")
	return c.withStore(ctx, func(store *models.Store) int {
		if role == "" {
			if role, err = defaultRole(ctx, store); err != nil {
				return c.fail(userMessage(err))
			}
		}
		u, err := store.CreateUserWithRole(ctx, username, password, role, models.ActorCLI)
		if err != nil {
			return c.fail(userMessage(err))
		}
		fmt.Fprintf(c.stdout, "created staff account %s (id %d), role %s\n", u.Username, u.ID, u.Role)
		return 0
	})
}

// withStore opens the store of the configured database, runs act on it
// and closes it; a store that does not open is one line on stderr and exit
// code 1.
func (c cli) withStore(ctx context.Context, act func(*models.Store) int) int {
	store, err := c.open(ctx)
	if err != nil {
		return c.fail(err)
	}
	defer store.Close()
	return act(store)
}

// defaultRole is the role of an account created without --role: an
// editor, but an admin when it is the first account (made before the first
// serve, which would have made an admin), so that the console has one.
func defaultRole(ctx context.Context, store *models.Store) (models.Role, error) {
	n, err := store.CountUsers(ctx)
	if err != nil {
		return "", err
	}
	if n == 0 {
		return models.RoleAdmin, nil
	}
	return models.RoleEditor, nil
}

func (c cli) userList(ctx context.Context, args []string) int {
	if _, code, ok := c.flags("user list", "Lists the staff accounts, one a line: id, username, role (viewer, editor or admin), state (enabled, disabled, or must-change-password after a reset) and creation time.", args, nil); !ok {
		return code
	}
	return c.withStore(ctx, func(store *models.Store) int {
		users, err := store.ListUsers(ctx)
		if err != nil {
			return c.fail(userMessage(err))
		}
		tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tUSERNAME\tROLE\tSTATE\tCREATED")
		for _, u := range users {
			state := "enabled"
			switch {
			case u.Disabled():
				state = "disabled"
			case u.MustChangePassword:
				state = "must-change-password"
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", u.ID, u.Username, u.Role, state, u.CreatedAt.Format(time.RFC3339))
		}
		tw.Flush()
		return 0
	})
}

// userAction parses --username for a command that acts on one account,
// opens the store, finds the account and runs act on it. An unknown
// account is one line on stderr and exit code 1; bad usage is exit code 2.
func (c cli) userAction(ctx context.Context, name, synopsis string, args []string, act func(*models.Store, models.User) int) int {
	var username string
	fs, code, ok := c.flags(name+" --username NAME", synopsis, args, func(fs *flag.FlagSet) {
		fs.StringVar(&username, "username", "", "the account's username (required)")
	})
	if !ok {
		return code
	}
	if username == "" || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	return c.withStore(ctx, func(store *models.Store) int {
		u, err := store.FindUser(ctx, username)
		if err != nil {
			return c.fail(userMessage(err))
		}
		return act(store, u)
	})
}

func (c cli) userDisable(ctx context.Context, args []string) int {
	return c.userAction(ctx, "user disable", "Disables a staff account: its console sessions end at once and its sign-in is refused. "+
		"API keys it created keep working until revoked (petstore apikey list). The last enabled account cannot be disabled.", args,
		func(store *models.Store, u models.User) int {
			u, err := store.DisableUser(ctx, u.ID, models.ActorCLI)
			if err != nil {
				return c.fail(userMessage(err))
			}
			fmt.Fprintf(c.stdout, "disabled staff account %s (id %d): its sessions have ended; its API keys keep working until revoked\n", u.Username, u.ID)
			return 0
		})
}

func (c cli) userEnable(ctx context.Context, args []string) int {
	return c.userAction(ctx, "user enable", "Enables a disabled staff account: it can sign in again with its password.", args,
		func(store *models.Store, u models.User) int {
			u, err := store.EnableUser(ctx, u.ID, models.ActorCLI)
			if err != nil {
				return c.fail(userMessage(err))
			}
			fmt.Fprintf(c.stdout, "enabled staff account %s (id %d)\n", u.Username, u.ID)
			return 0
		})
}

func (c cli) userResetPassword(ctx context.Context, args []string) int {
	return c.userAction(ctx, "user reset-password", "Gives a staff account a random one-time password and prints it alone on stdout; it is shown only this once. "+
		"The account's sessions end, and at its next sign-in it must choose a new password.", args,
		func(store *models.Store, u models.User) int {
			_, password, err := store.ResetPassword(ctx, u.ID, models.ActorCLI)
			if err != nil {
				return c.fail(userMessage(err))
			}
			fmt.Fprintln(c.stdout, password)
			return 0
		})
}

func (c cli) userResetTwoFactor(ctx context.Context, args []string) int {
	return c.userAction(ctx, "user reset-2fa", "Removes a staff account's second sign-in steps (authenticator app, recovery codes and passkeys), "+
		"for a member who lost them, an admin included. The account's sessions end; its password alone then signs it in, "+
		"and it must set up two-step sign-in again if its role requires it.", args,
		func(store *models.Store, u models.User) int {
			u, err := store.ResetTwoFactor(ctx, u.ID, models.ActorCLI)
			if err != nil {
				return c.fail(userMessage(err))
			}
			fmt.Fprintf(c.stdout, "reset two-step sign-in of staff account %s (id %d): its sessions have ended\n", u.Username, u.ID)
			return 0
		})
}

// userRekeyTwoFactor seals every authenticator app secret again under the
// current PETSTORE_SECRET_KEY, so that the old keys can be dropped.
func (c cli) userRekeyTwoFactor(ctx context.Context, args []string) int {
	fs, code, ok := c.flags("user rekey-2fa", "Seals every staff member's authenticator app secret again under PETSTORE_SECRET_KEY, "+
		"opening each with the key it was sealed with (PETSTORE_SECRET_KEY or PETSTORE_SECRET_KEYS_OLD). "+
		"Once it reports none left under other keys, PETSTORE_SECRET_KEYS_OLD can be emptied.", args, func(*flag.FlagSet) {})
	if !ok {
		return code
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	return c.withStore(ctx, func(store *models.Store) int {
		n, missing, err := store.RekeySecrets(ctx)
		if err != nil {
			return c.fail(userMessage(err))
		}
		if missing > 0 {
			return c.fail(fmt.Errorf("sealed %d secrets again; %d are sealed with keys neither PETSTORE_SECRET_KEY nor PETSTORE_SECRET_KEYS_OLD holds: "+
				"add those keys, or reset those members' two-step sign-in (petstore user reset-2fa)", n, missing))
		}
		fmt.Fprintf(c.stdout, "sealed %d secrets again under the current key; none left under other keys\n", n)
		return 0
	})
}
