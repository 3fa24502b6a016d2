package e2e

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"

	"petstore/models"
)

// A member whose password was reset signs in with the one-time password,
// is brought to the account page's password section and nothing else,
// chooses a new password there, and later changes it again on the same
// page, a mistyped confirmation refused beside its field.
func TestBrowserPasswordOnAccountPage(t *testing.T) {
	t.Parallel()
	j := newJourney(t, models.DriverSQLite)
	ctx := context.Background()
	bob, err := j.store.CreateUser(ctx, "bob", "bob's first passphrase", "test")
	if err != nil {
		t.Fatal(err)
	}
	_, otp, err := j.store.ResetPassword(ctx, bob.ID, "test")
	if err != nil {
		t.Fatal(err)
	}

	j.open("/admin/login")
	j.signIn("bob", otp)
	j.waitPath("/admin/account")
	j.waitText("#password-heading", "Choose a new password")
	if n := evalJS[int](j, `document.querySelectorAll('[data-testid="two-step"], [data-testid="passkeys"]').length`); n != 0 {
		t.Errorf("%d other sections shown before the new password is set", n)
	}
	// Elsewhere leads back here.
	j.open("/admin/pets")
	j.waitPath("/admin/account")

	const chosen, next = "bob's own new passphrase", "bob's second passphrase"
	j.fill("#password", "One-time password", otp)
	j.fill("#password", "New password", chosen)
	j.fill("#password", "New password again", chosen)
	j.within("click Set new password", chromedp.Click(button("//main", "Set new password")))
	j.waitText(`[data-testid="flash"]`, "Your new password is set. Welcome back.")
	j.waitPath("/admin/account")
	j.waitText("#password-heading", "Password")
	j.open("/admin/pets")
	j.waitPath("/admin/pets")

	// A change like any other, from the same page.
	j.open("/admin/account")
	j.waitPath("/admin/account")
	j.fill("#password", "Current password", chosen)
	j.fill("#password", "New password", next)
	j.fill("#password", "New password again", next+"x")
	j.within("click Change password", chromedp.Click(button("//main", "Change password")))
	j.waitText("#confirm-password-error", "The two new passwords are not the same.")
	j.fill("#password", "Current password", chosen)
	j.fill("#password", "New password", next)
	j.fill("#password", "New password again", next)
	j.within("click Change password", chromedp.Click(button("//main", "Change password")))
	j.waitText(`[data-testid="flash"]`, "Your password was changed.")
	j.waitPath("/admin/account")
	if _, err := j.store.CheckPassword(ctx, "bob", next); err != nil {
		t.Errorf("the new password does not sign in: %v", err)
	}
}
