// Package input reads the files a user hands nccltune with a cap on their
// size, from anything that can be read (a FIFO, /dev/stdin), so that
// Ctrl-C ends a read that would otherwise wait forever.
package input

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/nccltune/nccltune/internal/outfile"
	"github.com/nccltune/nccltune/internal/vocab"
)

// MaxBytes is the largest input nccltune reads (parsing 64 MiB takes
// about two seconds).
const MaxBytes = 64 << 20

// TooLargeError is an input over the cap.
type TooLargeError struct {
	Name  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %d MiB, the most nccltune reads; cut it to the run you need (e.g. with grep or split)", e.Name, e.Limit>>20)
}

// ErrNotFile is an input that is a directory.
var ErrNotFile = errors.New("not a file")

// ReadFile reads name ("-" is stdin) up to limit bytes; past it, a
// *TooLargeError. It returns ctx's error as soon as ctx is cancelled (the
// read itself may go on in the background until the file yields). --out
// may not name the file from now on.
func ReadFile(ctx context.Context, name string, stdin io.Reader, limit int64) ([]byte, error) {
	outfile.Keep(name)
	open := func() (io.ReadCloser, error) { return os.Open(name) }
	if name == "-" {
		if stdin == nil {
			stdin = os.Stdin
		}
		open, name = func() (io.ReadCloser, error) { return io.NopCloser(stdin), nil }, "standard input"
	} else if info, err := os.Stat(name); err != nil {
		return nil, err
	} else if info.IsDir() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: ErrNotFile}
	} else if info.Mode().IsRegular() && info.Size() > limit {
		return nil, &TooLargeError{Name: name, Limit: limit}
	}
	type result struct {
		data []byte
		err  error
	}
	// Opening a FIFO waits for a writer, and reading it for data: in a
	// goroutine, so that Ctrl-C still ends the command.
	ch := make(chan result, 1)
	go func() {
		f, err := open()
		if err != nil {
			ch <- result{nil, err}
			return
		}
		defer f.Close()
		// Close on cancel too: a FIFO whose writer never writes would
		// otherwise hold the fd and this goroutine for good.
		stop := context.AfterFunc(ctx, func() { f.Close() })
		defer stop()
		data, err := io.ReadAll(&ctxReader{ctx: ctx, r: io.LimitReader(f, limit+1)})
		ch <- result{data, err}
	}()
	select {
	case res := <-ch:
		if res.err != nil {
			return nil, res.err
		}
		if int64(len(res.data)) > limit {
			return nil, &TooLargeError{Name: name, Limit: limit}
		}
		return res.data, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// ctxReader stops a read loop (of /dev/zero, say) once ctx is cancelled.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// ReadSaved reads a file of saved nccl-tests output ("-": stdin) up to
// MaxBytes, with errors that say what to give instead.
func ReadSaved(ctx context.Context, name string, stdin io.Reader) ([]byte, error) {
	return readNamed(ctx, name, stdin, "saved nccl-tests output", MaxBytes)
}

// readNamed is ReadSaved for a file of another kind, what naming it in
// the errors, up to limit bytes.
func readNamed(ctx context.Context, name string, stdin io.Reader, what string, limit int64) ([]byte, error) {
	data, err := ReadFile(ctx, name, stdin, limit)
	var tooLarge *TooLargeError
	switch {
	case err == nil:
		return data, nil
	case ctx.Err() != nil:
		return nil, vocab.ErrInterrupted
	case errors.Is(err, fs.ErrNotExist):
		return nil, vocab.UsageErrorf("%s: no such file; give the path of %s", name, what)
	case errors.Is(err, ErrNotFile):
		return nil, vocab.UsageErrorf("%s is a directory; give the files of %s inside it", name, what)
	case errors.As(err, &tooLarge):
		return nil, vocab.Mark(vocab.ErrUsage, err)
	case name == "-":
		return nil, fmt.Errorf("reading standard input: %w", err)
	}
	return nil, fmt.Errorf("cannot read %s: %w", name, err)
}
