package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/retentionkit/retention/passes"
)

// quarantineCommand lists and releases the rows the table passes hold in quarantine:
// rows whose delete failed on its own, tried again with a backoff.
func quarantineCommand(o *options) *cobra.Command {
	q := asGroup(&cobra.Command{
		Use:   "quarantine",
		Short: "List or release the rows a pass could not delete (see docs/ledger.md)",
		Example: "  retention quarantine list --config retention.yaml --pass audit-log\n" +
			"  retention quarantine release --config retention.yaml --pass audit-log 42",
	})
	q.AddCommand(quarantineListCommand(o), quarantineReleaseCommand(o))
	return q
}

func quarantineListCommand(o *options) *cobra.Command {
	var pass string
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List the quarantined rows, with who holds them and when each is tried again",
		Example: "  retention quarantine list --config retention.yaml --pass audit-log",
		Args:    exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.withLedger(cmd.Context(), "quarantine list", func(n *node) error {
				rows, err := n.ledger.QuarantinedRows(cmd.Context(), pass)
				if err != nil {
					return err
				}
				w := tabwriter.NewWriter(o.stdout, 0, 2, 2, ' ', 0)
				fmt.Fprintln(w, "PASS\tKEY\tATTEMPTS\tFIRST SEEN\tLAST SEEN\tNEXT ATTEMPT\tCONSTRAINT\tREFERENCING TABLE\tERROR")
				for _, r := range rows {
					fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.PassName, r.Key, r.Attempts, shownTime(r.FirstSeen), shownTime(r.LastSeen),
						shownTime(r.NextAttempt), orDash(r.Constraint), orDash(r.ReferencingTable), oneLine(r.Error))
				}
				if err := w.Flush(); err != nil {
					return err
				}
				if len(rows) == 0 {
					fmt.Fprintln(o.stdout, "no rows in quarantine")
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&pass, "pass", "", "only this pass's rows")
	return cmd
}

func quarantineReleaseCommand(o *options) *cobra.Command {
	var pass string
	var all bool
	cmd := &cobra.Command{
		Use:   "release [--pass NAME] KEY | --all",
		Short: "Take rows out of quarantine; the next sweep tries them again",
		Example: `  retention quarantine release --config retention.yaml --pass audit-log 42
  retention quarantine release --config retention.yaml --pass orders '["eu",7]'
  retention quarantine release --config retention.yaml --all`,
		Args: func(_ *cobra.Command, args []string) error {
			if all == (len(args) == 1) || len(args) > 1 {
				return usageError{errors.New("quarantine release: give one KEY or --all")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var keys []string
			if !all {
				var err error
				if keys, err = releaseKeys(args[0]); err != nil {
					return usageError{err}
				}
			}
			return o.withLedger(cmd.Context(), "quarantine release", func(n *node) error {
				released, err := n.release(cmd.Context(), pass, keys, all)
				if err != nil {
					return err
				}
				them := "them"
				if released == 1 {
					them = "it"
				}
				fmt.Fprintf(o.stdout, "released %s; the next sweep tries %s again\n", counted(int(released), "row", "rows"), them)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&pass, "pass", "", "only this pass's rows")
	cmd.Flags().BoolVar(&all, "all", false, "release every quarantined row (of --pass, when given)")
	return cmd
}

func (n *node) release(ctx context.Context, pass string, keys []string, all bool) (int64, error) {
	if all {
		return n.ledger.ReleaseAllQuarantined(ctx, pass)
	}
	return n.ledger.ReleaseQuarantined(ctx, pass, keys)
}

// releaseKeys turns a KEY argument into the key texts it may name: a JSON array is a
// key as `quarantine list` shows it; anything else is the value of a one-column key,
// a string or, when it reads as one, a number.
func releaseKeys(arg string) ([]string, error) {
	if strings.HasPrefix(strings.TrimSpace(arg), "[") {
		dec := json.NewDecoder(bytes.NewReader([]byte(arg)))
		dec.UseNumber()
		var key []any
		if err := dec.Decode(&key); err != nil || len(key) == 0 {
			return nil, fmt.Errorf("quarantine release: KEY %q is not a JSON array of key values", arg)
		}
		return []string{passes.KeyText(key)}, nil
	}
	keys := []string{passes.KeyText([]any{arg})}
	dec := json.NewDecoder(strings.NewReader(arg))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err == nil && !dec.More() {
		if n, ok := v.(json.Number); ok {
			keys = append(keys, passes.KeyText([]any{n}))
		}
	}
	return keys, nil
}

func shownTime(t time.Time) string { return t.Local().Format(time.RFC3339) }

func orDash(s *string) string {
	if s == nil || *s == "" {
		return "-"
	}
	return *s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
