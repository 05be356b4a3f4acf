package metrics

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/node/buildinfo"
)

// Options tunes what Register adds beside the observer's own metrics.
type Options struct {
	// ReadyAfterFailures is the readiness threshold retention_pass_degraded{reason=
	// "failing_sweeps"} uses; give the admin handler the same. Below 1 counts as 1.
	ReadyAfterFailures int
	// Build labels retention_build_info; the zero value reads this binary's build.
	Build *buildinfo.Info
}

// Register registers, on reg, the observer's metrics with a zero series for every pass
// rt has registered, the per-pass settings (retention, interval), the degraded gauge,
// the admission slots in use and retention_build_info. Call it after the passes are
// registered and before Start. It does not register the Go runtime and process
// collectors: a service's registry often has them already (see RegisterProcess).
func (m *Observer) Register(reg prometheus.Registerer, rt *actors.Runtime, o Options) error {
	for _, name := range rt.PassNames() {
		m.zero(name)
	}
	build := buildinfo.Read()
	if o.Build != nil {
		build = *o.Build
	}
	info := prometheus.NewGauge(prometheus.GaugeOpts{Name: "retention_build_info", Help: "Always 1; the labels say what the node runs.", ConstLabels: build.Labels()})
	info.Set(1)
	var errs []error
	for _, c := range append(m.collectors(), info, newStatusCollector(rt, o.ReadyAfterFailures), newPaceCollector(rt)) {
		errs = append(errs, reg.Register(c))
	}
	return errors.Join(errs...)
}

// RegisterProcess registers the Go runtime (go_*) and process (process_*) collectors on
// reg: the node's own registry has nothing else, an embedding service's may have them.
func RegisterProcess(reg prometheus.Registerer) error {
	return errors.Join(
		reg.Register(collectors.NewGoCollector()),
		reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})),
	)
}
