package cmd

import (
	"fmt"

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
	plan := create.Flags().String("plan", "free", "plan: free, starter, pro or enterprise")
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
	apps.AddCommand(create, newAppsUpdateCmd())
	return apps
}

// newAppsUpdateCmd changes an app's settings; today the browser origins its
// SDK routes answer.
func newAppsUpdateCmd() *cobra.Command {
	update := &cobra.Command{
		Use:   "update",
		Short: "Change an app's settings and print it as JSON",
		Args:  cobra.NoArgs,
	}
	db := addDBFlag(update)
	id := update.Flags().Int64("id", 0, "app id (required)")
	origins := update.Flags().String("allowed-origins", "", `comma-separated browser origins allowed to call the SDK routes, e.g. "https://a.example,https://b.example"; "*" allows any`)
	update.RunE = func(cmd *cobra.Command, args []string) error {
		if *id < 1 {
			return fmt.Errorf("--id is required")
		}
		if !cmd.Flags().Changed("allowed-origins") {
			return fmt.Errorf("nothing to update: give --allowed-origins")
		}
		list, err := store.ParseAllowedOrigins(*origins)
		if err != nil {
			return err
		}
		d, err := openDB(cmd, *db)
		if err != nil {
			return err
		}
		defer d.Close()
		if err := d.SetAppAllowedOrigins(cmd.Context(), *id, list); err != nil {
			return err
		}
		a, err := d.FindAppByID(cmd.Context(), *id)
		if err != nil {
			return err
		}
		return printJSON(cmd, struct {
			*store.App
			AllowedOrigins []string `json:"allowedOrigins"`
		}{a, list})
	}
	return update
}
