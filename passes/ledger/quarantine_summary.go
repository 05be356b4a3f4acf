package ledger

import "sync"

// quarantineSummary remembers, per pass, how many rows the last quarantine summary
// counted, so the summary is logged when that count changes rather than at every
// sweep: a row held for good would otherwise repeat the same warning every interval for
// as long as it stays. Copies of a Quarantine share one.
type quarantineSummary struct {
	mu   sync.Mutex
	last map[string]int
}

// changed records n as pass's count and reports whether it differs from the one before
// (none before counts as zero, so an empty quarantine says nothing).
func (s *quarantineSummary) changed(pass string, n int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil {
		s.last = map[string]int{}
	}
	if s.last[pass] == n {
		return false
	}
	s.last[pass] = n
	return true
}
