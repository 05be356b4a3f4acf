package ui

import (
	"sync"
	"time"

	"github.com/retentionkit/retention/core/clock"
)

// The login's rate limit: after loginFailures wrong tokens from one address within
// loginWindow, that address's logins are refused until the window ends, so the admin
// token cannot be guessed at the speed of a loop. A right token clears the count.
const (
	loginFailures = 5
	loginWindow   = time.Minute
	// loginAddresses bounds the addresses remembered; past it, the addresses not yet
	// remembered share one count, so a flood from many addresses is limited too and the
	// map never grows without bound.
	loginAddresses = 10_000
	sharedAddress  = "*"
)

// loginLimiter counts failed logins per client address in fixed windows.
type loginLimiter struct {
	clock clock.Clock
	mu    sync.Mutex
	tries map[string]loginTries
}

type loginTries struct {
	since    time.Time // the window's start: the first failure in it
	failures int
}

func newLoginLimiter(c clock.Clock) *loginLimiter {
	return &loginLimiter{clock: clock.OrReal(c), tries: map[string]loginTries{}}
}

// key is the count addr is kept under.
func (l *loginLimiter) key(addr string) string {
	if _, ok := l.tries[addr]; ok || len(l.tries) < loginAddresses {
		return addr
	}
	return sharedAddress
}

// wait says how long addr must wait before its next login is heard; 0 when it may try.
func (l *loginLimiter) wait(addr string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock.Now()
	l.expire(now)
	t, ok := l.tries[l.key(addr)]
	if !ok || t.failures < loginFailures {
		return 0
	}
	return t.since.Add(loginWindow).Sub(now)
}

// failed counts a wrong token from addr.
func (l *loginLimiter) failed(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock.Now()
	l.expire(now)
	k := l.key(addr)
	t, ok := l.tries[k]
	if !ok {
		t.since = now
	}
	t.failures++
	l.tries[k] = t
}

// succeeded forgets addr's failures.
func (l *loginLimiter) succeeded(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.tries, addr)
}

// expire drops the counts whose window has ended.
func (l *loginLimiter) expire(now time.Time) {
	for k, t := range l.tries {
		if !now.Before(t.since.Add(loginWindow)) {
			delete(l.tries, k)
		}
	}
}
