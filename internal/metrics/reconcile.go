package metrics

import (
	"context"
	"fmt"
	"math/big"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clearing-dev/clearing/internal/ledger"
)

// Remainder is one currency's unexplained remainder of a reconciliation,
// in signed minor units.
type Remainder struct {
	Currency    string
	Unexplained *big.Int
}

// openBreaks counts the break inventory's breaks of one source that are
// not closed, by class and status, with the age of the oldest in seconds:
// $1 tenant, $2 source.
const openBreaks = `
SELECT class, status, count(*), extract(epoch FROM now() - min(first_seen))::float8
  FROM breaks
 WHERE tenant_id = $1 AND source = $2 AND status <> 'closed'
 GROUP BY 1, 2
 ORDER BY 1, 2`

// awaitingCorrections counts the corrections of one source that no
// operator has finished with: proposed (no approval yet) and approved (an
// approval, not yet posted, e.g. waiting for a second person): $1 tenant,
// $2 source.
const awaitingCorrections = `
SELECT s.status, count(c.status)
  FROM (VALUES ('proposed'), ('approved')) AS s(status)
  LEFT JOIN corrections c ON c.status = s.status AND c.tenant_id = $1 AND c.source = $2
 GROUP BY 1
 ORDER BY 1`

// AddReconcile records the outcome of a reconciliation of source: its
// unexplained remainder per currency, and what the source leaves for a
// person as the database holds it now (the break inventory and the
// corrections awaiting approval).
func (s *Set) AddReconcile(ctx context.Context, q ledger.Querier, tenant, source string, rem []Remainder) error {
	labels := prometheus.Labels{"command": s.command, "source": source}
	unexplained := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "clearing_reconcile_unexplained_minor", ConstLabels: labels,
		Help: "Unexplained remainder of the last reconciliation per currency, in signed minor units; must be 0."}, []string{"currency"})
	for _, r := range rem {
		unexplained.WithLabelValues(r.Currency).Set(Float(r.Unexplained))
	}
	breaks := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "clearing_breaks", ConstLabels: labels,
		Help: "Breaks of the inventory that are not closed, by class and status (open, acknowledged)."}, []string{"class", "status"})
	oldest := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "clearing_breaks_oldest_age_seconds", ConstLabels: labels,
		Help: "Age of the oldest break that is not closed, by class and status, in seconds since it was first seen."}, []string{"class", "status"})
	rows, err := q.Query(ctx, openBreaks, tenant, source)
	if err != nil {
		return fmt.Errorf("metrics: breaks: %w", err)
	}
	for rows.Next() {
		var class, status string
		var n int64
		var age float64
		if err := rows.Scan(&class, &status, &n, &age); err != nil {
			rows.Close()
			return fmt.Errorf("metrics: breaks: %w", err)
		}
		breaks.WithLabelValues(class, status).Set(float64(n))
		oldest.WithLabelValues(class, status).Set(max(age, 0))
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("metrics: breaks: %w", err)
	}
	awaiting := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "clearing_corrections_awaiting_approval", ConstLabels: labels,
		Help: "Corrections not yet posted or rejected, by status: proposed (no approval yet) or approved (approved, not yet posted)."}, []string{"status"})
	rows, err = q.Query(ctx, awaitingCorrections, tenant, source)
	if err != nil {
		return fmt.Errorf("metrics: corrections: %w", err)
	}
	for rows.Next() {
		var status string
		var n int64
		if err := rows.Scan(&status, &n); err != nil {
			rows.Close()
			return fmt.Errorf("metrics: corrections: %w", err)
		}
		awaiting.WithLabelValues(status).Set(float64(n))
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("metrics: corrections: %w", err)
	}
	s.reg.MustRegister(unexplained, breaks, oldest, awaiting)
	return nil
}
