package cmd_test

import (
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.yaml.in/yaml/v4"

	"service/store"
)

// composeFile is what the test reads of examples/replicas/compose.yaml.
type composeFile struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Build       any               `yaml:"build"`
		Command     []string          `yaml:"command"`
		Environment map[string]string `yaml:"environment"`
		DependsOn   any               `yaml:"depends_on"`
		Volumes     []string          `yaml:"volumes"`
		Ports       []string          `yaml:"ports"`
	} `yaml:"services"`
}

// TestComposeExample: examples/replicas/compose.yaml parses, names
// PostgreSQL, three replicas on one database URL and a load balancer whose
// configuration checks each replica's /healthz; and the replicas' command
// lines, as written there, start the real binary on one database and
// answer /healthz (Docker is not needed for that part).
func TestComposeExample(t *testing.T) {
	raw, err := os.ReadFile("../examples/replicas/compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(raw, &c); err != nil {
		t.Fatalf("compose.yaml does not parse: %v", err)
	}
	if c.Services["postgres"].Image == "" {
		t.Fatal("no postgres service with an image")
	}
	var replicas []string
	for name, s := range c.Services {
		if strings.HasPrefix(name, "replica-") {
			replicas = append(replicas, name)
			if s.Build == nil || len(s.Command) == 0 || s.Command[0] != "serve" {
				t.Fatalf("%s: build %v, command %q; want a build of the repository running serve", name, s.Build, s.Command)
			}
			url := s.Environment["SERVICE_DB"]
			if !store.IsPostgresURL(url) {
				t.Fatalf("%s: SERVICE_DB %q is not a PostgreSQL URL", name, url)
			}
			if _, err := pgxpool.ParseConfig(url); err != nil {
				t.Fatalf("%s: SERVICE_DB: %v", name, err)
			}
			if url != c.Services["replica-1"].Environment["SERVICE_DB"] || !slices.Equal(s.Command, c.Services["replica-1"].Command) {
				t.Fatalf("%s differs from replica-1", name)
			}
		}
	}
	slices.Sort(replicas)
	if !slices.Equal(replicas, []string{"replica-1", "replica-2", "replica-3"}) {
		t.Fatalf("replicas %v, want three", replicas)
	}
	lb := c.Services["lb"]
	if lb.Image == "" || len(lb.Ports) == 0 || !slices.ContainsFunc(lb.Volumes, func(v string) bool { return strings.HasPrefix(v, "./haproxy.cfg:") }) {
		t.Fatalf("lb: %+v, want an image publishing a port with ./haproxy.cfg mounted", lb)
	}

	// The load balancer checks /healthz of each replica, and takes one
	// out before its drain delay ends.
	cfg, err := os.ReadFile("../examples/replicas/haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	text := string(cfg)
	if !strings.Contains(text, "option httpchk GET /healthz") {
		t.Fatal("haproxy.cfg does not check GET /healthz")
	}
	for _, r := range replicas {
		if !regexp.MustCompile(`(?m)^\s*server ` + r + ` ` + r + `:8080\b`).MatchString(text) {
			t.Fatalf("haproxy.cfg has no server line for %s", r)
		}
	}
	m := regexp.MustCompile(`check inter (\d+)s fall (\d+)`).FindStringSubmatch(text)
	if m == nil {
		t.Fatal("haproxy.cfg: no check interval and fall count")
	}
	inter, _ := strconv.Atoi(m[1])
	fall, _ := strconv.Atoi(m[2])
	cmd := c.Services["replica-1"].Command
	i := slices.Index(cmd, "--drain-delay")
	if i < 0 || i+1 >= len(cmd) {
		t.Fatal("the replicas' command sets no --drain-delay")
	}
	drain, err := time.ParseDuration(cmd[i+1])
	if err != nil || drain <= time.Duration(inter*fall)*time.Second {
		t.Fatalf("--drain-delay %s must outlast the balancer's %d checks %ds apart", cmd[i+1], fall, inter)
	}

	// The same layout without Docker: three replicas with compose's flags
	// on one database.
	db := cliDB(t)
	for range replicas {
		s := e2eServe(t, append(slices.Clone(cmd[1:]), "--db", db)...)
		resp, err := http.Get(strings.TrimSuffix(s.base, "/v1") + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("/healthz of a replica started as compose.yaml says: %d", resp.StatusCode)
		}
	}
}
