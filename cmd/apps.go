package cmd

import "github.com/spf13/cobra"

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
	apps.AddCommand(create)
	return apps
}
