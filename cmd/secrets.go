package cmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"service/keyring"
	"service/store"
)

// Environment variables holding keys themselves; keys are never flag
// values, which would show in the process list and shell history.
const (
	envSecretKey    = "SERVICE_SECRET_KEY"
	envNewSecretKey = "SERVICE_NEW_SECRET_KEY"
)

func newSecretsCmd() *cobra.Command {
	secrets := &cobra.Command{Use: "secrets", Short: "Manage the key that encrypts webhook secrets at rest"}

	gen := &cobra.Command{Use: "gen-key", Short: "Print a fresh random key (base64 of 32 bytes)", Args: cobra.NoArgs}
	gen.RunE = func(cmd *cobra.Command, args []string) error {
		_, err := fmt.Fprintln(cmd.OutOrStdout(), keyring.Generate())
		return err
	}

	rotate := &cobra.Command{
		Use:   "rotate-key",
		Short: "Re-encrypt every webhook secret under a new key, in one transaction",
		Long: `Re-encrypt every webhook secret under the new key, in one transaction.
Secrets are decrypted with any key of the old or the new key file (plaintext
ones are simply encrypted), so running it twice is harmless. The old key comes
from --old-key-file or ` + envSecretKey + `, the new one from --new-key-file or
` + envNewSecretKey + `. It can run while serve runs on the same file.`,
		Args: cobra.NoArgs,
	}
	rdb := addDBFlag(rotate)
	oldFile := rotate.Flags().String("old-key-file", "", "file holding the current key(s); or set "+envSecretKey)
	newFile := rotate.Flags().String("new-key-file", "", "file holding the new key first (required, or set "+envNewSecretKey+")")
	rotate.RunE = func(cmd *cobra.Command, args []string) error {
		if err := checkDB(*rdb, false); err != nil {
			return err
		}
		newKeys, err := readKeys("--new-key-file", *newFile, envNewSecretKey, os.Getenv(envNewSecretKey))
		if err != nil {
			return err
		}
		if newKeys == nil {
			return errors.New("the new key is required: --new-key-file or " + envNewSecretKey)
		}
		oldKeys, err := readKeys("--old-key-file", *oldFile, envSecretKey, os.Getenv(envSecretKey))
		if err != nil {
			return err
		}
		ring, err := keyring.New(append(newKeys, oldKeys...))
		if err != nil {
			return err
		}
		d, err := openDB(cmd, *rdb)
		if err != nil {
			return err
		}
		defer d.Close()
		n, err := d.SetSecretKeys(cmd.Context(), ring)
		if err != nil {
			return fmt.Errorf("nothing changed: %w", err)
		}
		return printJSON(cmd, map[string]any{"resealed": n, "keyId": ring.IDs()[0]})
	}
	secrets.AddCommand(gen, rotate)
	return secrets
}

// readKeys reads keys from a file, or else from the value of an
// environment variable; nil when neither is set. Both set is an error:
// which one wins would be a guess.
func readKeys(flag, path, env, value string) ([][]byte, error) {
	switch {
	case path != "" && value != "":
		return nil, fmt.Errorf("both %s and %s are set; use one", flag, env)
	case path != "":
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", flag, err)
		}
		keys, err := keyring.Parse(string(b))
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", flag, path, err)
		}
		return keys, nil
	case value != "":
		keys, err := keyring.Parse(value)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", env, err)
		}
		return keys, nil
	}
	return nil, nil
}

// setupSecrets gives the database its secret keys at start, encrypting any
// plaintext secret, or warns once that secrets are stored in plaintext. A
// key that cannot decrypt the stored secrets, or encrypted secrets without
// a key, stop the start.
func setupSecrets(ctx context.Context, c Config, db *store.DB, log *slog.Logger) error {
	var ring *keyring.Ring
	switch {
	case c.SecretKeyFile != "" && c.SecretKey != "":
		return fmt.Errorf("both --secret-key-file and %s are set; use one", envSecretKey)
	case c.SecretKeyFile != "":
		st, err := os.Stat(c.SecretKeyFile)
		if err != nil {
			return fmt.Errorf("--secret-key-file: %w", err)
		}
		if st.Mode().Perm()&0o077 != 0 {
			log.Warn("secret key file is readable by other users; chmod 600 it", "path", c.SecretKeyFile, "mode", st.Mode().Perm().String())
		}
		// A ring that follows its file: a rotated key is picked up
		// without a restart.
		if ring, err = keyring.LoadFile(c.SecretKeyFile, log); err != nil {
			return fmt.Errorf("--secret-key-file: %w", err)
		}
	case c.SecretKey != "":
		keys, err := keyring.Parse(c.SecretKey)
		if err != nil {
			return fmt.Errorf("%s: %w", envSecretKey, err)
		}
		if ring, err = keyring.New(keys); err != nil {
			return fmt.Errorf("%s: %w", envSecretKey, err)
		}
	}
	n, err := db.SetSecretKeys(ctx, ring)
	var ke *store.SecretKeyError
	if errors.As(err, &ke) {
		if ring == nil {
			return fmt.Errorf("webhook secrets are encrypted but no key is set: start with --secret-key-file or %s (%w)", envSecretKey, err)
		}
		return fmt.Errorf("the secret key does not decrypt the stored webhook secrets: wrong key? (%w)", err)
	}
	if err != nil {
		return fmt.Errorf("webhook secrets: %w", err)
	}
	if ring == nil {
		log.Warn("no secret key: webhook secrets are stored in plaintext; set --secret-key-file or "+envSecretKey+" to encrypt them",
			"plaintextSecrets", n)
		return nil
	}
	log.Info("webhook secrets encrypted at rest", "keyId", ring.IDs()[0], "encryptedNow", n)
	return nil
}
