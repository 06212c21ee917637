package reports

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// OutputHook, when not nil, wraps the writer of every file WriteFile
// writes. Tests set it to a writer that fails after so many bytes to
// simulate a full disk; it is nil in a real run.
var OutputHook func(io.Writer) io.Writer

// WriteFile writes a file whole or not at all: write fills a temporary
// file beside path, which is synced and renamed onto path only once
// complete; on any error the temporary file is removed and path is left
// as it was. Every output of kvcosim goes through it.
func WriteFile(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	var w io.Writer = f
	if OutputHook != nil {
		w = OutputHook(f)
	}
	err = write(w)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return nil
}

// WriteBytes writes data to path through WriteFile.
func WriteBytes(path string, data []byte) error {
	return WriteFile(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
