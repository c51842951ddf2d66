package pgtest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/clearing-dev/clearing/internal/db/embedded"
)

// Cluster is a throw-away PostgreSQL cluster in a temporary folder, built
// with the embedded cluster's code, or a Citus cluster of several such
// servers (StartCitusCluster). It trades durability for speed
// (embedded.Options.Ephemeral) and is deleted by Stop.
type Cluster struct {
	dir   string
	emb   *embedded.Cluster
	nodes []*embedded.Cluster // a Citus cluster's servers, the coordinator first
	url   string
}

// StartCluster creates and starts a throw-away cluster. It needs only the
// PostgreSQL server package, like the embedded cluster of the command line.
func StartCluster(ctx context.Context) (*Cluster, error) {
	dir, err := os.MkdirTemp("", "clearing-pg-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	if os.Geteuid() == 0 {
		// The server runs as the postgres user, which must pass through
		// this folder to reach its own (embedded.Start).
		if err := os.Chmod(dir, 0o711); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("pgtest: %w", err)
		}
	}
	emb, err := embedded.Start(ctx, embedded.Options{
		Home:      dir,
		Database:  "postgres",
		Ephemeral: true,
		Logger:    slog.New(slog.DiscardHandler),
	})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: throw-away cluster: %w", err)
	}
	return &Cluster{dir: dir, emb: emb}, nil
}

// URL returns the connection string of the cluster's postgres database:
// for a Citus cluster, its coordinator's.
func (c *Cluster) URL() string {
	if c.url != "" {
		return c.url
	}
	return c.emb.ConnString()
}

// Stop stops the server and deletes the cluster. When the server does not
// stop, the folder is kept, because removing the files of a running server
// makes it fail in ways that hide the cause; the error names the folder.
func (c *Cluster) Stop(ctx context.Context) error {
	servers := c.nodes
	if c.emb != nil {
		servers = []*embedded.Cluster{c.emb}
	}
	var errs []error
	for _, s := range servers {
		if err := s.Close(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("pgtest: the throw-away cluster in %s did not stop: %w", c.dir, err)
	}
	if err := os.RemoveAll(c.dir); err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	return nil
}
