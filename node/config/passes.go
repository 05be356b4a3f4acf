package config

import "github.com/retentionkit/retention/passes"

// TablePass is one entry of passes: built, ready for passes.NewTable and
// (*passes.Table).Registration.
type TablePass struct {
	Name    string
	Options passes.Options
	Spec    passes.TableSpec
}

// TablePasses builds every pass of the file, in file order. Call it after Validate: it
// returns the first pass that does not build, while Validate names every problem.
func (c *Config) TablePasses() ([]TablePass, error) {
	out := make([]TablePass, 0, len(c.Passes))
	for _, p := range c.Passes {
		opts, spec, err := c.withNodeDefaults(p).Build()
		if err != nil {
			return nil, err
		}
		out = append(out, TablePass{Name: p.Name, Options: opts, Spec: spec})
	}
	return out, nil
}
