package actors

import (
	"fmt"

	"github.com/retentionkit/retention/core"
	"github.com/retentionkit/retention/passes"
)

// SetPacing switches the named pass between fixed and adaptive pacing at run time (a
// live setting, say). It takes effect at the pass's next sweep: a sweep in progress
// keeps the pace it started with, so a batch is never sized by two rules. An empty
// mode drops the override and goes back to the pass's options. It fails with a
// *core.NotFoundError for a name the started runtime does not run (before Start, for
// every name) and a *core.ValidationError for an unknown mode.
func (r *Runtime) SetPacing(name string, mode passes.Pacing) error {
	if mode != "" {
		if _, err := passes.ParsePacing(string(mode)); err != nil {
			return core.NewValidationErrorMessage(fmt.Sprintf("pass %q: pacing: %v", name, err),
				map[string][]string{"pacing": {fmt.Sprintf("pass %q: pacing %v", name, err)}})
		}
	}
	r.mu.Lock()
	c := r.cells[name]
	r.mu.Unlock()
	if c == nil {
		return core.NewNotFoundError("pass", name)
	}
	c.setPacing(mode)
	return nil
}

// setPacing records an operator's pacing for the pass's next sweep; "" drops it.
func (c *passCell) setPacing(mode passes.Pacing) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pacing = mode
}

// Pacing returns the named pass's pacing now (its options', or an override SetPacing
// set), and false for an unknown name.
func (r *Runtime) Pacing(name string) (passes.Pacing, bool) {
	r.mu.Lock()
	c := r.cells[name]
	r.mu.Unlock()
	if c == nil {
		return "", false
	}
	return c.pacingMode(), true
}
