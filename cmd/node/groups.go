package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// asGroup makes cmd a command group that refuses what is not one of its commands: cobra
// on its own ends `retention frobnicate` with exit 1 and `retention settings frobnicate`
// with the group's help and exit 0, where an unknown command is a usage error (exit 2,
// docs/node.md). Without arguments the group prints its help and succeeds.
func asGroup(cmd *cobra.Command) *cobra.Command {
	cmd.Args = cobra.ArbitraryArgs
	cmd.SuggestionsMinimumDistance = 2 // cobra's own default, which SuggestionsFor does not apply
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		return usageError{unknownCommand(cmd, args[0])}
	}
	return cmd
}

// unknownCommand names the word that is not a command of group, with the nearest
// commands when there are some, and where to find the list.
func unknownCommand(group *cobra.Command, word string) error {
	hint := ""
	if near := group.SuggestionsFor(word); len(near) > 0 {
		hint = fmt.Sprintf(" (did you mean %s?)", strings.Join(near, " or "))
	}
	return fmt.Errorf("unknown command %q for %q%s; see '%s --help'", word, group.CommandPath(), hint, group.CommandPath())
}

// addBuiltins adds cobra's own help and completion commands now rather than when the
// command line runs, so they carry an example like every other command and the
// completion group refuses an unknown shell as any group does.
func addBuiltins(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		switch c.Name() {
		case "help":
			c.Example = "  retention help sweep"
			show := c.Run
			c.RunE = func(cmd *cobra.Command, args []string) error {
				// cobra's help prints "Unknown help topic" and succeeds
				if target, rest, err := root.Find(args); err == nil && len(rest) > 0 {
					return usageError{unknownCommand(target, rest[0])}
				}
				show(cmd, args)
				return nil
			}
		case "completion":
			asGroup(c)
			c.Example = "  source <(retention completion bash)"
			for _, shell := range c.Commands() {
				shell.Example = completionExample(shell.Name())
			}
		}
	}
}

// completionExample loads shell's completion for the session at hand.
func completionExample(shell string) string {
	switch shell {
	case "fish":
		return "  retention completion fish | source"
	case "powershell":
		return "  retention completion powershell | Out-String | Invoke-Expression"
	default: // bash, zsh
		return "  source <(retention completion " + shell + ")"
	}
}
