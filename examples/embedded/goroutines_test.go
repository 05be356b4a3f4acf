package main

import (
	"bytes"
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// run stops what it started when it returns, though its caller's context lives on: the
// backlog sampler, started on run's context, is gone soon after. (The service's actor
// system is the service's and stays, by design.)
func TestRunLeavesNoSamplerRunning(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), service{out: &out, dbPath: filepath.Join(t.TempDir(), "service.db"), once: true}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	const sampler = "(*SweepSampler).loop"
	// The loop returns on its own goroutine after the cancel: wait for that condition,
	// within a bound that only a leak reaches.
	deadline := time.Now().Add(10 * time.Second)
	for running(sampler) {
		if time.Now().After(deadline) {
			t.Fatalf("%s still running after run returned", sampler)
		}
		runtime.Gosched()
	}
}

// running reports whether any goroutine's stack names fn.
func running(fn string) bool {
	buf := make([]byte, 1<<20)
	return strings.Contains(string(buf[:runtime.Stack(buf, true)]), fn)
}
