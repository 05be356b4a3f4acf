package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/retentionkit/retention/node/buildinfo"
)

// addVersion gives root both spellings of the version: the --version flag (cobra's)
// and the version command, printing the same text.
func addVersion(root *cobra.Command) {
	info := buildinfo.Read()
	root.Version = info.Version
	root.SetVersionTemplate(info.String())
	root.AddCommand(&cobra.Command{
		Use:     "version",
		Short:   "Print the version, the VCS revision and the Go version this binary was built with",
		Example: "  retention version\n  retention --version",
		Args:    exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprint(cmd.OutOrStdout(), info.String())
			return err
		},
	})
}
