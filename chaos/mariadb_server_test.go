//go:build chaos

package chaos

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
)

// mariadbServer is a MariaDB server of the suite's own: a data directory under the
// suite's temporary directory and a port that was free when it was made, so a scenario
// may kill it and start it again, as the PostgreSQL scenarios do their cluster. It has
// two users: chaosSuiteUser for the suite's own connections, spared by the fault
// injectors, and chaosNodeUser for the node's.
type mariadbServer struct {
	dir, socket string
	port        int

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed once the running server's process is reaped
}

const (
	chaosSuiteUser = "chaos_suite"
	chaosNodeUser  = "chaos_node"
)

// mariadbOnce starts the suite's MariaDB server the first time a scenario needs it, so
// a run of the PostgreSQL scenarios alone never pays for it.
type mariadbOnce struct {
	once   sync.Once
	server *mariadbServer
	err    error
}

// get returns the server, starting it first; the scenario skips without MariaDB's
// server packages, and fails under CI=true, where the MariaDB scenarios must run.
func (o *mariadbOnce) get(t *testing.T) *mariadbServer {
	t.Helper()
	o.once.Do(func() { o.server, o.err = startMariaDB(filepath.Join(the.dir, "mariadb")) })
	if o.err != nil {
		if os.Getenv("CI") == "true" || !errors.Is(o.err, exec.ErrNotFound) {
			t.Fatalf("the suite's MariaDB server: %v", o.err)
		}
		t.Skipf("no MariaDB server packages (mariadb-server): %v", o.err)
	}
	return o.server
}

// startMariaDB initialises a data directory in dir and starts a server on it.
func startMariaDB(dir string) (*mariadbServer, error) {
	install, err := exec.LookPath("mariadb-install-db")
	if err != nil {
		return nil, err
	}
	if _, err := mariadbd(); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &mariadbServer{dir: dir, socket: filepath.Join(dir, "mysqld.sock"), port: port}
	args := []string{"--no-defaults", "--datadir=" + filepath.Join(dir, "data"), "--auth-root-authentication-method=normal", "--skip-test-db"}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	if out, err := exec.Command(install, args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("mariadb-install-db: %w\n%s", err, out)
	}
	if err := s.Start(); err != nil {
		return nil, err
	}
	root, err := sql.Open("mysql", "root@unix("+s.socket+")/")
	if err != nil {
		return nil, err
	}
	defer root.Close()
	for _, q := range []string{
		"CREATE USER " + chaosSuiteUser + "@'127.0.0.1'",
		"GRANT ALL PRIVILEGES ON *.* TO " + chaosSuiteUser + "@'127.0.0.1'",
		"CREATE USER " + chaosNodeUser + "@'127.0.0.1'",
		"GRANT ALL PRIVILEGES ON *.* TO " + chaosNodeUser + "@'127.0.0.1'",
	} {
		if _, err := root.Exec(q); err != nil {
			s.Stop()
			return nil, fmt.Errorf("%s: %w", q, err)
		}
	}
	return s, nil
}

// mariadbd finds the server binary, which Debian installs in /usr/sbin (not on every
// user's PATH).
func mariadbd() (string, error) {
	if p, err := exec.LookPath("mariadbd"); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/sbin/mariadbd"); err == nil {
		return "/usr/sbin/mariadbd", nil
	}
	return "", fmt.Errorf("mariadbd: %w", exec.ErrNotFound)
}

// freePort asks the kernel for a port that is free now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Start starts the server on its data directory (after a Crash, InnoDB recovers it) and
// waits until it answers. The settings make it quick and small: no binary log, a log
// flushed once a second (a crash may lose the last second of commits, as any server
// set so would; the scenarios judge the tables as the server has them), a 64 MB buffer
// pool.
func (s *mariadbServer) Start() error {
	bin, err := mariadbd()
	if err != nil {
		return err
	}
	args := []string{"--no-defaults", "--datadir=" + filepath.Join(s.dir, "data"), "--socket=" + s.socket,
		"--port=" + fmt.Sprint(s.port), "--bind-address=127.0.0.1", "--pid-file=" + filepath.Join(s.dir, "mysqld.pid"),
		"--log-error=" + filepath.Join(s.dir, "error.log"), "--skip-log-bin", "--innodb-buffer-pool-size=64M",
		"--innodb-flush-log-at-trx-commit=2", "--max-connections=300", "--skip-name-resolve"}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	s.mu.Lock()
	s.cmd, s.exited = cmd, exited
	s.mu.Unlock()
	deadline := time.Now().Add(60 * time.Second)
	for !s.answers() {
		select {
		case <-exited:
			log, _ := os.ReadFile(filepath.Join(s.dir, "error.log"))
			return fmt.Errorf("mariadbd exited before it answered: %v\n%s", waitErr, tail(string(log), 2000))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			return errors.New("mariadbd did not answer within 60s")
		}
	}
	return nil
}

func (s *mariadbServer) answers() bool {
	db, err := sql.Open("mysql", "root@unix("+s.socket+")/")
	if err != nil {
		return false
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return db.PingContext(ctx) == nil
}

// Crash kills the server with SIGKILL: no shutdown, every session gone, and waits until
// its process is gone.
func (s *mariadbServer) Crash() error { return s.signal(syscall.SIGKILL) }

// Stop shuts the server down.
func (s *mariadbServer) Stop() { _ = s.signal(syscall.SIGTERM) }

func (s *mariadbServer) signal(sig syscall.Signal) error {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.mu.Unlock()
	if cmd == nil {
		return errors.New("the server is not running")
	}
	if err := cmd.Process.Signal(sig); err != nil {
		return err
	}
	select {
	case <-exited:
		return nil
	case <-time.After(60 * time.Second):
		return errors.New("mariadbd did not exit within 60s")
	}
}

// dsn is the go-sql-driver DSN of user on database db over TCP.
func (s *mariadbServer) dsn(user, db string) string {
	c := gomysql.NewConfig()
	c.User, c.Net, c.Addr, c.DBName = user, "tcp", fmt.Sprintf("127.0.0.1:%d", s.port), db
	return c.FormatDSN()
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// createMariaDBDatabase creates a fresh database for one scenario, named after it.
func (s *mariadbServer) createDatabase(t *testing.T) string {
	t.Helper()
	name := strings.ToLower(strings.NewReplacer("/", "_", " ", "_", "-", "_").Replace(t.Name()))
	db, err := sql.Open("mysql", s.dsn(chaosSuiteUser, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{"DROP DATABASE IF EXISTS " + name, "CREATE DATABASE " + name} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return name
}
