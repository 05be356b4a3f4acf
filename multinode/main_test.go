//go:build multinode

package multinode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/multinode/harness"
)

// env is what every scenario shares, set up once by TestMain: the node binary, etcd,
// the database, or why the suite cannot run.
var env struct {
	bin     string
	etcd    string
	dsn     string
	missing string // why the suite cannot run here ("" when it can)
	// mysql is the MariaDB (or MySQL) DSN of the suite's database there, and
	// mysqlMissing why the MariaDB runs cannot run ("" when they can).
	mysql, mysqlMissing string
}

// mysqlDatabase is the database the MariaDB runs use, unless MULTINODE_MYSQL_DATABASE
// names another (it must match the test user's rt_mysql_* grant).
const mysqlDatabase = "rt_mysql_multinode"

func TestMain(m *testing.M) { os.Exit(runSuite(m)) }

func runSuite(m *testing.M) int {
	env.dsn = os.Getenv("TEST_DATABASE_URL")
	if env.dsn == "" {
		env.dsn = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	env.etcd = harness.EtcdBin()
	switch {
	case env.etcd == "":
		env.missing = "no etcd server (install Debian's etcd-server, or set ETCD_BIN)"
	default:
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		db, err := harness.OpenDB(ctx, env.dsn)
		cancel()
		if err != nil {
			env.missing = fmt.Sprintf("PostgreSQL unreachable: %v", err)
		} else {
			db.Close()
		}
	}
	checkMySQL()
	if env.missing == "" {
		dir, err := os.MkdirTemp("", "retention-multinode")
		if err != nil {
			fmt.Fprintln(os.Stderr, "multinode:", err)
			return 1
		}
		defer os.RemoveAll(dir)
		if env.bin, err = harness.BuildNode(context.Background(), dir); err != nil {
			fmt.Fprintln(os.Stderr, "multinode:", err)
			return 1
		}
	} else {
		fmt.Fprintf(os.Stderr, "\n*** multinode: %s: the cluster suite will not run ***\n\n", env.missing)
	}
	code := m.Run()
	printFigures(os.Stdout)
	return code
}

// checkMySQL sets env.mysql from TEST_MYSQL_URL (go-sql-driver's form, naming the
// server; the suite's database is mysqlDatabase) and checks the server answers and
// the node users (rt_mn_n1 ...) exist; else env.mysqlMissing says why not.
func checkMySQL() {
	server := os.Getenv("TEST_MYSQL_URL")
	if server == "" {
		env.mysqlMissing = "TEST_MYSQL_URL is not set"
		return
	}
	name := os.Getenv("MULTINODE_MYSQL_DATABASE")
	if name == "" {
		name = mysqlDatabase
	}
	dsn, err := harness.WithDatabase(server, name)
	if err != nil {
		env.mysqlMissing = err.Error()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	db, err := harness.OpenDB(ctx, dsn)
	if err != nil {
		env.mysqlMissing = fmt.Sprintf("MariaDB unreachable: %v", err)
		return
	}
	defer db.Close()
	if err := db.CheckNodeUsers(ctx, 3); err != nil {
		env.mysqlMissing = err.Error()
		return
	}
	env.mysql = dsn
}

// onDatabases runs f as the subtest postgres and, with mysqlToo, again as mariadb;
// dsnOf tells f's scenario which database it is on.
func onDatabases(t *testing.T, mysqlToo bool, f func(t *testing.T)) {
	t.Run("postgres", f)
	if mysqlToo {
		setFiguresOn("mariadb")
		defer setFiguresOn("")
		t.Run("mariadb", f)
	}
}

// dsnOf is the database t runs on: MariaDB's for a subtest named mariadb, else
// PostgreSQL's. It skips (or under CI=true fails) a MariaDB run that cannot run here.
func dsnOf(t *testing.T) string {
	t.Helper()
	if !strings.HasSuffix(t.Name(), "/mariadb") {
		return env.dsn
	}
	if env.mysqlMissing != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %s", env.mysqlMissing)
		}
		t.Skipf("SKIPPED: %s", env.mysqlMissing)
	}
	return env.mysql
}

// need skips the scenario loudly when the suite cannot run here, and fails it under
// CI=true, where a missing etcd or PostgreSQL is a broken setup.
func need(t *testing.T) {
	t.Helper()
	if env.missing == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true and %s", env.missing)
	}
	t.Skipf("SKIPPED: %s", env.missing)
}

// artifacts is where a scenario's logs go: kept when it fails (or when
// MULTINODE_KEEP_LOGS is set), removed when it passes.
func artifacts(t *testing.T) string {
	t.Helper()
	name := regexp.MustCompile(`[^A-Za-z0-9_.-]+`).ReplaceAllString(t.Name(), "_")
	dir, err := filepath.Abs(filepath.Join("testdata", "artifacts", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() || os.Getenv("MULTINODE_KEEP_LOGS") != "" {
			t.Logf("logs of every process kept in %s", dir)
			return
		}
		_ = os.RemoveAll(dir)
	})
	return dir
}

// setFiguresOn marks the figures reported from now on as measured on db ("" for
// PostgreSQL, the suite's first database). The scenarios run one at a time.
func setFiguresOn(db string) {
	figures.mu.Lock()
	defer figures.mu.Unlock()
	figures.on = db
}
