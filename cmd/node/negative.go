package main

import (
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// negativeNumber is a word that starts like a negative number or duration (-1, -5s,
// -.5h). No flag of the binary starts with a digit, so such a word is always a value.
var negativeNumber = regexp.MustCompile(`^-\.?[0-9]`)

// valuesMayBeNegative makes cmd read a word such as -1 as a value rather than an
// unknown shorthand flag (pflag's reading, which made `settings set KEY -1` fail with
// "unknown shorthand flag: '1' in -1" before the value was ever checked). cobra's own
// parsing is switched off for cmd and done here, with the same flags; `--` still ends
// the flags. args then checks the positional words.
func valuesMayBeNegative(cmd *cobra.Command, args cobra.PositionalArgs) {
	run := cmd.RunE
	cmd.DisableFlagParsing = true
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(cmd *cobra.Command, raw []string) error {
		positional, err := parseFlagsKeepingNegatives(cmd, raw)
		if err != nil {
			return usageError{err}
		}
		if help, _ := cmd.Flags().GetBool("help"); help {
			return cmd.Help()
		}
		if pre := cmd.Root().PersistentPreRunE; pre != nil {
			if err := pre(cmd, positional); err != nil {
				return err // the root's checks ran before the flags were parsed: run them again
			}
		}
		if err := args(cmd, positional); err != nil {
			return err
		}
		return run(cmd, positional)
	}
}

// parseFlagsKeepingNegatives parses cmd's flags (its own and those it inherits) out of
// raw and returns the positional words in their order, negative numbers among them.
func parseFlagsKeepingNegatives(cmd *cobra.Command, raw []string) ([]string, error) {
	flags := cmd.Flags()
	_ = cmd.InheritedFlags() // merges the parents' persistent flags into flags
	var flagWords, positional []string
	for i := 0; i < len(raw); i++ {
		w := raw[i]
		switch {
		case w == "--":
			positional = append(positional, raw[i+1:]...)
			i = len(raw)
		case negativeNumber.MatchString(w) || len(w) < 2 || w[0] != '-':
			positional = append(positional, w)
		default:
			flagWords = append(flagWords, w)
			if takesSeparateValue(cmd, w) && i+1 < len(raw) {
				i++
				flagWords = append(flagWords, raw[i])
			}
		}
	}
	if err := flags.Parse(flagWords); err != nil {
		return nil, err
	}
	return positional, nil
}

// takesSeparateValue reports whether the flag word w (--config, -h) is a flag that
// takes a value and was given it in the next word rather than after '='.
func takesSeparateValue(cmd *cobra.Command, w string) bool {
	if strings.Contains(w, "=") {
		return false
	}
	var f *pflag.Flag
	switch {
	case strings.HasPrefix(w, "--"):
		f = cmd.Flags().Lookup(w[2:])
	case len(w) == 2: // one shorthand; a run of them (-hx) is left to pflag
		f = cmd.Flags().ShorthandLookup(w[1:])
	}
	return f != nil && f.NoOptDefVal == ""
}
