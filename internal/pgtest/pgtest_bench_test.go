package pgtest

import "testing"

// BenchmarkConnString measures what each test pays for its own database:
// one CREATE DATABASE from the migrated template. The drops happen when the
// benchmark ends and are not counted.
func BenchmarkConnString(b *testing.B) {
	ConnString(b) // builds the template outside the measurement
	b.ResetTimer()
	for b.Loop() {
		ConnString(b)
	}
}
