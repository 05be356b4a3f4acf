package passes

import (
	"errors"
	"fmt"
	"slices"

	"github.com/retentionkit/retention/core"
)

// DefaultDatabase is the admission pool a registration joins when it names none.
const DefaultDatabase = "default"

// Registration is one pass as the runtime runs it.
type Registration struct {
	// Name identifies the pass in events, status, the ledger and configuration. It must
	// be unique in a runtime; NameFor gives a good default for a Go pass.
	Name string
	// New builds the pass for each sweep.
	New Factory
	// Options say how the pass is swept.
	Options Options
	// Target is what the pass deletes from, such as its table. Passes with the same
	// target never run a batch at the same time. Empty means the pass's name.
	Target string
	// Database names the admission pool that bounds concurrent deletes; passes on one
	// database share its limit. Empty means DefaultDatabase.
	Database string
	// Signals pace the pass when its Options.Pacing is adaptive; nil paces it by its
	// batch times alone. A table pass's Registration sets them.
	Signals PaceSignals
	// Group puts the pass in an all-for-one supervision group: when one member fails,
	// every member is restarted. Empty means the pass is supervised on its own.
	Group string
}

// TargetKey returns the key the admission gate orders the pass's batches by.
func (r Registration) TargetKey() string {
	if r.Target != "" {
		return r.Target
	}
	return r.Name
}

// DatabaseName returns the admission pool the pass belongs to.
func (r Registration) DatabaseName() string {
	if r.Database != "" {
		return r.Database
	}
	return DefaultDatabase
}

// Validate returns every problem with the registration, each naming the pass.
func (r Registration) Validate() error {
	var errs []error
	if r.New == nil {
		errs = append(errs, core.NewValidationErrorMessage(fmt.Sprintf("pass %q has no factory", r.Name),
			map[string][]string{"new": {fmt.Sprintf("pass %q: new must build the pass", r.Name)}}))
	}
	if err := r.Options.Validate(r.Name); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// DuplicateNameError says that a second pass was registered under a name already taken.
type DuplicateNameError struct{ Name string }

func (e *DuplicateNameError) Error() string {
	return fmt.Sprintf("pass %q is already registered", e.Name)
}

// ErrorCode returns core.CodeConflict: the name is taken, whatever the timing.
func (e *DuplicateNameError) ErrorCode() string { return core.CodeConflict }

// Registry holds registrations in the order they were added and refuses a name twice.
// The zero value is an empty registry. It is not safe for concurrent use.
type Registry struct {
	regs []Registration
}

// Add records r, or fails with a *DuplicateNameError when its name is taken.
func (g *Registry) Add(r Registration) error {
	if g.Lookup(r.Name) != nil {
		return &DuplicateNameError{Name: r.Name}
	}
	g.regs = append(g.regs, r)
	return nil
}

// Lookup returns the registration with that name, or nil.
func (g *Registry) Lookup(name string) *Registration {
	i := slices.IndexFunc(g.regs, func(r Registration) bool { return r.Name == name })
	if i < 0 {
		return nil
	}
	return &g.regs[i]
}

// All returns the registrations in the order they were added.
func (g *Registry) All() []Registration { return slices.Clone(g.regs) }

// Validate checks every registration and returns all problems at once.
func (g *Registry) Validate() error {
	var errs []error
	for _, r := range g.regs {
		if err := r.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
