package cluster

import (
	"bytes"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/retentionkit/retention/actors"
)

func TestLeavingFilterDropsOnlyTheLeavesConnectionErrors(t *testing.T) {
	var out bytes.Buffer
	l := logrus.New()
	l.SetOutput(&out)
	var leaving atomic.Bool
	log := slog.New(leavingFilter{Handler: actors.NewSlogHandler(l, slog.LevelWarn), leaving: &leaving}).With("lib", "protoactor")
	log.Error("EndpointWriter lost connection", "address", "127.0.0.1:1")
	leaving.Store(true)
	log.Error("EndpointWriter lost connection", "address", "127.0.0.1:2")
	log.Error("something else", "address", "127.0.0.1:3")
	got := out.String()
	if !strings.Contains(got, "127.0.0.1:1") || strings.Contains(got, "127.0.0.1:2") || !strings.Contains(got, "127.0.0.1:3") {
		t.Fatalf("log:\n%s\nwant the lost connection before the leave and every other line, not the one during it", got)
	}
}
