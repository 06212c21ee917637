package reports

import (
	"encoding/csv"
	"fmt"
	"io"
	"io/fs"
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

// CreateAtomic starts the file at path, which must be a regular file or
// absent (CheckOutputFile).
func CreateAtomic(path string) (*AtomicFile, error) {
	if err := CheckOutputFile(path); err != nil {
		return nil, fmt.Errorf("cannot write %s: %w", path, err)
	}
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

// CheckOutputFile refuses an output path that exists and is not a regular
// file: the rename that puts a file in place would replace a symbolic link
// (its target never written), a named pipe or a device node, and fails on
// a folder. The error says what the path is; the caller names it.
func CheckOutputFile(path string) error {
	st, err := os.Lstat(path)
	switch {
	case os.IsNotExist(err):
		return nil
	case err != nil:
		return err
	case st.Mode().IsRegular():
		return nil
	}
	return fmt.Errorf("%s, not a regular file: name a regular file or a new path (the output is put in place by a rename, which would replace it)", fileKind(st.Mode()))
}

// fileKind says in words what a path that is not a regular file is.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "a special file"
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
func WriteBytes(path string, data []byte) error { return WriteFile(path, Bytes(data)) }

// Bytes is a WriteFile writer of data.
func Bytes(data []byte) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}
}
