package main

import "github.com/urfave/cli/v2"

// resumeFixedKeys are the keys a resumed search takes from its study, not
// from the file: the file of the study being resumed names them too, and
// they must not count as new values.
var resumeFixedKeys = map[string]bool{
	"band": true, "part": true, "guard-ops": true, "guard-launches": true, "space": true, "space-only": true, "guard": true, "sampler": true, "confirm": true,
	"min-effect": true, "alpha": true, "allow-disabled-protocols": true, "budget": true, "time": true,
	"seed": true, "baseline-env": true, "baseline-env-file": true, "name": true, "label": true,
}

// resumedKeys are the keys a resumed search takes from its study.
func resumedKeys(c *cli.Context) map[string]bool {
	if c.Command.Name == "search" && c.String("resume") != "" {
		return resumeFixedKeys
	}
	return nil
}
