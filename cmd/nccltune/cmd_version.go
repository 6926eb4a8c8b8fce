package main

import (
	"fmt"
	"runtime"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/ui"
)

// versionCommand is `nccltune version`: what `--version` prints, plus the
// Go toolchain and platform a bug report needs.
func versionCommand() *cli.Command {
	return &cli.Command{
		Name:      "version",
		Usage:     "print nccltune's version (and the commit it was built from)",
		ArgsUsage: " ",
		Flags: []cli.Flag{
			jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErrorf("version takes no arguments (got %q)", c.Args().First())
			}
			if c.Bool("json") {
				return ui.WriteJSON(c.App.Writer, map[string]any{"schema_version": ui.SchemaVersion,
					"version": version(), "go": runtime.Version(), "platform": runtime.GOOS + "/" + runtime.GOARCH})
			}
			fmt.Fprintf(c.App.Writer, "nccltune %s (%s, %s/%s)\n", version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}
