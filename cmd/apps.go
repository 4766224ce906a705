package cmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"service/store"
)

func newAppsCmd() *cobra.Command {
	apps := &cobra.Command{Use: "apps", Short: "Manage apps"}
	create := &cobra.Command{
		Use:   "create",
		Short: "Create an app and print it as JSON",
		Args:  cobra.NoArgs,
	}
	db := addDBFlag(create)
	name := create.Flags().String("name", "", "app name (required)")
	plan := create.Flags().String("plan", "", "plan: free, starter, pro or enterprise (default: the instance's, free unless serve runs with --default-plan)")
	rate := create.Flags().Int("rate-limit", 0, "requests per minute; 0 takes the plan's limit")
	create.RunE = func(cmd *cobra.Command, args []string) error {
		d, err := openDB(cmd, *db)
		if err != nil {
			return err
		}
		defer d.Close()
		a, err := d.CreateApp(cmd.Context(), *name, *plan, *rate)
		if err != nil {
			return err
		}
		return printJSON(cmd, a)
	}

	list := &cobra.Command{Use: "list", Short: "List every app with its settings as JSON", Args: cobra.NoArgs}
	ldb := addDBFlag(list)
	list.RunE = func(cmd *cobra.Command, args []string) error {
		d, err := openDB(cmd, *ldb)
		if err != nil {
			return err
		}
		defer d.Close()
		all, err := d.FindAllAppSettings(cmd.Context())
		if err != nil {
			return err
		}
		return printJSON(cmd, map[string]any{"data": all})
	}

	update := &cobra.Command{Use: "update", Short: "Change an app's name, plan, rate limit, allowed origins or retentions and print it", Args: cobra.NoArgs}
	udb := addDBFlag(update)
	uid := update.Flags().Int64("id", 0, "app id (required)")
	update.Flags().String("name", "", "new name")
	update.Flags().String("plan", "", "new plan: free, starter, pro or enterprise (its limit applies unless --rate-limit is given)")
	update.Flags().Int("rate-limit", 0, "requests per minute; 0 takes the plan's limit")
	update.Flags().String("allowed-origins", "", `comma-separated browser origins allowed to call the SDK routes, e.g. "https://a.example,https://b.example"; "*" allows any`)
	update.Flags().String("event-retention-days", "", `days the app's events are kept, 1 to 3650; "null" follows serve's --retention`)
	update.Flags().String("form-retention-days", "", `days the app's form submissions are kept, 1 to 3650; "null" keeps them until deleted`)
	update.RunE = func(cmd *cobra.Command, args []string) error {
		if *uid < 1 {
			return fmt.Errorf("--id is required")
		}
		var upd store.AppUpdate
		f := cmd.Flags()
		if !f.Changed("name") && !f.Changed("plan") && !f.Changed("rate-limit") && !f.Changed("allowed-origins") &&
			!f.Changed("event-retention-days") && !f.Changed("form-retention-days") {
			return fmt.Errorf("nothing to update: give --name, --plan, --rate-limit, --allowed-origins, --event-retention-days or --form-retention-days")
		}
		if f.Changed("name") {
			v, _ := f.GetString("name")
			upd.Name = &v
		}
		if f.Changed("plan") {
			v, _ := f.GetString("plan")
			upd.Plan = &v
		}
		if f.Changed("rate-limit") {
			v, _ := f.GetInt("rate-limit")
			upd.RateLimit = &v
		}
		if f.Changed("allowed-origins") {
			v, _ := f.GetString("allowed-origins")
			list, err := store.ParseAllowedOrigins(v)
			if err != nil {
				return err
			}
			upd.AllowedOrigins = &list
		}
		for flag, dst := range map[string]**store.RetentionChange{"event-retention-days": &upd.EventRetention, "form-retention-days": &upd.FormRetention} {
			if !f.Changed(flag) {
				continue
			}
			v, _ := f.GetString(flag)
			if strings.TrimSpace(v) == "" {
				// An empty value is more likely an unset shell variable
				// than a wish to follow the server.
				return fmt.Errorf("--%s: give a number of days from 1 to %d, or null", flag, store.MaxRetentionDays)
			}
			c, err := store.ParseRetentionDays(flag, v)
			if err != nil {
				return fmt.Errorf("--%s: must be a whole number of days from 1 to %d, or null", flag, store.MaxRetentionDays)
			}
			*dst = c
		}
		d, err := openDB(cmd, *udb)
		if err != nil {
			return err
		}
		defer d.Close()
		if _, err := d.UpdateApp(cmd.Context(), *uid, upd); err != nil {
			return err
		}
		a, err := d.FindAppSettings(cmd.Context(), *uid)
		if err != nil {
			return err
		}
		return printJSON(cmd, a)
	}

	del := &cobra.Command{Use: "delete", Short: "Delete an app and its keys (with --force, and all its data)", Args: cobra.NoArgs}
	ddb := addDBFlag(del)
	did := del.Flags().Int64("id", 0, "app id (required)")
	force := del.Flags().Bool("force", false, "delete the app even though it holds data, with all of it, in one transaction")
	del.RunE = func(cmd *cobra.Command, args []string) error {
		if *did < 1 {
			return fmt.Errorf("--id is required")
		}
		d, err := openDB(cmd, *ddb)
		if err != nil {
			return err
		}
		defer d.Close()
		counts, err := d.DeleteApp(cmd.Context(), *did, *force)
		if err != nil {
			return err
		}
		return printJSON(cmd, map[string]any{"id": *did, "deleted": true, "data": counts})
	}
	apps.AddCommand(create, list, update, del)
	return apps
}
