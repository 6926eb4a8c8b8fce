package input

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/nccltune/nccltune/internal/vocab"
)

// RunBytes is the most one command reads over all its inputs together
// (Inputs): MaxBytes bounds one file, but a directory of 3,000 ordinary
// logs (348 MB) held 2.8 GB. Four files at the cap, about eight seconds
// of parsing.
const RunBytes = 4 * MaxBytes

// Inputs reads the files one command is given: each file once, all of
// them within one read budget. It is the one home of both rules; a
// command makes one per run and reads every input through it.
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

// DuplicateError is an input that is a file already read by this run:
// the same path twice, a directory and a file in it, two paths or a
// symbolic link reaching one file (os.SameFile). It is not read again.
type DuplicateError struct {
	Name string
	// Same is the input it repeats.
	Same string
}

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("%s is the same file as %s: read once", e.Name, e.Same)
}

// BudgetError is an input that would take the run past its read budget.
type BudgetError struct {
	Name   string
	Budget int64
	// Files are the inputs read before it.
	Files int
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
// kind of file in its errors, and within what is left of the budget. A
// file this run already read is a *DuplicateError (nothing read), stdin
// named twice a usage error (it can be read once), and an input past the
// budget a *BudgetError marked vocab.ErrUsage.
func (in *Inputs) Read(ctx context.Context, name string, stdin io.Reader, what string) ([]byte, error) {
	var info os.FileInfo
	if name == "-" {
		if in.stdin {
			return nil, vocab.UsageErrorf("standard input (-) is named twice: it can be read once; name it once")
		}
	} else if fi, err := os.Stat(name); err == nil && !fi.IsDir() {
		for _, s := range in.seen {
			if os.SameFile(s.info, fi) {
				return nil, &DuplicateError{Name: name, Same: s.name}
			}
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
