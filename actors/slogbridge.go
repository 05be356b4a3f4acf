package actors

import (
	"context"
	"log/slog"
	"slices"

	"github.com/sirupsen/logrus"
)

// NewSlogHandler returns a slog.Handler that writes to logger, so protoactor's own log
// lines (it logs through log/slog) land in the same place and format as ours. Records
// below minLevel are dropped: protoactor logs routine things at info ("actor system
// started", every recovered panic), so a quiet node passes slog.LevelWarn.
func NewSlogHandler(logger *logrus.Logger, minLevel slog.Level) slog.Handler {
	return &slogHandler{logger: logger, min: minLevel}
}

type slogHandler struct {
	logger *logrus.Logger
	min    slog.Level
	attrs  []groupedAttr
	groups []string
}

type groupedAttr struct {
	groups []string
	attr   slog.Attr
}

func (h *slogHandler) Enabled(_ context.Context, l slog.Level) bool {
	return l >= h.min && h.logger.IsLevelEnabled(toLogrusLevel(l))
}

func (h *slogHandler) Handle(_ context.Context, r slog.Record) error {
	fields := logrus.Fields{}
	for _, ga := range h.attrs {
		addAttr(fields, ga.groups, ga.attr)
	}
	r.Attrs(func(a slog.Attr) bool {
		addAttr(fields, h.groups, a)
		return true
	})
	e := logrus.NewEntry(h.logger).WithFields(fields)
	if !r.Time.IsZero() {
		e = e.WithTime(r.Time)
	}
	e.Log(toLogrusLevel(r.Level), r.Message)
	return nil
}

func (h *slogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = slices.Clone(h.attrs)
	for _, a := range attrs {
		c.attrs = append(c.attrs, groupedAttr{groups: slices.Clone(h.groups), attr: a})
	}
	return &c
}

func (h *slogHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.groups = append(slices.Clone(h.groups), name)
	return &c
}

// addAttr sets a under its group path in fields, nesting a map per group.
func addAttr(fields map[string]any, groups []string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		members := a.Value.Group()
		if len(members) == 0 {
			return
		}
		path := groups
		if a.Key != "" {
			path = append(slices.Clone(groups), a.Key)
		}
		for _, m := range members {
			addAttr(fields, path, m)
		}
		return
	}
	m := fields
	for _, g := range groups {
		sub, ok := m[g].(map[string]any)
		if !ok {
			sub = map[string]any{}
			m[g] = sub
		}
		m = sub
	}
	m[a.Key] = a.Value.Any()
}

func toLogrusLevel(l slog.Level) logrus.Level {
	switch {
	case l >= slog.LevelError:
		return logrus.ErrorLevel
	case l >= slog.LevelWarn:
		return logrus.WarnLevel
	case l >= slog.LevelInfo:
		return logrus.InfoLevel
	default:
		return logrus.DebugLevel
	}
}
