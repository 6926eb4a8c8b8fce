package input

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/nccltune/nccltune/internal/vocab"
)

// RunBytes is the most one command reads over all its inputs together: a
// directory of 3,000 ordinary logs held 2.8 GB.
const RunBytes = 4 * MaxBytes

// Inputs reads the files one command is given: each file once, all of
// them within one read budget.
type Inputs struct {
	budget, left int64
	files        int
	seen         []seenFile
	stdin        bool
}

type seenFile struct {
	name string
	info os.FileInfo
}

// NewInputs reads within budget bytes in all (RunBytes when budget <= 0).
func NewInputs(budget int64) *Inputs {
	if budget <= 0 {
		budget = RunBytes
	}
	return &Inputs{budget: budget, left: budget}
}

// DuplicateError is an input that is a file already read by this run
// (os.SameFile). It is not read again.
type DuplicateError struct {
	Name string
	Same string // the input it repeats
}

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("%s is the same file as %s: read once", e.Name, e.Same)
}

// BudgetError is an input that would take the run past its read budget.
type BudgetError struct {
	Name   string
	Budget int64
	Files  int // the inputs read before it
}

func (e *BudgetError) Error() string {
	budget := fmt.Sprintf("%d bytes", e.Budget)
	if e.Budget%(1<<20) == 0 {
		budget = fmt.Sprintf("%d MiB", e.Budget>>20)
	}
	return fmt.Sprintf("%s: the inputs together are larger than %s, the most one nccltune command reads (%d files read before it); pass fewer files (one per process of the run you need), or cut them to the steps you need (e.g. with grep or split)",
		e.Name, budget, e.Files)
}

// Read reads name ("-" is stdin) as ReadSaved does, with what naming the
// kind of file in its errors, within what is left of the budget. A file
// this run already read is a *DuplicateError (nothing read).
func (in *Inputs) Read(ctx context.Context, name string, stdin io.Reader, what string) ([]byte, error) {
	var info os.FileInfo
	if name == "-" {
		if in.stdin {
			return nil, vocab.UsageErrorf("standard input (-) is named twice: it can be read once; name it once")
		}
	} else if fi, err := os.Stat(name); err == nil && !fi.IsDir() {
		if i := slices.IndexFunc(in.seen, func(s seenFile) bool { return os.SameFile(s.info, fi) }); i >= 0 {
			return nil, &DuplicateError{Name: name, Same: in.seen[i].name}
		}
		info = fi
	}
	limit := min(int64(MaxBytes), in.left)
	data, err := readNamed(ctx, name, stdin, what, limit)
	var tooLarge *TooLargeError
	// Past the budget, not past the cap of one file: say the budget.
	if errors.As(err, &tooLarge) && limit < MaxBytes && (info == nil || info.Size() <= MaxBytes) {
		return nil, vocab.UsageError(&BudgetError{Name: name, Budget: in.budget, Files: in.files})
	}
	if err != nil {
		return nil, err
	}
	in.left -= int64(len(data))
	in.files++
	if name == "-" {
		in.stdin = true
	} else if info != nil {
		in.seen = append(in.seen, seenFile{name, info})
	}
	return data, nil
}
