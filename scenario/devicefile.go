package scenario

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/kvcosim/kvcosim/accel"
)

// deviceFile reads accelerator.device_file: a device kept in YAML over a
// preset (accel.DeviceFile), every key checked as a scenario's are; errors
// name the scenario's key, then the device file, line and key. full is
// its path as besideScenario resolved it.
func (r *resolver) deviceFile(key, full string) accel.Device {
	data, err := readBounded(full, MaxScenarioBytes, "a device file")
	if err != nil {
		r.fail(key, "cannot read the device file: %v", err)
		return accel.Device{}
	}
	doc, err := oneDocument(data, full)
	if err != nil {
		r.fail(key, "%v", err)
		return accel.Device{}
	}
	if len(doc.Content) == 0 {
		r.fail(key, "the device file %s is empty", full)
		return accel.Device{}
	}
	var f accel.DeviceFile
	file := &Loaded{where: map[string]string{}}
	if err := file.walk(doc.Content[0], reflect.ValueOf(&f).Elem(), "", full); err != nil {
		r.fail(key, "%v", err)
		return accel.Device{}
	}
	d, err := f.Device()
	var bad *accel.FieldError
	switch {
	case errors.As(err, &bad):
		where := file.Where(bad.Key)
		if strings.HasPrefix(where, "(default)") { // a key the file leaves out
			where = full
		}
		r.fail(key, "%s: key %s: %s", where, bad.Key, bad.Msg)
	case err != nil:
		r.fail(key, "%s: %v", full, err)
	}
	return d
}

// besideScenario resolves a path given in a scenario file against that
// file's folder; a path from --set or an absolute one stays as it is.
func (r *resolver) besideScenario(key, path string) string {
	where := r.l.Where(key)
	if filepath.IsAbs(path) || strings.HasPrefix(where, "--set") || strings.HasPrefix(where, "(default)") {
		return path
	}
	file := where[:max(0, strings.LastIndex(where, ":"))]
	return filepath.Join(filepath.Dir(file), path)
}

// absolute is path made absolute (as it is if that fails): a path that a
// run's scenario.yaml records must name the same file read back from the
// output folder, or from another working directory.
func absolute(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}
