package deploy

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"go.yaml.in/yaml/v3"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

// The parts of the manifests the tests read.
type (
	k8sMeta struct {
		Name        string            `yaml:"name"`
		Labels      map[string]string `yaml:"labels"`
		Annotations map[string]string `yaml:"annotations"`
	}
	k8sConfigMap struct {
		Kind     string            `yaml:"kind"`
		Metadata k8sMeta           `yaml:"metadata"`
		Data     map[string]string `yaml:"data"`
	}
	k8sSecret struct {
		Kind       string            `yaml:"kind"`
		Metadata   k8sMeta           `yaml:"metadata"`
		Type       string            `yaml:"type"`
		StringData map[string]string `yaml:"stringData"`
	}
	k8sProbe struct {
		HTTPGet struct {
			Path string `yaml:"path"`
			Port any    `yaml:"port"` // a name or a number
		} `yaml:"httpGet"`
	}
	k8sContainer struct {
		Name  string   `yaml:"name"`
		Image string   `yaml:"image"`
		Args  []string `yaml:"args"`
		Env   []struct {
			Name      string `yaml:"name"`
			ValueFrom struct {
				SecretKeyRef struct {
					Name string `yaml:"name"`
					Key  string `yaml:"key"`
				} `yaml:"secretKeyRef"`
			} `yaml:"valueFrom"`
		} `yaml:"env"`
		Ports []struct {
			Name          string `yaml:"name"`
			ContainerPort int    `yaml:"containerPort"`
		} `yaml:"ports"`
		LivenessProbe   *k8sProbe `yaml:"livenessProbe"`
		ReadinessProbe  *k8sProbe `yaml:"readinessProbe"`
		SecurityContext struct {
			ReadOnlyRootFilesystem   bool `yaml:"readOnlyRootFilesystem"`
			AllowPrivilegeEscalation bool `yaml:"allowPrivilegeEscalation"`
		} `yaml:"securityContext"`
		VolumeMounts []struct {
			Name      string `yaml:"name"`
			MountPath string `yaml:"mountPath"`
		} `yaml:"volumeMounts"`
	}
	k8sDeployment struct {
		Kind     string  `yaml:"kind"`
		Metadata k8sMeta `yaml:"metadata"`
		Spec     struct {
			Template struct {
				Metadata k8sMeta `yaml:"metadata"`
				Spec     struct {
					TerminationGracePeriodSeconds int `yaml:"terminationGracePeriodSeconds"`
					SecurityContext               struct {
						RunAsNonRoot bool `yaml:"runAsNonRoot"`
						RunAsUser    int  `yaml:"runAsUser"`
					} `yaml:"securityContext"`
					Containers []k8sContainer `yaml:"containers"`
					Volumes    []struct {
						Name      string `yaml:"name"`
						ConfigMap struct {
							Name string `yaml:"name"`
						} `yaml:"configMap"`
					} `yaml:"volumes"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	// nodeConfig is the part of the node's configuration the manifests must agree with.
	nodeConfig struct {
		Database struct {
			Driver string `yaml:"driver"`
			DSN    string `yaml:"dsn"`
		} `yaml:"database"`
		Node struct {
			Admin         string `yaml:"admin"`
			AdminToken    string `yaml:"admin_token"`
			ShutdownGrace string `yaml:"shutdown_grace"`
		} `yaml:"node"`
	}
)

// manifests are the three objects of deploy/kubernetes, each read from its file.
type manifests struct {
	cm     k8sConfigMap
	secret k8sSecret
	dep    k8sDeployment
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(strings.NewReader(string(raw)))
	if err := dec.Decode(into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func readManifests(t *testing.T) manifests {
	t.Helper()
	var m manifests
	readYAML(t, "kubernetes/configmap.yaml", &m.cm)
	readYAML(t, "kubernetes/secret.yaml", &m.secret)
	readYAML(t, "kubernetes/deployment.yaml", &m.dep)
	for kind, got := range map[string]string{"ConfigMap": m.cm.Kind, "Secret": m.secret.Kind, "Deployment": m.dep.Kind} {
		if got != kind {
			t.Fatalf("kubernetes/%s.yaml holds a %q", strings.ToLower(kind), got)
		}
	}
	return m
}

// container is the Deployment's one container.
func (m manifests) container(t *testing.T) k8sContainer {
	t.Helper()
	cs := m.dep.Spec.Template.Spec.Containers
	if len(cs) != 1 {
		t.Fatalf("the Deployment has %d containers, want 1", len(cs))
	}
	return cs[0]
}

// configPath is where the container reads its config (--config) and the ConfigMap key
// that lands there through the volume mount.
func (m manifests) configFile(t *testing.T) (path, key string) {
	t.Helper()
	c := m.container(t)
	i := slices.Index(c.Args, "--config")
	if len(c.Args) == 0 || c.Args[0] != "run" || i < 0 || i+1 >= len(c.Args) {
		t.Fatalf("container args %v, want run --config FILE ...", c.Args)
	}
	path = c.Args[i+1]
	var volume string
	for _, vm := range c.VolumeMounts {
		if strings.HasPrefix(path, vm.MountPath+"/") {
			volume, key = vm.Name, strings.TrimPrefix(path, vm.MountPath+"/")
		}
	}
	if volume == "" {
		t.Fatalf("--config %s is under no volume mount", path)
	}
	for _, v := range m.dep.Spec.Template.Spec.Volumes {
		if v.Name == volume && v.ConfigMap.Name != m.cm.Metadata.Name {
			t.Fatalf("volume %s mounts ConfigMap %q, want %q", volume, v.ConfigMap.Name, m.cm.Metadata.Name)
		}
	}
	if _, ok := m.cm.Data[key]; !ok {
		t.Fatalf("ConfigMap %s has no key %q (the file --config names)", m.cm.Metadata.Name, key)
	}
	return path, key
}

// adminRoutes are the GET paths node/admin/admin.go registers ("GET /healthz" ...), read
// from its source so a renamed route fails here.
func adminRoutes(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "../node/admin/admin.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	pattern := regexp.MustCompile(`^GET (/\S*)$`)
	var routes []string
	ast.Inspect(f, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if s, err := strconv.Unquote(lit.Value); err == nil {
				if m := pattern.FindStringSubmatch(s); m != nil {
					routes = append(routes, m[1])
				}
			}
		}
		return true
	})
	if len(routes) == 0 {
		t.Fatal("node/admin/admin.go registers no GET route")
	}
	return routes
}

func TestKubernetesManifests(t *testing.T) {
	m := readManifests(t)
	c := m.container(t)
	_, key := m.configFile(t)
	var cfg nodeConfig
	if err := yaml.Unmarshal([]byte(m.cm.Data[key]), &cfg); err != nil {
		t.Fatalf("the ConfigMap's %s: %v", key, err)
	}

	// The admin port: the config's node.admin, the container's named port, the probes.
	host, port, err := net.SplitHostPort(cfg.Node.Admin)
	if err != nil {
		t.Fatalf("node.admin %q: %v", cfg.Node.Admin, err)
	}
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		t.Errorf("node.admin %s is loopback: the kubelet's probes could not reach it", cfg.Node.Admin)
	}
	var adminPort int
	for _, p := range c.Ports {
		if p.Name == "admin" {
			adminPort = p.ContainerPort
		}
	}
	if strconv.Itoa(adminPort) != port {
		t.Errorf("container port admin is %d, node.admin listens on %s", adminPort, port)
	}
	routes := adminRoutes(t)
	for _, probe := range []struct {
		name string
		p    *k8sProbe
		path string
	}{
		{"livenessProbe", c.LivenessProbe, "/healthz"},
		{"readinessProbe", c.ReadinessProbe, "/readyz"},
	} {
		if probe.p == nil {
			t.Errorf("no %s", probe.name)
			continue
		}
		got := probe.p.HTTPGet
		if got.Path != probe.path || !slices.Contains(routes, got.Path) {
			t.Errorf("%s path %q, want %s (admin routes: %v)", probe.name, got.Path, probe.path, routes)
		}
		if fmt.Sprint(got.Port) != "admin" && fmt.Sprint(got.Port) != port {
			t.Errorf("%s port %v, want admin or %s", probe.name, got.Port, port)
		}
	}
	ann := m.dep.Spec.Template.Metadata.Annotations
	if ann["prometheus.io/port"] != port || !slices.Contains(routes, ann["prometheus.io/path"]) {
		t.Errorf("scrape annotations port %q path %q, want %s and an admin route", ann["prometheus.io/port"], ann["prometheus.io/path"], port)
	}

	// Secrets: every one the container reads exists in the Secret, and the DSN and token
	// come from there, not from the ConfigMap.
	fromSecret := map[string]bool{}
	for _, e := range c.Env {
		ref := e.ValueFrom.SecretKeyRef
		if ref.Name != m.secret.Metadata.Name {
			t.Errorf("env %s comes from secret %q, want %q", e.Name, ref.Name, m.secret.Metadata.Name)
		}
		if _, ok := m.secret.StringData[ref.Key]; !ok {
			t.Errorf("env %s: the Secret has no key %q", e.Name, ref.Key)
		}
		fromSecret[e.Name] = true
	}
	if !fromSecret["RETENTION_DATABASE_URL"] || cfg.Database.DSN != "" {
		t.Errorf("the DSN must come from the Secret as RETENTION_DATABASE_URL (env %v, config dsn %q)", fromSecret, cfg.Database.DSN)
	}
	if tok := cfg.Node.AdminToken; !strings.HasPrefix(tok, "${") || !fromSecret[strings.Trim(tok, "${}")] {
		t.Errorf("node.admin_token %q is not a ${VAR} the Secret sets", tok)
	}

	// Stopping: the kubelet waits longer than the node's shutdown grace.
	grace, err := time.ParseDuration(cfg.Node.ShutdownGrace)
	if err != nil {
		t.Fatalf("node.shutdown_grace %q: %v", cfg.Node.ShutdownGrace, err)
	}
	if period := time.Duration(m.dep.Spec.Template.Spec.TerminationGracePeriodSeconds) * time.Second; period <= grace {
		t.Errorf("terminationGracePeriodSeconds %s is not longer than node.shutdown_grace %s", period, grace)
	}

	// The image's user (deploy/Dockerfile) is the one the pod runs as.
	sc := m.dep.Spec.Template.Spec.SecurityContext
	if !sc.RunAsNonRoot || fmt.Sprintf("USER %d:%d", sc.RunAsUser, sc.RunAsUser) != dockerUser(t) {
		t.Errorf("pod runs as %d (runAsNonRoot %v); the Dockerfile says %q", sc.RunAsUser, sc.RunAsNonRoot, dockerUser(t))
	}
	if !c.SecurityContext.ReadOnlyRootFilesystem || c.SecurityContext.AllowPrivilegeEscalation {
		t.Errorf("container security context %+v, want a read-only root and no privilege escalation", c.SecurityContext)
	}
}

func dockerUser(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	users := regexp.MustCompile(`(?m)^USER .*$`).FindAllString(string(raw), -1)
	if len(users) == 0 {
		t.Fatal("deploy/Dockerfile sets no USER")
	}
	return users[len(users)-1]
}

// kustomization.yaml applies exactly the three manifests.
func TestKustomization(t *testing.T) {
	var k struct {
		Resources []string `yaml:"resources"`
	}
	readYAML(t, "kubernetes/kustomization.yaml", &k)
	files, err := filepath.Glob("kubernetes/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range files {
		if b := filepath.Base(f); b != "kustomization.yaml" {
			want = append(want, b)
		}
	}
	slices.Sort(k.Resources)
	if !slices.Equal(k.Resources, want) {
		t.Errorf("kustomization resources %v, want %v", k.Resources, want)
	}
}

// k8sEnv is the ConfigMap's configuration written to a file, and the Secret's variables
// with the DSN pointing at a scratch PostgreSQL database instead of the example host.
type k8sEnv struct {
	path, dsn string
	env       []string
}

func newK8sEnv(t *testing.T, edit func(config string) string) k8sEnv {
	t.Helper()
	m := readManifests(t)
	_, key := m.configFile(t)
	e := k8sEnv{path: filepath.Join(t.TempDir(), key), dsn: scratchDatabase(t)}
	if err := os.WriteFile(e.path, []byte(edit(m.cm.Data[key])), 0o600); err != nil {
		t.Fatal(err)
	}
	for k, v := range m.secret.StringData {
		if k == "RETENTION_DATABASE_URL" {
			v = e.dsn
		}
		e.env = append(e.env, k+"="+v)
	}
	return e
}

// createTables creates the tables the ConfigMap's passes name.
func (e k8sEnv) createTables(t *testing.T) {
	t.Helper()
	db := openDSN(t, e.dsn)
	for _, q := range []string{
		`CREATE TABLE audit_log (id BIGINT PRIMARY KEY, occurred_at TIMESTAMPTZ NOT NULL, state TEXT NOT NULL)`,
		`CREATE INDEX audit_log_ts ON audit_log (occurred_at, id)`,
		`CREATE TABLE legal_hold (id BIGINT PRIMARY KEY, audit_log_id BIGINT NOT NULL REFERENCES audit_log (id))`,
		`CREATE INDEX legal_hold_log ON legal_hold (audit_log_id)`,
		`CREATE TABLE session (id TEXT PRIMARY KEY, last_seen BIGINT NOT NULL)`,
	} {
		if _, err := db.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// The ConfigMap's configuration passes `retention validate` with the Secret's variables
// set. Without the tables it names it does not, so the check is not empty.
func TestKubernetesConfigValidates(t *testing.T) {
	e := newK8sEnv(t, func(c string) string { return c })
	out, code := run(t, e.env, binary, "validate", "--config", e.path)
	if code != 2 || !strings.Contains(out, "audit_log") {
		t.Fatalf("validate on a database without the tables: exit %d, want 2 naming audit_log\n%s", code, out)
	}
	e.createTables(t)
	out, code = run(t, e.env, binary, "validate", "--config", e.path)
	if code != 0 || !strings.Contains(out, "ok: 2 passes") {
		t.Fatalf("validate: exit %d\n%s", code, out)
	}
	if secret := "change-me"; strings.Contains(out, secret) {
		t.Errorf("validate printed a secret:\n%s", out)
	}
}

// A node run on the ConfigMap's configuration answers what the Deployment asks of it:
// liveness as soon as the endpoint listens, readiness once it runs, metrics at the
// scrape path, and a SIGTERM stop with exit 0. The admin port is chosen at run time
// (another node may hold 9464); everything else is the ConfigMap's.
func TestKubernetesProbesAnswer(t *testing.T) {
	m := readManifests(t)
	c := m.container(t)
	_, port, _ := net.SplitHostPort(configAdmin(t, m))
	e := newK8sEnv(t, func(cfg string) string {
		edited := strings.Replace(cfg, ":"+port+"\n", ":0\n", 1)
		if edited == cfg {
			t.Fatalf("the config has no %q line to move to a free port", ":"+port)
		}
		return edited
	})
	e.createTables(t)

	n := startNode(t, e, c.Args...)
	addr := n.waitLog(t, "admin endpoint listening")["addr"].(string)
	_, bound, _ := net.SplitHostPort(addr)
	base := "http://127.0.0.1:" + bound
	if code := get(t, base+c.LivenessProbe.HTTPGet.Path); code != 200 {
		t.Errorf("liveness %s while starting: %d, want 200", c.LivenessProbe.HTTPGet.Path, code)
	}
	n.waitLog(t, "node running")
	if code := get(t, base+c.ReadinessProbe.HTTPGet.Path); code != 200 {
		t.Errorf("readiness %s once running: %d, want 200", c.ReadinessProbe.HTTPGet.Path, code)
	}
	if path := m.dep.Spec.Template.Metadata.Annotations["prometheus.io/path"]; get(t, base+path) != 200 {
		t.Errorf("scrape path %s: not 200", path)
	}
	if code := n.stop(t); code != 0 {
		t.Errorf("SIGTERM: exit %d, want 0", code)
	}
}

// configAdmin is node.admin of the ConfigMap's configuration.
func configAdmin(t *testing.T, m manifests) string {
	t.Helper()
	_, key := m.configFile(t)
	var cfg nodeConfig
	if err := yaml.Unmarshal([]byte(m.cm.Data[key]), &cfg); err != nil {
		t.Fatal(err)
	}
	return cfg.Node.Admin
}

func get(t *testing.T, url string) int {
	t.Helper()
	client := http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// scratchDatabase creates an empty PostgreSQL database on the test server, dropped when
// the test ends, and returns its DSN: the manifests' tables have plain names, which must
// not meet other tests' tables.
func scratchDatabase(t *testing.T) string {
	t.Helper()
	admin := dbtest.Postgres(t)
	u, err := url.Parse(dbtest.PostgresURL())
	if err != nil || u.Scheme == "" {
		t.Fatalf("TEST_DATABASE_URL must be a URL for this test: %v", err)
	}
	name := fmt.Sprintf("retention_deploy_%d_%d", os.Getpid(), time.Now().UnixNano()%1_000_000)
	ctx := context.Background()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() { _, _ = admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") })
	u.Path = "/" + name
	return u.String()
}

func openDSN(t *testing.T, dsn string) *bun.DB {
	t.Helper()
	db, err := passes.Open(context.Background(), passes.DriverPostgres, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}
