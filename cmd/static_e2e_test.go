package cmd_test

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestStaticBinaryRunsWithoutLibc builds the binary as the Dockerfile does
// (CGO_ENABLED=0), checks that it is a static ELF with no program
// interpreter and no shared libraries, and runs it from an empty directory
// with an empty environment: what a distroless/static or scratch image
// gives it.
func TestStaticBinaryRunsWithoutLibc(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("ELF check: linux only")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "service")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = ".."
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatal("the binary has a program interpreter (dynamic loader): it needs libc")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Fatalf("the binary links shared libraries: %v", libs)
	}

	empty := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		c := exec.Command(bin, args...)
		c.Dir = empty
		c.Env = []string{} // no PATH, no HOME, no TZ
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("service %v from an empty directory: %v\n%s", args, err, out)
		}
		return string(out)
	}
	run("migrate", "--db", filepath.Join(empty, "data.db"))
	if out := run("apps", "create", "--db", filepath.Join(empty, "data.db"), "--name", "static"); !strings.Contains(out, `"name":"static"`) {
		t.Fatalf("apps create printed %q", out)
	}
}
