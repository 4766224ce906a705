package cmd

import (
	"github.com/spf13/cobra"
)

func newSeedCmd() *cobra.Command {
	seed := &cobra.Command{
		Use:   "seed",
		Short: "Create a demo app with keys, content blocks, an audience and a campaign; print the keys once",
		Args:  cobra.NoArgs,
	}
	db := addDBFlag(seed)
	seed.RunE = func(cmd *cobra.Command, args []string) error {
		d, err := openOrCreateDB(cmd, *db)
		if err != nil {
			return err
		}
		defer d.Close()
		out, err := seedDemo(cmd.Context(), d)
		if err != nil {
			return err
		}
		return printJSON(cmd, out)
	}
	return seed
}
