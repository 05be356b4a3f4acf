// Command custompass shows a hand-written pass: an in-memory session store whose idle
// sessions expire. The pass is the only code a user writes; the loop, cutoff, batching,
// pacing and supervision come from the runtime. sessions_test.go tests it on the
// actortest kit, on virtual time.
package main

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Session is one login.
type Session struct {
	ID       string
	LastSeen time.Time
}

// Store holds sessions in memory, as a stand-in for a table.
type Store struct {
	mu       sync.Mutex
	sessions map[string]Session
}

// NewStore returns a store holding sessions.
func NewStore(sessions ...Session) *Store {
	s := &Store{sessions: map[string]Session{}}
	for _, x := range sessions {
		s.sessions[x.ID] = x
	}
	return s
}

// IDs returns the ids still stored, sorted.
func (s *Store) IDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for id := range s.sessions {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// ExpiredSessions is the pass: it deletes up to batchSize sessions last seen before
// olderThan, oldest first (then by id, so batches are deterministic).
type ExpiredSessions struct {
	Store *Store
}

// PurgeBatch deletes one batch and returns how many sessions it took.
func (p ExpiredSessions) PurgeBatch(ctx context.Context, batchSize int, olderThan time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	p.Store.mu.Lock()
	defer p.Store.mu.Unlock()
	var expired []Session
	for _, s := range p.Store.sessions {
		if s.LastSeen.Before(olderThan) {
			expired = append(expired, s)
		}
	}
	slices.SortFunc(expired, func(a, b Session) int {
		if c := a.LastSeen.Compare(b.LastSeen); c != 0 {
			return c
		}
		return compareStrings(a.ID, b.ID)
	})
	expired = expired[:min(batchSize, len(expired))]
	for _, s := range expired {
		delete(p.Store.sessions, s.ID)
	}
	return len(expired), nil
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
