package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/nccltune/nccltune/internal/outfile"
)

// writeOut writes the file named by --out with outfile.Write (what
// already exists there keeps its nature) and says what to do when it
// cannot: every command that writes a file (export, plot, report, replay
// build) writes it here.
func writeOut(path string, write func(io.Writer) error) error {
	if err := outfile.Write(path, nil, write); err != nil {
		return fmt.Errorf("cannot write %s: %w; pass --out with a path you can write", path, unwrapPath(err))
	}
	return nil
}

// unwrapPath drops the *PathError's operation and path, which the
// message already names.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
