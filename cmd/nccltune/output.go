package main

import (
	"errors"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/ui"
	"github.com/nccltune/nccltune/internal/vocab"
)

// countingWriter counts what a command wrote, so run knows whether a
// --json command already printed its document.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func jsonFlag() cli.Flag {
	return &cli.BoolFlag{Name: "json", Usage: "print one JSON document on stdout"}
}

// cmdIO is what the commands' options share: the database, --json and
// where the output goes.
type cmdIO struct {
	db     string
	json   bool
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

func ioOf(c *cli.Context, db string) cmdIO {
	return cmdIO{db: db, json: c.Bool("json"), stdin: c.App.Reader, stdout: c.App.Writer, stderr: c.App.ErrWriter}
}

// errorKinds name the exit codes of DESIGN.md in the error document.
var errorKinds = map[int]string{
	exitCheckFailed: "failed",
	exitUsage:       "usage",
	exitFabric:      "fabric",
	exitInterrupted: "interrupted",
}

// errorJSON is err in the one shape errors take in JSON documents.
func errorJSON(err error) ui.ErrorJSON {
	code := exitCode(err)
	msg := err.Error()
	if errors.Is(err, vocab.ErrInterrupted) {
		msg = "interrupted by the user (Ctrl-C or SIGTERM); what was measured is saved"
	}
	return ui.ErrorJSON{Code: code, Kind: errorKinds[code], Message: msg}
}
