package cmd

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"

	"service/store"
)

// invokedAs returns the command that runs this binary again, as the user
// ran it (arg0 is os.Args[0]): "./service", "bin/service", or "service"
// when it was found on PATH. Hints that name a command print this rather
// than a bare "service", which on many systems runs another program
// (Debian's /usr/sbin/service). The binary `go run` builds lives in a
// temporary directory removed when it exits, so for it the hint is
// "go run ." (run from the module's root, where go run was).
func invokedAs(arg0 string) string {
	dir := filepath.Dir(arg0)
	if filepath.Base(dir) == "exe" && strings.HasPrefix(filepath.Base(filepath.Dir(filepath.Dir(dir))), "go-build") {
		return "go run ."
	}
	return shellQuote(arg0)
}

// shellQuote returns s as one word of a POSIX shell command line: as it is
// when it holds nothing the shell would interpret, else in single quotes.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:,=@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// commandName is how this process was invoked, for hints in its output.
func commandName() string { return invokedAs(os.Args[0]) }

// announceSetup logs a one-time setup link while no dashboard user exists,
// and the command that creates a user from the shell instead, ready to
// paste: command is how the binary was invoked (invokedAs), dbPath the
// database serve was given, addr the address it listens on.
func announceSetup(ctx context.Context, db *store.DB, log *slog.Logger, command, dbPath, addr string) error {
	token, err := db.CreateSetupToken(ctx)
	if err != nil || token == "" {
		return err
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	// A browser cannot open the unspecified address serve listens on.
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	log.Warn("no dashboard user yet: open this link once to create the first one (or run: "+
		command+" users create --db "+shellQuote(store.Redacted(dbPath))+" --email you@example.com)",
		"setupURL", "http://"+net.JoinHostPort(host, port)+"/setup?token="+token)
	return nil
}
