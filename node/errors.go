package node

import "errors"

// ConfigError is a node that cannot open or start because its configuration (or the
// database it names) is wrong: trying again changes nothing, so `retention run` exits 2
// on it and a host should not retry it either.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }

// Unwrap is the error the configuration was found wrong with, for errors.Is and As.
func (e *ConfigError) Unwrap() error { return e.Err }

// badConfig marks err as a ConfigError; nil stays nil.
func badConfig(err error) error {
	if err == nil {
		return nil
	}
	return &ConfigError{Err: err}
}

// ErrDatabaseUnavailable is what the startup checks end with when the database never
// answered them within StartupOptions.Retry: nothing says the configuration is wrong,
// so it is not a ConfigError (`retention run` exits 1).
var ErrDatabaseUnavailable = errors.New("database unavailable")

// ErrStoppedDegraded is what Stop returns when supervision had given up on a pass
// before the node stopped, so a process manager sees the node did not stop healthy.
var ErrStoppedDegraded = errors.New("stopped with passes that supervision had given up on")

// errClosed is what Start answers once Close has run.
var errClosed = errors.New("node: closed")
