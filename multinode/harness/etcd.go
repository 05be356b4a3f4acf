package harness

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/retentionkit/retention/passes/dbtest/pgcluster"
)

// DefaultEtcdBin is where Debian's etcd-server package puts the server.
const DefaultEtcdBin = "/usr/bin/etcd"

// EtcdBin is the etcd server to run: $ETCD_BIN, else DefaultEtcdBin, else etcd on the
// PATH; "" when there is none.
func EtcdBin() string {
	if b := os.Getenv("ETCD_BIN"); b != "" {
		return b
	}
	if _, err := os.Stat(DefaultEtcdBin); err == nil {
		return DefaultEtcdBin
	}
	if b, err := exec.LookPath("etcd"); err == nil {
		return b
	}
	return ""
}

// Etcd is a single-member etcd of the harness's own: its data directory, its ports and
// its process. It keeps both across Stop and Start, so a restart is the same server
// with the same leases, as an operator's restart would be.
type Etcd struct {
	bin        string
	dataDir    string
	logPath    string
	clientPort int
	peerPort   int

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// StartEtcd starts etcd with its data under dir and its log appended to logPath, on
// free loopback ports, and waits until it answers.
func StartEtcd(ctx context.Context, bin, dir, logPath string) (*Etcd, error) {
	if bin == "" {
		return nil, errors.New("no etcd server: install Debian's etcd-server or set ETCD_BIN")
	}
	e := &Etcd{bin: bin, dataDir: filepath.Join(dir, "etcd-data"), logPath: logPath}
	var err error
	if e.clientPort, err = pgcluster.FreePort(); err != nil {
		return nil, err
	}
	if e.peerPort, err = pgcluster.FreePort(); err != nil {
		return nil, err
	}
	return e, e.Start(ctx)
}

// Endpoint is the client address nodes list in cluster.etcd.endpoints.
func (e *Etcd) Endpoint() string { return fmt.Sprintf("127.0.0.1:%d", e.clientPort) }

func (e *Etcd) url() string { return "http://" + e.Endpoint() }

// Start starts the server (again) and waits until it answers its health check.
func (e *Etcd) Start(ctx context.Context) error {
	e.mu.Lock()
	if e.cmd != nil {
		e.mu.Unlock()
		return errors.New("etcd is already running")
	}
	peer := fmt.Sprintf("http://127.0.0.1:%d", e.peerPort)
	log, err := os.OpenFile(e.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		e.mu.Unlock()
		return err
	}
	cmd := exec.Command(e.bin, "--name", "harness", "--data-dir", e.dataDir,
		"--listen-client-urls", e.url(), "--advertise-client-urls", e.url(),
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "harness="+peer, "--log-level", "warn")
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		log.Close()
		e.mu.Unlock()
		return fmt.Errorf("start etcd: %w", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); log.Close(); close(done) }()
	e.cmd, e.done = cmd, done
	e.mu.Unlock()
	return Poll(ctx, 30*time.Second, "etcd answering on "+e.Endpoint(), func() (bool, error) {
		select {
		case <-done:
			return false, fmt.Errorf("etcd exited (see %s)", e.logPath)
		default:
		}
		resp, err := http.Get(e.url() + "/health")
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}

// Stop stops the server with SIGTERM (SIGKILL after 10 s) and waits for it to exit.
func (e *Etcd) Stop() error {
	e.mu.Lock()
	cmd, done := e.cmd, e.done
	e.cmd = nil
	e.mu.Unlock()
	if cmd == nil {
		return nil
	}
	_ = cmd.Process.Signal(syscall.SIGCONT) // a frozen server cannot act on SIGTERM
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
	return nil
}

// Freeze stops the server's process with SIGSTOP: connections stay open and nothing
// answers, so leases run out; Thaw resumes it.
func (e *Etcd) Freeze() error { return e.signal(syscall.SIGSTOP) }

// Thaw resumes a frozen server.
func (e *Etcd) Thaw() error { return e.signal(syscall.SIGCONT) }

func (e *Etcd) signal(sig syscall.Signal) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cmd == nil {
		return errors.New("etcd is not running")
	}
	return e.cmd.Process.Signal(sig)
}

// Keys lists the keys under prefix, through etcd's JSON gateway (so the harness needs
// no etcd client): the suite reads the membership keys the provider writes.
func (e *Etcd) Keys(ctx context.Context, prefix string) ([]string, error) {
	end := []byte(prefix)
	end[len(end)-1]++ // the range [prefix, prefix+1) is every key that starts with prefix
	body, _ := json.Marshal(map[string]any{
		"key":       base64.StdEncoding.EncodeToString([]byte(prefix)),
		"range_end": base64.StdEncoding.EncodeToString(end),
		"keys_only": true,
	})
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url()+"/v3/kv/range", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out struct {
		Kvs []struct {
			Key string `json:"key"`
		} `json:"kvs"`
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("etcd range: %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("etcd range: %w", err)
	}
	keys := make([]string, 0, len(out.Kvs))
	for _, kv := range out.Kvs {
		k, err := base64.StdEncoding.DecodeString(kv.Key)
		if err != nil {
			return nil, err
		}
		keys = append(keys, string(k))
	}
	return keys, nil
}

// HasKeyContaining reports whether a key under prefix contains s (a member id).
func (e *Etcd) HasKeyContaining(ctx context.Context, prefix, s string) (bool, error) {
	keys, err := e.Keys(ctx, prefix)
	if err != nil {
		return false, err
	}
	for _, k := range keys {
		if strings.Contains(k, s) {
			return true, nil
		}
	}
	return false, nil
}
