package scheduler

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"service/internal/testlog"
)

// passes counts the passes asked of it, failing the first.
type passes struct{ n atomic.Int64 }

func (p *passes) ApplyMetricMovesPaced(context.Context) error {
	if p.n.Add(1) == 1 {
		return errors.New("database is locked")
	}
	return nil
}

// TestMetricMovesPasses: the applier passes at start and then every
// Interval, logs a failed pass and goes on, and ends with its context.
func TestMetricMovesPasses(t *testing.T) {
	var db passes
	var logs testlog.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- (&MetricMoves{DB: &db, Interval: 5 * time.Millisecond, Log: slog.New(slog.NewJSONHandler(&logs, nil))}).Run(ctx)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for db.n.Load() < 4 {
		if time.Now().After(deadline) {
			t.Fatalf("%d passes in 30s, want 4 or more at a 5ms interval", db.n.Load())
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run ended with %v, want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not end with its context")
	}
	if got := logs.String(); strings.Count(got, `"msg":"metric values"`) != 1 || !strings.Contains(got, "database is locked") {
		t.Errorf("logs %s, want the one failed pass", got)
	}
}
