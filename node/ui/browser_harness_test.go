// The browser harness: the retention binary built once, a headless Chromium driven with
// chromedp, a node running on a seeded database, screenshots written as artifacts.
package ui_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// binary is the retention binary, built by TestMain.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "retention-ui")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "retention")
	if out, err := exec.Command("go", "build", "-o", binary, "github.com/retentionkit/retention/cmd/node").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := leakCheck(m.Run())
	os.RemoveAll(dir)
	os.Exit(code)
}

// chromiumPath finds Chromium: $CHROMIUM, then Debian's /usr/bin/chromium, then PATH.
func chromiumPath() string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, p := range []string{"/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browser starts a headless Chromium with a fresh profile for the test and returns a
// tab's context. Without Chromium it skips loudly, and fails under CI=true.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := chromiumPath()
	if path == "" {
		msg := "Chromium is not installed (apt-get install chromium, or set CHROMIUM)"
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s; CI=true: the browser tests must run", msg)
		}
		fmt.Fprintf(os.Stderr, "\n!!! SKIPPING browser test %s: %s\n\n", t.Name(), msg)
		t.Skip(msg)
	}
	// The background-networking flags keep Chromium from reaching for the network at
	// all: on a machine without one it otherwise stalls on its own requests.
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
		chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true), chromedp.NoFirstRun, chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true), chromedp.Flag("no-default-browser-check", true),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start Chromium at %s: %v", path, err)
	}
	return ctx
}

// do runs browser steps, each bounded so a page that never shows fails the test
// instead of hanging it.
func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 45*time.Second)
	defer cancel()
	if err := chromedp.Do(tctx, steps...); err != nil {
		t.Fatalf("browser: %v", err)
	}
}

// eval evaluates a JavaScript expression in the page and decodes its value.
func eval[T any](t *testing.T, ctx context.Context, expr string, opts ...chromedp.EvaluateOption) T {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(tctx, chromedp.Evaluate[T](expr, opts...))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// waitFor polls a JavaScript predicate in the page until it is true (a bound on a
// hang, not a timing assertion).
func waitFor(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if _, err := chromedp.Run(tctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(55*time.Second))); err != nil {
		body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText.slice(0, 3000) : ""`))
		t.Fatalf("waiting for %s: %v\npage:\n%s", what, err, body)
	}
}

// screenshotDir is where screenshots go: $RETENTION_UI_SCREENSHOTS, or testdata/screenshots
// (ignored by git).
func screenshotDir(t *testing.T) string {
	dir := os.Getenv("RETENTION_UI_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join("testdata", "screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// screenshot writes the whole page as name.png and logs the path (CI keeps the log).
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(tctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path, _ := filepath.Abs(filepath.Join(screenshotDir(t), name+".png"))
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", path, len(png))
}

// viewport writes what the window shows as name.png, for a page too long to capture
// whole.
func viewport(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(tctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path, _ := filepath.Abs(filepath.Join(screenshotDir(t), name+".png"))
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", path, len(png))
}

// runningNode is a `retention run` process and its JSON log lines.
type runningNode struct {
	cmd   *exec.Cmd
	addr  string
	lines chan map[string]any
	token string
}

// startNode runs the node on the config at path and waits for its admin endpoint.
func startNode(t *testing.T, path, token string) *runningNode {
	t.Helper()
	cmd := exec.Command(binary, "run", "--config", path, "--log-format", "json")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	n := &runningNode{cmd: cmd, lines: make(chan map[string]any, 10000), token: token}
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				select {
				case n.lines <- m:
				default: // nobody reads the later lines; never block the node on them
				}
			}
		}
		close(n.lines)
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	n.addr = n.waitLog(t, "admin endpoint listening")["addr"].(string)
	n.waitLog(t, "node running")
	return n
}

func (n *runningNode) waitLog(t *testing.T, msg string) map[string]any {
	t.Helper()
	timeout := time.After(2 * time.Minute) // a bound on a hang
	for {
		select {
		case m, ok := <-n.lines:
			if !ok {
				t.Fatalf("the node exited before logging %q", msg)
			}
			if m["msg"] == msg {
				return m
			}
		case <-timeout:
			t.Fatalf("no %q log line", msg)
		}
	}
}

func (n *runningNode) url(path string) string { return "http://" + n.addr + path }

// get fetches an admin route from the node, as a script on this host would.
func (n *runningNode) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(n.url(path))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// post sends a POST with the given headers and form body.
func (n *runningNode) post(t *testing.T, path string, header map[string]string, form string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, n.url(path), strings.NewReader(form))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// poll waits for cond, checking every 100ms against a deadline (a bound, not a timing
// assertion).
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}
