package postgres_test

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

// holderEnv makes the test binary a lock holder (TestLockHolderProcess) instead of a
// test run: its value is "idle" or "busy", and holderIdentity names the lock.
const (
	holderEnv      = "RETENTION_TEST_LOCK_HOLDER"
	holderIdentity = "RETENTION_TEST_LOCK_IDENTITY"
	holderTable    = "RETENTION_TEST_LOCK_TABLE"
)

// TestLockHolderProcess is the child of TestSweepLockReturnsWhenItsHolderIsKilled: it
// takes a sweep lock and then either idles ("idle") or runs a batch statement that does
// not end ("busy"), until it is killed. As an ordinary test run it does nothing.
func TestLockHolderProcess(t *testing.T) {
	mode := os.Getenv(holderEnv)
	if mode == "" {
		t.Skip("only runs as the child of TestSweepLockReturnsWhenItsHolderIsKilled")
	}
	db := dbtest.Postgres(t)
	ctx := context.Background()
	opts := passes.SweepLockOptions{Identity: os.Getenv(holderIdentity), Conn: passes.SweepConnOptions{ApplicationName: "retention:child"}}
	if mode == "idle" {
		f, err := passes.ExclusiveWith(db, opts, passes.Reuse(passes.PassFunc(nil)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f(ctx); err != nil {
			t.Fatal(err)
		}
		slots, err := passes.OpenAdvisorySlots(ctx, dbtest.PostgresURL(), opts.Identity, opts.Conn)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := slots.AcquireSlot(ctx, 1); err != nil { // and a delete slot
			t.Fatal(err)
		}
		fmt.Println("locked")
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // until killed
		return
	}
	// A batch whose candidate read never ends: a stand-in for a slow delete.
	tbl, err := passes.NewTable(db, opts.Identity, passes.TableSpec{Table: os.Getenv(holderTable), Key: "id", Timestamp: "at", Where: "pg_sleep(600) IS NOT NULL"})
	if err != nil {
		t.Fatal(err)
	}
	if tbl, err = tbl.WithSweepLock(opts); err != nil {
		t.Fatal(err)
	}
	p, err := tbl.Factory()(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("sweeping")
	_, err = p.PurgeBatch(ctx, 10, cutoffT)
	t.Fatalf("the endless batch returned: %v", err)
}

// A member killed with -9 gives its sweep lock back: at once when its connection is
// idle (its delete slot too), and within client_connection_check_interval while a batch
// statement runs on it (without that setting the server would finish the statement
// first). The test measures
// how long the lock took to come back and logs it; it asserts only that it comes back.
func TestSweepLockReturnsWhenItsHolderIsKilled(t *testing.T) {
	if os.Getenv(holderEnv) != "" {
		t.Skip("in the child")
	}
	db := dbtest.Postgres(t)
	table := eventsTable(t, db, 1)
	for _, mode := range []string{"idle", "busy"} {
		t.Run(mode, func(t *testing.T) {
			identity := newPrefix() + mode
			cmd := osexec.Command(os.Args[0], "-test.run=^TestLockHolderProcess$", "-test.count=1")
			cmd.Env = append(os.Environ(), holderEnv+"="+mode, holderIdentity+"="+identity, holderTable+"="+table)
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
			for lines.Scan() && !strings.HasPrefix(lines.Text(), "locked") && !strings.HasPrefix(lines.Text(), "sweeping") {
			}
			ctx := context.Background()
			holder := func() (passes.LockHolderInfo, bool) {
				hs, err := passes.LockHolders(ctx, db, []string{identity})
				if err != nil {
					t.Fatal(err)
				}
				h, ok := hs[identity]
				return h, ok
			}
			waitFor(t, 30*time.Second, func() bool {
				h, ok := holder()
				if !ok || h.Member != "child" {
					return false
				}
				if mode == "idle" {
					return true
				}
				var active bool
				err := db.QueryRowContext(ctx, "SELECT state = 'active' AND query LIKE '%pg_sleep%' FROM pg_stat_activity WHERE pid = ?", h.PID).Scan(&active)
				return err == nil && active
			})
			slots, err := passes.OpenAdvisorySlots(ctx, dbtest.PostgresURL(), identity, passes.SweepConnOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer slots.Close()
			if n, err := slots.SlotsInUse(ctx, 1); mode == "idle" && (err != nil || n != 1) {
				t.Fatalf("the child's slot: %d in use, %v; want 1", n, err)
			}
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			took := waitFor(t, 60*time.Second, func() bool { _, held := holder(); return !held })
			t.Logf("%s holder killed with -9: its lock came back after %v", mode, took.Round(time.Millisecond))
			if mode == "idle" {
				took := waitFor(t, 60*time.Second, func() bool { n, err := slots.SlotsInUse(ctx, 1); return err == nil && n == 0 })
				t.Logf("and its delete slot %v later", took.Round(time.Millisecond))
			}
		})
	}
}
