package mysql_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

// The child's instructions, through its environment: holderDSN names the database (its
// presence makes the test binary a lock holder), holderIdentity the sweep lock and the
// slots' name, holderMode "idle" (holds a sweep lock and a delete slot) or "waiting"
// (waits in the slots' line).
const (
	holderDSN      = "RETENTION_TEST_MYSQL_HOLDER_DSN"
	holderIdentity = "RETENTION_TEST_MYSQL_HOLDER_IDENTITY"
	holderMode     = "RETENTION_TEST_MYSQL_HOLDER_MODE"
)

// TestLockHolderProcess is the child of TestLocksReturnWhenTheirHolderIsKilled: it
// takes a sweep lock and a delete slot ("idle") or waits in the slots' line ("waiting")
// and then blocks until killed. As an ordinary test run it does nothing.
func TestLockHolderProcess(t *testing.T) {
	dsn := os.Getenv(holderDSN)
	if dsn == "" {
		t.Skip("only runs as the child of TestLocksReturnWhenTheirHolderIsKilled")
	}
	ctx := context.Background()
	identity := os.Getenv(holderIdentity)
	slots, err := passes.OpenAdvisorySlotsWith(ctx, passes.DriverMySQL, dsn, identity, passes.SweepConnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv(holderMode) == "waiting" {
		fmt.Println("locked")
		_, err := slots.AcquireSlot(ctx, 1) // in line behind the parent's slot
		t.Fatalf("the wait in line ended: %v", err)
	}
	db, err := passes.Open(ctx, passes.DriverMySQL, dsn)
	if err != nil {
		t.Fatal(err)
	}
	f, err := passes.ExclusiveWith(db, passes.SweepLockOptions{Identity: identity}, passes.Reuse(passes.PassFunc(nil)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := slots.AcquireSlot(ctx, 1); err != nil {
		t.Fatal(err)
	}
	fmt.Println("locked")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // until killed
}

// A member killed with -9 gives its locks back: its sweep lock and delete slot, idle
// on their connections, at once (the kernel closes the sockets and the server ends the
// sessions); its place in the slots' line within about a second (the server checks a
// lock wait's client once a second). The test logs how long each took and asserts only
// that each came back; docs/cluster.md quotes the figures.
func TestLocksReturnWhenTheirHolderIsKilled(t *testing.T) {
	if os.Getenv(holderDSN) != "" {
		t.Skip("in the child")
	}
	dsn := dbtest.MySQLDSN(t)
	ctx := context.Background()
	db, err := passes.Open(ctx, passes.DriverMySQL, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, mode := range []string{"idle", "waiting"} {
		t.Run(mode, func(t *testing.T) {
			identity := "killed-" + mode
			slots, err := passes.OpenAdvisorySlotsWith(ctx, passes.DriverMySQL, dsn, identity, passes.SweepConnOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer slots.Close()
			if mode == "waiting" {
				// The parent holds the only slot, and a second request of the parent's is
				// the head of the line (it holds the line's lock and polls the slot), so
				// the child waits in the line's lock itself.
				held, err := slots.AcquireSlot(ctx, 1)
				if err != nil {
					t.Fatal(err)
				}
				defer held.Close()
				headCtx, cancel := context.WithCancel(ctx)
				defer cancel()
				go func() { _, _ = slots.AcquireSlot(headCtx, 1) }()
				waitFor(t, func() bool { n, err := slots.SlotsWaiting(ctx); return err == nil && n == 1 })
			}
			cmd := osexec.Command(os.Args[0], "-test.run=^TestLockHolderProcess$", "-test.count=1")
			cmd.Env = append(os.Environ(), holderDSN+"="+dsn, holderIdentity+"="+identity, holderMode+"="+mode)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			defer stdin.Close()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
			lines := bufio.NewScanner(out)
			for lines.Scan() && !strings.HasPrefix(lines.Text(), "locked") {
			}
			held := func() bool {
				hs, err := passes.LockHolders(ctx, db, []string{identity})
				if err != nil {
					t.Fatal(err)
				}
				_, ok := hs[identity]
				return ok
			}
			inUse := func() int {
				n, err := slots.SlotsInUse(ctx, 1)
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
			waiting := func() int {
				n, err := slots.SlotsWaiting(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
			if mode == "idle" {
				waitFor(t, func() bool { return held() && inUse() == 1 })
			} else {
				waitFor(t, func() bool { return waiting() == 2 })
			}
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			if mode == "idle" {
				took := waitFor(t, func() bool { return !held() })
				slot := waitFor(t, func() bool { return inUse() == 0 })
				t.Logf("idle holder killed with -9: its sweep lock came back after %v, its delete slot %v later", took.Round(time.Millisecond), slot.Round(time.Millisecond))
				return
			}
			took := waitFor(t, func() bool { return waiting() == 1 })
			t.Logf("a waiter in the slots' line killed with -9 left the line after %v", took.Round(time.Millisecond))
		})
	}
}

// waitFor polls cond until it holds, failing the test past a minute, and returns how
// long it took: the server frees a dead client's locks on its own time.
func waitFor(t *testing.T, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Since(start) > time.Minute {
			t.Fatal("condition not met within a minute")
		}
		<-tick.C
	}
	return time.Since(start)
}
