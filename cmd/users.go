package cmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"service/store"
)

// newUsersCmd manages the people who sign in to the dashboard. Passwords
// are read from stdin or a file, never from a flag: flags end up in shell
// history and in every process listing.
func newUsersCmd() *cobra.Command {
	users := &cobra.Command{Use: "users", Short: "Manage dashboard users; erase or export an app's end user"}

	create := &cobra.Command{
		Use:   "create",
		Short: "Create a dashboard user; the password is read from stdin or --password-file",
		Args:  cobra.NoArgs,
	}
	db := addDBFlag(create)
	email := create.Flags().String("email", "", "the user's email, used to sign in (required)")
	pwFile := create.Flags().String("password-file", "", "read the password from the first line of this file instead of stdin")
	owner := create.Flags().Bool("owner", false, "make the user an owner, who manages every app, users and roles (the first user always is one)")
	create.RunE = func(cmd *cobra.Command, args []string) error {
		if *email == "" {
			return errors.New("--email is required")
		}
		// Before the prompt: a typo in --db is said before a password is typed.
		if err := checkDB(*db, false); err != nil {
			return err
		}
		password, err := readPassword(cmd, *pwFile, "Password")
		if err != nil {
			return err
		}
		d, err := openDB(cmd, *db)
		if err != nil {
			return err
		}
		defer d.Close()
		u, err := d.CreateDashboardUser(cmd.Context(), *email, password, *owner)
		if err != nil {
			return fieldsError(err)
		}
		return printJSON(cmd, u)
	}

	list := &cobra.Command{Use: "list", Short: "List dashboard users, whether each is an owner, and members' roles by app, as JSON", Args: cobra.NoArgs}
	listDB := addDBFlag(list)
	list.RunE = func(cmd *cobra.Command, args []string) error {
		d, err := openDB(cmd, *listDB)
		if err != nil {
			return err
		}
		defer d.Close()
		us, err := d.FindDashboardUsers(cmd.Context())
		if err != nil {
			return err
		}
		return printJSON(cmd, map[string]any{"data": us})
	}

	del := &cobra.Command{Use: "delete", Short: "Delete a dashboard user and sign out their sessions", Args: cobra.NoArgs}
	delDB := addDBFlag(del)
	delEmail := del.Flags().String("email", "", "the user's email (required)")
	del.RunE = func(cmd *cobra.Command, args []string) error {
		if *delEmail == "" {
			return errors.New("--email is required")
		}
		d, err := openDB(cmd, *delDB)
		if err != nil {
			return err
		}
		defer d.Close()
		if err := d.DeleteDashboardUser(cmd.Context(), *delEmail); err != nil {
			return err
		}
		return printJSON(cmd, map[string]any{"deleted": true, "email": *delEmail})
	}

	grant := &cobra.Command{Use: "grant", Short: "Give a dashboard user a role in an app, or change the one they have", Args: cobra.NoArgs}
	grantDB := addDBFlag(grant)
	grantEmail := grant.Flags().String("email", "", "the user's email (required)")
	grantApp := grant.Flags().Int64("app", 0, "the app's id (required)")
	grantRole := grant.Flags().String("role", "", "viewer, editor or admin (required)")
	grant.RunE = func(cmd *cobra.Command, args []string) error {
		if *grantEmail == "" || *grantApp == 0 || *grantRole == "" {
			return errors.New("--email, --app and --role are required")
		}
		d, err := openDB(cmd, *grantDB)
		if err != nil {
			return err
		}
		defer d.Close()
		m, err := d.GrantRole(cmd.Context(), *grantEmail, *grantApp, *grantRole)
		if err != nil {
			return fieldsError(err)
		}
		return printJSON(cmd, map[string]any{"email": m.Email, "appId": *grantApp, "role": m.Role})
	}

	revoke := &cobra.Command{Use: "revoke", Short: "Take a dashboard user's role in an app away; it takes effect on their next request", Args: cobra.NoArgs}
	revokeDB := addDBFlag(revoke)
	revokeEmail := revoke.Flags().String("email", "", "the user's email (required)")
	revokeApp := revoke.Flags().Int64("app", 0, "the app's id (required)")
	revoke.RunE = func(cmd *cobra.Command, args []string) error {
		if *revokeEmail == "" || *revokeApp == 0 {
			return errors.New("--email and --app are required")
		}
		d, err := openDB(cmd, *revokeDB)
		if err != nil {
			return err
		}
		defer d.Close()
		if err := d.RevokeRole(cmd.Context(), *revokeEmail, *revokeApp); err != nil {
			return err
		}
		return printJSON(cmd, map[string]any{"revoked": true, "email": *revokeEmail, "appId": *revokeApp})
	}

	setPW := &cobra.Command{
		Use:   "set-password",
		Short: "Set a dashboard user's password, read from the terminal without echo, stdin or --password-file, and sign out every session of theirs",
		Args:  cobra.NoArgs,
	}
	setDB := addDBFlag(setPW)
	setEmail := setPW.Flags().String("email", "", "the user's email (required)")
	setFile := setPW.Flags().String("password-file", "", "read the new password from the first line of this file instead of stdin")
	setPW.RunE = func(cmd *cobra.Command, args []string) error {
		if *setEmail == "" {
			return errors.New("--email is required")
		}
		// Before the prompt: a typo in --db is said before a password is typed.
		if err := checkDB(*setDB, false); err != nil {
			return err
		}
		password, err := readPassword(cmd, *setFile, "New password")
		if err != nil {
			return err
		}
		d, err := openDB(cmd, *setDB)
		if err != nil {
			return err
		}
		defer d.Close()
		ended, err := d.SetDashboardPassword(cmd.Context(), *setEmail, password)
		if err != nil {
			return fieldsError(err)
		}
		return printJSON(cmd, map[string]any{"passwordSet": true, "email": *setEmail, "sessionsEnded": ended})
	}

	users.AddCommand(create, list, del, grant, revoke, setPW, newUsersEraseCmd(), newUsersExportCmd())
	return users
}

// newUsersEraseCmd erases everything stored about one end user of an app,
// as DELETE /apps/{appId}/users/{userId} does, for an operator answering
// a person's request without a key at hand. It also clears at once what
// the erasure left in the database's files, which a running server's
// leader would otherwise do within seconds.
func newUsersEraseCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "erase",
		Short: "Erase everything stored about one end user of an app (a data subject's request), and print what went",
		Args:  cobra.NoArgs,
	}
	db := addDBFlag(c)
	app := c.Flags().Int64("app", 0, "the app's id (required)")
	user := c.Flags().String("user", "", "the end user's userId (required)")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if *app == 0 || *user == "" {
			return errors.New("--app and --user are required")
		}
		d, err := openDB(cmd, *db)
		if err != nil {
			return err
		}
		defer d.Close()
		e, err := d.EraseUser(cmd.Context(), *app, *user)
		if err != nil {
			return fieldsError(err)
		}
		scrubbed := true
		if _, err := d.ScrubErasures(cmd.Context()); err != nil {
			// The erasure stands; the leader of a running server
			// scrubs on its next pass.
			scrubbed = false
			fmt.Fprintf(cmd.ErrOrStderr(), "the database files are scrubbed later by a running server: %v\n", err)
		}
		return printJSON(cmd, map[string]any{"appId": *app, "erased": e, "scrubbed": scrubbed})
	}
	return c
}

// newUsersExportCmd writes everything stored about one end user of an app
// to stdout, as GET /apps/{appId}/users/{userId}/export answers it.
func newUsersExportCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "export",
		Short: "Print everything stored about one end user of an app as one JSON document (a data subject's request)",
		Args:  cobra.NoArgs,
	}
	db := addDBFlag(c)
	app := c.Flags().Int64("app", 0, "the app's id (required)")
	user := c.Flags().String("user", "", "the end user's userId (required)")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if *app == 0 || *user == "" {
			return errors.New("--app and --user are required")
		}
		d, err := openDB(cmd, *db)
		if err != nil {
			return err
		}
		defer d.Close()
		return fieldsError(d.ExportUser(cmd.Context(), *app, *user, cmd.OutOrStdout()))
	}
	return c
}

// readPassword reads a password: the first line of file when one is
// named; else, when stdin is a terminal, typed without echo after prompt,
// twice, since a typo nobody sees would otherwise become the password;
// else the first line of stdin, as scripts pipe it.
func readPassword(cmd *cobra.Command, file, prompt string) (string, error) {
	var r io.Reader = cmd.InOrStdin()
	if file != "" {
		f, err := os.Open(file)
		if err != nil {
			return "", err
		}
		defer f.Close()
		r = f
	} else if f, ok := r.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return readTyped(cmd.Context(), int(f.Fd()), cmd.ErrOrStderr(), prompt)
	}
	line, err := bufio.NewReader(io.LimitReader(r, 4096)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("no password given: pipe it on stdin or name a --password-file")
	}
	return line, nil
}

// readTyped reads a password typed on the terminal fd, hidden, then again
// to confirm it. Prompts go to errOut, so stdout keeps only the JSON.
func readTyped(ctx context.Context, fd int, errOut io.Writer, prompt string) (string, error) {
	first, err := readHidden(ctx, fd, errOut, prompt+" (not shown): ")
	if err != nil {
		return "", err
	}
	if first == "" {
		return "", errors.New("no password given")
	}
	again, err := readHidden(ctx, fd, errOut, "Repeat it: ")
	if err != nil {
		return "", err
	}
	if again != first {
		return "", errors.New("the two passwords differ; nothing was changed")
	}
	return first, nil
}

// readHidden prints prompt and reads one line from the terminal fd with
// its echo off. The read runs on its own goroutine because serve's
// signal handling catches Ctrl-C, which a blocked read would never see:
// ctx ends instead, and the terminal gets its echo back before we return.
func readHidden(ctx context.Context, fd int, errOut io.Writer, prompt string) (string, error) {
	state, err := term.GetState(fd)
	if err != nil {
		return "", err
	}
	fmt.Fprint(errOut, prompt)
	type line struct {
		b   []byte
		err error
	}
	got := make(chan line, 1)
	go func() {
		b, err := term.ReadPassword(fd)
		got <- line{b, err}
	}()
	select {
	case l := <-got:
		fmt.Fprintln(errOut) // the Enter typed was not echoed either
		return string(l.b), l.err
	case <-ctx.Done():
		_ = term.Restore(fd, state)
		fmt.Fprintln(errOut)
		return "", ctx.Err()
	}
}

// fieldsError spells out a validation error's fields for a terminal:
// "request has invalid fields" alone does not say what to fix.
func fieldsError(err error) error {
	var e *store.Error
	if !errors.As(err, &e) {
		return err
	}
	fields, _ := e.Details["fields"].(map[string]any)
	if len(fields) == 0 {
		return err
	}
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%s %v", k, fields[k])
	}
	return errors.New(strings.Join(parts, "; "))
}
