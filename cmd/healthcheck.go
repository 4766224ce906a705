package cmd

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// newHealthcheckCmd is the container's HEALTHCHECK: distroless images have
// no curl, so the binary probes itself.
func newHealthcheckCmd() *cobra.Command {
	var addr string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:          "healthcheck",
		Short:        "Exit 0 when GET /healthz on a running serve answers 200, 1 otherwise",
		Args:         cobra.NoArgs,
		SilenceUsage: true,
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8080", "address of the running serve (host:port or URL)")
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Second, "how long to wait for the answer")
	// SERVICE_ADDR configures serve, so the same environment points the
	// probe at it (a container sets it once for both).
	envFlags(cmd.Flags(), "addr")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return healthcheck(cmd.Context(), addr, timeout)
	}
	return cmd
}

func healthcheck(ctx context.Context, addr string, timeout time.Duration) error {
	base := addr
	if !strings.Contains(base, "://") {
		// serve's default ":8080" means every interface; probe loopback.
		if strings.HasPrefix(base, ":") {
			base = "127.0.0.1" + base
		}
		base = "http://" + base
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+"/healthz", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %d: %s", req.URL, resp.StatusCode, body)
	}
	return nil
}
