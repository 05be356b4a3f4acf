package cluster

import (
	"context"
	"log/slog"
	"sync/atomic"
)

// leavingFilter drops the connection errors protoactor logs for every peer while this
// member shuts its own remote down ("EndpointWriter lost connection ... the client
// connection is closing"): expected on every leave, and alarming at error level in a
// log that is otherwise quiet. Lost connections at any other time still show.
type leavingFilter struct {
	slog.Handler
	leaving *atomic.Bool
}

func (f leavingFilter) Handle(ctx context.Context, r slog.Record) error {
	if f.leaving.Load() && r.Message == "EndpointWriter lost connection" {
		return nil
	}
	return f.Handler.Handle(ctx, r)
}

func (f leavingFilter) WithAttrs(attrs []slog.Attr) slog.Handler {
	return leavingFilter{Handler: f.Handler.WithAttrs(attrs), leaving: f.leaving}
}

func (f leavingFilter) WithGroup(name string) slog.Handler {
	return leavingFilter{Handler: f.Handler.WithGroup(name), leaving: f.leaving}
}
