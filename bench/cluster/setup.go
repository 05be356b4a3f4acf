package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/retentionkit/retention/multinode/harness"
	"github.com/retentionkit/retention/passes"
)

// bench is the run's shared state: the node binary, the database and a scratch
// directory for each fleet's configuration and logs.
type bench struct {
	c       config
	bin     string
	dir     string
	db      *harness.DB
	dropDB  func()
	etcdBin string
}

const benchDatabase = "retention_bench_cluster"

func setUp(ctx context.Context, c config) (*bench, error) {
	b := &bench{c: c, etcdBin: harness.EtcdBin(), dropDB: func() {}}
	if b.etcdBin == "" {
		return nil, fmt.Errorf("no etcd server: install Debian's etcd-server or set ETCD_BIN")
	}
	dir, err := os.MkdirTemp("", "retention-bench-cluster")
	if err != nil {
		return nil, err
	}
	b.dir = dir
	if b.bin, err = harness.BuildNode(ctx, dir); err != nil {
		b.close()
		return nil, err
	}
	dsn := c.dsn
	if dsn == "" {
		if dsn, err = b.createDatabase(ctx); err != nil {
			b.close()
			return nil, err
		}
	}
	if b.db, err = harness.OpenDB(ctx, dsn); err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

// createDatabase creates benchDatabase afresh through the admin DSN and returns its DSN.
func (b *bench) createDatabase(ctx context.Context) (string, error) {
	admin, err := passes.Open(ctx, passes.DriverPostgres, b.c.adminDSN)
	if err != nil {
		return "", err
	}
	exec := func(db *sql.DB, q string) error {
		_, err := db.ExecContext(ctx, q)
		return err
	}
	if err := exec(admin.DB, "DROP DATABASE IF EXISTS "+benchDatabase+" WITH (FORCE)"); err != nil {
		admin.Close()
		return "", err
	}
	if err := exec(admin.DB, "CREATE DATABASE "+benchDatabase); err != nil {
		admin.Close()
		return "", err
	}
	b.dropDB = func() {
		_ = exec(admin.DB, "DROP DATABASE IF EXISTS "+benchDatabase+" WITH (FORCE)")
		admin.Close()
	}
	u, err := url.Parse(b.c.adminDSN)
	if err != nil {
		return "", err
	}
	u.Path = "/" + benchDatabase
	return u.String(), nil
}

func (b *bench) close() {
	if b.db != nil {
		b.db.Close()
	}
	b.dropDB()
	if b.c.keepLogs {
		fmt.Fprintln(os.Stderr, "cluster: logs kept in", b.dir)
		return
	}
	_ = os.RemoveAll(b.dir)
}

// fleet is one measured cluster: a fresh etcd and a configuration, under a directory
// of its own; stop ends every process.
type fleet struct {
	*harness.Fleet
	etcd   *harness.Etcd
	cancel context.CancelFunc
}

// newFleet resets the database, seeds tables and starts etcd for a fleet named name;
// its passes are one per table with p, or passYAML when it is given.
func (b *bench) newFleet(ctx context.Context, name string, tables []harness.Table, c harness.ClusterOptions, p harness.PassOptions, passYAML string) (*fleet, error) {
	if err := b.db.Reset(ctx); err != nil {
		return nil, err
	}
	var yaml strings.Builder
	for _, t := range tables {
		if err := b.db.Seed(ctx, t); err != nil {
			return nil, err
		}
		yaml.WriteString(harness.PassYAML(t.Name, p))
	}
	if passYAML != "" {
		yaml.Reset()
		yaml.WriteString(passYAML)
	}
	dir := filepath.Join(b.dir, fmt.Sprintf("%s-%d", name, time.Now().UnixNano()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	etcd, err := harness.StartEtcd(ctx, b.etcdBin, dir, filepath.Join(dir, "etcd.log"))
	if err != nil {
		return nil, err
	}
	c.Name = "bench-" + name
	f, err := harness.NewFleet(b.bin, dir, etcd, harness.ConfigYAML(b.db.DSN, etcd.Endpoint(), c, yaml.String()))
	if err != nil {
		_ = etcd.Stop()
		return nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	go f.Supervise(sctx)
	return &fleet{Fleet: f, etcd: etcd, cancel: cancel}, nil
}

func (f *fleet) stop(ctx context.Context) {
	f.cancel()
	f.Stop(ctx, 30*time.Second)
	f.Kill()
	_ = f.etcd.Stop()
}
