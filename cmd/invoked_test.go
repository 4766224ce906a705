package cmd

import "testing"

func TestInvokedAs(t *testing.T) {
	for _, tc := range []struct{ arg0, want string }{
		{"./service", "./service"},
		{"service", "service"},
		{"bin/service", "bin/service"},
		{"/usr/local/bin/service", "/usr/local/bin/service"},
		// go run's binary is gone once go run exits: the hint is go run itself.
		{"/tmp/go-build1256955422/b001/exe/service", "go run ."},
		{"/home/ann/.cache/go-build/tmp/go-build99/b001/exe/service", "go run ."},
		// An exe directory elsewhere is an ordinary path.
		{"/opt/exe/service", "/opt/exe/service"},
		{"/home/ann/my tools/service", "'/home/ann/my tools/service'"},
		{"/home/ann's/service", `'/home/ann'\''s/service'`},
		{"./svc$1", "'./svc$1'"},
	} {
		if got := invokedAs(tc.arg0); got != tc.want {
			t.Errorf("invokedAs(%q) = %q, want %q", tc.arg0, got, tc.want)
		}
	}
}

func TestShellQuote(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"data.db", "data.db"},
		{"/var/lib/service/data.db", "/var/lib/service/data.db"},
		{"", "''"},
		{"my data.db", "'my data.db'"},
		{"a;rm -rf b", "'a;rm -rf b'"},
		{"it's.db", `'it'\''s.db'`},
		{"$HOME/x.db", "'$HOME/x.db'"},
		{"ü.db", "'ü.db'"},
	} {
		if got := shellQuote(tc.in); got != tc.want {
			t.Errorf("shellQuote(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
