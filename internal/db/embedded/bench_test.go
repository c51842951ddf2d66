package embedded_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/clearing-dev/clearing/internal/db/embedded"
)

// BenchmarkEmbeddedStartStop measures what every command pays when it is
// the cluster's only user: starting the server on an existing cluster, one
// query, and stopping it.
func BenchmarkEmbeddedStartStop(b *testing.B) {
	home := testHome(b)
	ctx := context.Background()
	if err := start(b, home).Close(ctx); err != nil {
		b.Fatal(err)
	}
	var startTotal, stopTotal time.Duration
	b.ResetTimer()
	for b.Loop() {
		began := time.Now()
		e, err := embedded.Start(ctx, embedded.Options{Home: home})
		if err != nil {
			b.Fatal(err)
		}
		if err := ping(ctx, e.ConnString()); err != nil {
			b.Fatal(err)
		}
		ready := time.Now()
		if err := e.Close(ctx); err != nil {
			b.Fatal(err)
		}
		startTotal += ready.Sub(began)
		stopTotal += time.Since(ready)
	}
	b.ReportMetric(float64(startTotal.Milliseconds())/float64(b.N), "start-ms/op")
	b.ReportMetric(float64(stopTotal.Milliseconds())/float64(b.N), "stop-ms/op")
}

// BenchmarkEmbeddedJoin measures what a command pays when another process
// already runs the server, as in overlapping cron runs.
func BenchmarkEmbeddedJoin(b *testing.B) {
	home := testHome(b)
	ctx := context.Background()
	start(b, home) // the other user, until the benchmark ends
	b.ResetTimer()
	for b.Loop() {
		e, err := embedded.Start(ctx, embedded.Options{Home: home})
		if err != nil {
			b.Fatal(err)
		}
		if err := e.Close(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEmbeddedFirstUse measures the one-time cost of a new home:
// initdb, the first start and the database.
func BenchmarkEmbeddedFirstUse(b *testing.B) {
	ctx := context.Background()
	parent := testHome(b)
	for b.Loop() {
		e, err := embedded.Start(ctx, embedded.Options{Home: filepath.Join(parent, time.Now().Format("150405.000000"))})
		if err != nil {
			b.Fatal(err)
		}
		if err := e.Close(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
