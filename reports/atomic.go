package reports

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// OutputHook, when not nil, wraps the writer of every file WriteFile
// writes. Tests set it to a writer that fails after so many bytes to
// simulate a full disk; it is nil in a real run.
var OutputHook func(io.Writer) io.Writer

// AtomicFile is a file written whole or not at all, for outputs that are
// streamed while a run goes on (a Chrome trace): its bytes go to a
// temporary file in the nearest folder of its path that exists, and Commit
// makes the path's folder if need be and renames the file onto the path.
// Abort, or a failed Commit, removes it. Until Commit no folder is made.
type AtomicFile struct {
	path string
	f    *os.File
	w    io.Writer
}

// CreateAtomic starts the file at path.
func CreateAtomic(path string) (*AtomicFile, error) {
	f, err := os.CreateTemp(existingFolder(filepath.Dir(path)), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("cannot write %s: %w", path, err)
	}
	a := &AtomicFile{path: path, f: f, w: f}
	if OutputHook != nil {
		a.w = OutputHook(f)
	}
	return a, nil
}

// existingFolder is dir or its nearest ancestor that exists: a folder made
// later below it is on its file system, so a rename reaches it.
func existingFolder(dir string) string {
	for {
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return dir
		}
		dir = parent
	}
}

// Write writes to the temporary file.
func (a *AtomicFile) Write(p []byte) (int, error) { return a.w.Write(p) }

// Commit puts the complete file in place.
func (a *AtomicFile) Commit() error {
	err := a.f.Sync()
	if cerr := a.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(a.f.Name(), 0o644)
	}
	if err == nil {
		err = os.MkdirAll(filepath.Dir(a.path), 0o755)
	}
	if err == nil {
		err = os.Rename(a.f.Name(), a.path)
	}
	if err != nil {
		_ = os.Remove(a.f.Name())
		return fmt.Errorf("cannot write %s: %w", a.path, err)
	}
	return nil
}

// Abort drops the file.
func (a *AtomicFile) Abort() {
	_ = a.f.Close()
	_ = os.Remove(a.f.Name())
}

// WriteFile writes a file whole or not at all: write fills a temporary
// file beside path, which is synced and renamed onto path only once
// complete; on any error the temporary file is removed and path is left
// as it was. Every output of kvcosim goes through it.
func WriteFile(path string, write func(io.Writer) error) error {
	a, err := CreateAtomic(path)
	if err != nil {
		return err
	}
	if err := write(a); err != nil {
		a.Abort()
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return a.Commit()
}

// WriteCSV writes rows (the header first) as CSV to path through
// WriteFile.
func WriteCSV(path string, rows [][]string) error {
	return WriteFile(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		return cw.WriteAll(rows)
	})
}

// WriteBytes writes data to path through WriteFile.
func WriteBytes(path string, data []byte) error {
	return WriteFile(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
