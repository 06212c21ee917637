// Package bounded reads a file only up to a limit: a device such as
// /dev/zero never ends, and a file far larger than its kind ever is would
// otherwise be read until memory runs out.
package bounded

import (
	"io"
	"os"
)

// ReadFile reads path whole if it holds at most limit bytes; tooLarge
// reports that it holds more (and data is then nil). The caller names the
// kind of file in its error.
func ReadFile(path string, limit int64) (data []byte, tooLarge bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	data, err = io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(data)) > limit {
		return nil, true, nil
	}
	return data, false, nil
}
