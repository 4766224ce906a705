package cmd

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newKeysCmd() *cobra.Command {
	keys := &cobra.Command{Use: "keys", Short: "Manage API keys"}

	create := &cobra.Command{Use: "create", Short: "Create a key and print its plaintext once", Args: cobra.NoArgs}
	cdb := addDBFlag(create)
	app := create.Flags().Int64("app", 0, "app id (required, unless --instance)")
	role := create.Flags().String("role", "", "admin, read or client (required, unless --instance)")
	name := create.Flags().String("name", "", "a label for the key")
	inst := create.Flags().Bool("instance", false, "an instance key, of no app: it manages apps and their keys over HTTP, and nothing else")
	create.RunE = func(cmd *cobra.Command, args []string) error {
		if *inst && (cmd.Flags().Changed("app") || cmd.Flags().Changed("role")) {
			return fmt.Errorf("--instance makes a key of no app and of the role instance: give neither --app nor --role")
		}
		d, err := openDB(cmd, *cdb)
		if err != nil {
			return err
		}
		defer d.Close()
		if *inst {
			k, plain, err := d.CreateInstanceKey(cmd.Context(), *name)
			if err != nil {
				return err
			}
			return printJSON(cmd, struct {
				ID   int64  `json:"id"`
				Role string `json:"role"`
				Key  string `json:"key"`
				Name string `json:"name,omitempty"`
			}{k.ID, k.Role, plain, k.Name})
		}
		k, plain, err := d.CreateKey(cmd.Context(), *app, *role, *name)
		if err != nil {
			return err
		}
		return printJSON(cmd, struct {
			ID    int64  `json:"id"`
			AppID int64  `json:"appId"`
			Role  string `json:"role"`
			Key   string `json:"key"`
			Name  string `json:"name,omitempty"`
		}{k.ID, k.AppID, k.Role, plain, k.Name})
	}

	list := &cobra.Command{Use: "list", Short: "List an app's keys, or the instance keys (never their plaintext)", Args: cobra.NoArgs}
	ldb := addDBFlag(list)
	lapp := list.Flags().Int64("app", 0, "app id (required, unless --instance)")
	linst := list.Flags().Bool("instance", false, "list the instance keys instead")
	list.RunE = func(cmd *cobra.Command, args []string) error {
		if *linst && cmd.Flags().Changed("app") {
			return fmt.Errorf("--instance lists the keys of no app: give no --app")
		}
		d, err := openDB(cmd, *ldb)
		if err != nil {
			return err
		}
		defer d.Close()
		if *linst {
			ks, err := d.FindInstanceKeys(cmd.Context())
			if err != nil {
				return err
			}
			return printJSON(cmd, map[string]any{"data": ks})
		}
		if _, err := d.FindAppByID(cmd.Context(), *lapp); err != nil {
			return err
		}
		ks, err := d.FindKeys(cmd.Context(), *lapp)
		if err != nil {
			return err
		}
		return printJSON(cmd, map[string]any{"appId": *lapp, "data": ks})
	}

	revoke := &cobra.Command{Use: "revoke", Short: "Revoke a key, of an app or of the instance", Args: cobra.NoArgs}
	rdb := addDBFlag(revoke)
	id := revoke.Flags().Int64("id", 0, "key id (required)")
	revoke.RunE = func(cmd *cobra.Command, args []string) error {
		d, err := openDB(cmd, *rdb)
		if err != nil {
			return err
		}
		defer d.Close()
		k, err := d.RevokeKey(cmd.Context(), *id)
		if err != nil {
			return err
		}
		return printJSON(cmd, k)
	}
	keys.AddCommand(create, list, revoke)
	return keys
}
