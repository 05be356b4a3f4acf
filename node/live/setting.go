package live

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/core"
	"github.com/retentionkit/retention/node/config"
	"github.com/retentionkit/retention/passes/ledger"
)

// The fields of a pass an operator can change at run time (pass.NAME.FIELD).
const (
	FieldBatchSize     = "batch_size"
	FieldBatchDelay    = "batch_delay"
	FieldSweepInterval = "sweep_interval"
	FieldPacing        = "pacing"
	// FieldPaused is set by `retention pause` and removed by `retention resume`.
	FieldPaused = "paused"
)

// Fields lists the fields `settings set` takes, in the order messages name them.
var Fields = []string{FieldBatchSize, FieldBatchDelay, FieldSweepInterval, FieldPacing}

// Key is a parsed setting key: which pass and which field.
type Key struct {
	Pass, Field string
}

// String is the key as stored: pass.NAME.FIELD.
func (k Key) String() string { return ledger.PassSettingKey(k.Pass, k.Field) }

// ParseKey reads pass.NAME.FIELD, for a pass among known and a field among Fields (or
// paused, with paused true). Its error names the key and what would be accepted.
func ParseKey(key string, known []string, paused bool) (Key, error) {
	pass, field, ok := ledger.SplitPassSettingKey(key)
	if !ok {
		return Key{}, fmt.Errorf("unknown key %q (known: %s, or pass.NAME.FIELD with FIELD one of %s)",
			key, ledger.SettingCleanupRetention, strings.Join(Fields, ", "))
	}
	if !slices.Contains(known, pass) {
		return Key{}, fmt.Errorf("%s: no pass %q in the configuration (passes: %s)", key, pass, strings.Join(known, ", "))
	}
	if !slices.Contains(Fields, field) && !(paused && field == FieldPaused) {
		hint := ""
		if field == FieldPaused {
			hint = "; pause and resume a pass with `retention pause NAME` and `retention resume NAME`"
		}
		return Key{}, fmt.Errorf("%s: %q is not a live setting (one of %s)%s", key, field, strings.Join(Fields, ", "), hint)
	}
	return Key{Pass: pass, Field: field}, nil
}

// Parse reads value for k, checks it the way the configuration file's field is checked
// (the runtime must be able to run with it), and returns the value as it is stored.
func Parse(k Key, value string) (string, error) {
	var ov actors.Override
	if err := set(&ov, k, value); err != nil {
		return "", err
	}
	if err := ov.Validate(k.Pass); err != nil {
		return "", fmt.Errorf("%s: %w", k, fieldProblems(err))
	}
	return stored(ov, k.Field), nil
}

// fieldProblems is a validation error's field messages alone (they name the pass and
// the field already), or err itself.
func fieldProblems(err error) error {
	var ve *core.ValidationError
	if !errors.As(err, &ve) || len(ve.Fields) == 0 {
		return err
	}
	var msgs []string
	for _, field := range slices.Sorted(maps.Keys(ve.Fields)) {
		msgs = append(msgs, ve.Fields[field]...)
	}
	return &fieldError{msg: strings.Join(msgs, "; "), err: err}
}

// fieldError shows the field messages and keeps the validation error for errors.As.
type fieldError struct {
	msg string
	err error
}

func (e *fieldError) Error() string { return e.msg }
func (e *fieldError) Unwrap() error { return e.err }

// set reads one field's text into ov.
func set(ov *actors.Override, k Key, value string) error {
	value = strings.TrimSpace(value)
	switch k.Field {
	case FieldBatchSize:
		n, err := strconv.Atoi(value)
		if err != nil {
			return fmt.Errorf("%s must be a whole number, got %q", k, value)
		}
		ov.BatchSize = &n
	case FieldBatchDelay, FieldSweepInterval:
		d, err := config.ParseDuration(value)
		if err != nil {
			return fmt.Errorf("%s must be a duration (250ms, 10m, 1d), got %q", k, value)
		}
		if k.Field == FieldBatchDelay {
			ov.BatchDelay = &d
		} else {
			ov.SweepInterval = &d
		}
	case FieldPacing:
		ov.Pacing = value
	case FieldPaused:
		b, err := strconv.ParseBool(value)
		if err != nil {
			return fmt.Errorf("%s must be true or false, got %q", k, value)
		}
		ov.Paused = b
	default:
		return fmt.Errorf("%s: %q is not a live setting", k, k.Field)
	}
	return nil
}

// stored is the canonical text of one field of ov.
func stored(ov actors.Override, field string) string {
	switch field {
	case FieldBatchSize:
		return strconv.Itoa(*ov.BatchSize)
	case FieldBatchDelay:
		return ov.BatchDelay.String()
	case FieldSweepInterval:
		return ov.SweepInterval.String()
	case FieldPacing:
		return ov.Pacing
	default:
		return strconv.FormatBool(ov.Paused)
	}
}

// Overrides turns the stored pass settings into one Override per pass of known (the
// zero Override for a pass with none). A stored value that does not check (written by
// hand, or by an older version) is left out and reported, and the pass keeps the file's
// value for that field.
func Overrides(settings []ledger.Setting, known []string) (map[string]actors.Override, []error) {
	out := make(map[string]actors.Override, len(known))
	for _, name := range known {
		out[name] = actors.Override{}
	}
	var errs []error
	for _, s := range settings {
		k, err := ParseKey(s.Key, known, true)
		if err != nil {
			if _, _, ok := ledger.SplitPassSettingKey(s.Key); ok {
				errs = append(errs, fmt.Errorf("ledger setting ignored: %w", err))
			}
			continue
		}
		ov := out[k.Pass]
		trial := ov
		if err := set(&trial, k, s.Value); err != nil {
			errs = append(errs, fmt.Errorf("ledger setting ignored: %w", err))
			continue
		}
		if err := trial.Validate(k.Pass); err != nil {
			errs = append(errs, fmt.Errorf("ledger setting %s ignored: %w", k, fieldProblems(err)))
			continue
		}
		out[k.Pass] = trial
	}
	return out, errs
}
