package main

import (
	"io"

	"github.com/nccltune/nccltune/internal/texttable"
)

// table is the one table writer of nccltune's text output (history, show,
// import, search, sweep, gate): texttable's tabwriter, shared with the
// report package so that every table is laid out by one package.
type table = texttable.Table

func newTable(w io.Writer) *table { return texttable.New(w) }
