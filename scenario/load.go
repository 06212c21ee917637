package scenario

import (
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/kvcosim/kvcosim/internal/bounded"
	"github.com/kvcosim/kvcosim/workloads"
)

//go:embed default.yaml
var defaultYAML []byte

// DefaultYAML returns the embedded default scenario.
func DefaultYAML() []byte { return append([]byte(nil), defaultYAML...) }

// Error is a problem with a scenario: where it comes from (a file and
// line, "--set", or the embedded default) and the key.
type Error struct {
	Where, Key, Msg string
}

func (e *Error) Error() string {
	if e.Key == "" {
		return e.Where + ": " + e.Msg
	}
	return fmt.Sprintf("%s: key %s: %s", e.Where, e.Key, e.Msg)
}

// Loaded is a scenario and where each of its keys was last set.
type Loaded struct {
	Scenario
	where    map[string]string
	resolved *resolved
	workload *workloads.Workload // set by UseWorkload: replaces the workload section
}

// UseWorkload makes the run replay w instead of the scenario's workload
// (simrun verify makes its own sessions).
func (l *Loaded) UseWorkload(w *workloads.Workload) { l.workload = w }

// Where returns the origin of a dotted key's value; a key of a list's item
// that the item leaves out ("storage.tiers[0].capacity"), the item's.
func (l *Loaded) Where(key string) string {
	if w, ok := l.where[key]; ok {
		return w
	}
	if list, rest, ok := strings.Cut(key, "["); ok {
		index, _, _ := strings.Cut(rest, "]")
		for _, k := range []string{list + "[" + index + "]", list} {
			if w, ok := l.where[k]; ok {
				return w
			}
		}
	}
	return "(default)"
}

// Warnings are the settings that run as asked but cost what a user may
// not expect, each naming where its key was set; simrun prints them.
func (l *Loaded) Warnings() []string { return l.resolved.warnings }

// Unset reports whether a key's value is the embedded default's: neither
// the scenario file nor a --set gave it.
func (l *Loaded) Unset(key string) bool { return strings.HasPrefix(l.Where(key), "(default)") }

// Load reads the embedded default, then the file (if path is not empty),
// then the --set overrides ("dotted.key=value"), and validates the result.
func Load(path string, sets []string) (*Loaded, error) { return loadAs(path, sets, "--set") }

// loadAs is Load with the overrides given by who ("--set", or a command
// that sets keys of its own, as simrun verify does): errors name them so,
// and a culprit is looked for among the user's keys first (culprit).
func loadAs(path string, sets []string, who string) (*Loaded, error) {
	if path == "" {
		return load(nil, "", sets, who)
	}
	data, err := readBounded(path, MaxScenarioBytes, "a scenario file")
	if err != nil {
		return nil, &Error{Where: path, Msg: fmt.Sprintf("cannot read the scenario: %v", err)}
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil, &Error{Where: path, Msg: "the scenario file is empty"}
	}
	return load(data, path, sets, who)
}

// MaxScenarioBytes bounds a scenario file: far more than any scenario
// needs, and read no further (a device such as /dev/zero never ends).
const MaxScenarioBytes = 1 << 20

// readBounded reads a file of at most limit bytes (what names the kind of
// file in the error).
func readBounded(path string, limit int, what string) ([]byte, error) {
	data, tooLarge, err := bounded.ReadFile(path, int64(limit))
	if tooLarge {
		return nil, fmt.Errorf("larger than the %d KiB limit of %s", limit>>10, what)
	}
	return data, err
}

// LoadBytes is Load for a scenario held in memory (named name in errors).
func LoadBytes(name string, data []byte, sets []string) (*Loaded, error) {
	return load(data, name, sets, "--set")
}

func load(data []byte, name string, sets []string, who string) (*Loaded, error) {
	l := &Loaded{where: map[string]string{}}
	if err := l.apply(defaultYAML, "(default)"); err != nil {
		return nil, err
	}
	if data != nil {
		if err := l.apply(data, name); err != nil {
			return nil, err
		}
	}
	for _, s := range sets {
		if err := l.set(s, who); err != nil {
			return nil, err
		}
	}
	r, err := l.resolve()
	if err != nil {
		return nil, err
	}
	l.resolved = r
	return l, nil
}

// apply decodes a YAML document over the scenario, key by key.
func (l *Loaded) apply(data []byte, src string) error {
	doc, err := oneDocument(data, src)
	if err != nil {
		return err
	}
	if len(doc.Content) == 0 {
		return nil
	}
	return l.walk(doc.Content[0], reflect.ValueOf(&l.Scenario).Elem(), "", src)
}

// oneDocument parses the YAML text of file src, which must hold one
// document: a second one (after a "---") would be ignored without a word,
// so it is an error naming the line it starts on. Empty text is an empty
// document.
func oneDocument(data []byte, src string) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc, next yaml.Node
	if err := dec.Decode(&doc); err != nil && err != io.EOF {
		return nil, &Error{Where: src, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	switch err := dec.Decode(&next); {
	case err == io.EOF:
		return &doc, nil
	case err != nil:
		return nil, &Error{Where: src, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	return nil, &Error{Where: fmt.Sprintf("%s:%d", src, next.Line), Msg: "a second YAML document: a file holds one (remove the \"---\" and put its keys in the first)"}
}

// walk matches a mapping node against a struct: unknown keys are errors;
// each leaf is decoded into its field.
func (l *Loaded) walk(n *yaml.Node, v reflect.Value, prefix, src string) error {
	if n.Kind != yaml.MappingNode {
		return &Error{Where: origin(src, n.Line), Key: strings.TrimSuffix(prefix, "."), Msg: "expected a mapping of keys"}
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		key := prefix + k.Value
		where := origin(src, k.Line)
		if line, dup := seen[k.Value]; dup {
			return &Error{Where: where, Key: key, Msg: fmt.Sprintf("set twice, on lines %d and %d", line, k.Line)}
		}
		seen[k.Value] = k.Line
		f, ok := fieldByTag(v, k.Value)
		if !ok {
			return &Error{Where: where, Key: key, Msg: "unknown key (valid keys here: " + strings.Join(tags(v.Type()), ", ") + ")"}
		}
		if f.Kind() == reflect.Struct {
			if err := l.walk(val, f, key+".", src); err != nil {
				return err
			}
			continue
		}
		if f.Kind() == reflect.Slice {
			if err := l.walkList(val, f, key, src); err != nil {
				return err
			}
			continue
		}
		if err := decodeLeaf(val, f); err != nil {
			return &Error{Where: where, Key: key, Msg: err.Error()}
		}
		l.where[key] = where
	}
	return nil
}

// walkList decodes a list of mappings (storage.tiers) item by item, each
// checked as a mapping of its own ("storage.tiers[1].device").
func (l *Loaded) walkList(n *yaml.Node, f reflect.Value, key, src string) error {
	if n.Kind != yaml.SequenceNode {
		return &Error{Where: origin(src, n.Line), Key: key, Msg: "expected a list of mappings"}
	}
	list := reflect.MakeSlice(f.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		if err := l.walk(item, list.Index(i), fmt.Sprintf("%s[%d].", key, i), src); err != nil {
			return err
		}
		l.where[fmt.Sprintf("%s[%d]", key, i)] = origin(src, item.Line)
	}
	f.Set(list)
	l.where[key] = origin(src, n.Line)
	return nil
}

// origin names where a key was written: the file and line, or the --set that
// gave it (a list's items in its value, a line of their own).
func origin(src string, line int) string {
	if strings.HasPrefix(src, "--set ") {
		return src
	}
	return fmt.Sprintf("%s:%d", src, line)
}

// set applies one --set dotted.key=value, given by who.
func (l *Loaded) set(s, who string) error {
	key, value, ok := strings.Cut(s, "=")
	where := who + " " + s
	if !ok || key == "" {
		return &Error{Where: where, Msg: "expected dotted.key=value"}
	}
	v := reflect.ValueOf(&l.Scenario).Elem()
	parts := strings.Split(key, ".")
	for i, p := range parts {
		f, found := fieldByTag(v, p)
		if !found {
			return &Error{Where: where, Key: key, Msg: "unknown key (valid keys here: " + strings.Join(tags(v.Type()), ", ") + ")"}
		}
		if i < len(parts)-1 {
			if f.Kind() != reflect.Struct {
				return &Error{Where: where, Key: key, Msg: strings.Join(parts[:i+1], ".") + " has no sub-keys"}
			}
			v = f
			continue
		}
		if f.Kind() == reflect.Struct {
			return &Error{Where: where, Key: key, Msg: "is a section; set one of its keys: " + strings.Join(tags(f.Type()), ", ")}
		}
		if f.Kind() == reflect.Slice {
			doc, err := oneDocument([]byte(value), where)
			if err != nil || len(doc.Content) == 0 {
				return &Error{Where: where, Key: key, Msg: "want a list of mappings, such as [{name: dram, device: ddr5-4800, capacity: 64GB}]"}
			}
			return l.walkList(doc.Content[0], f, key, where)
		}
		if err := setLeaf(value, f); err != nil {
			return &Error{Where: where, Key: key, Msg: err.Error()}
		}
	}
	l.where[key] = where
	return nil
}

// setLeaf decodes a --set value: YAML, or for a string key an empty value.
func setLeaf(value string, f reflect.Value) error {
	if strings.TrimSpace(value) == "" && f.Kind() == reflect.String {
		f.SetString("")
		return nil
	}
	doc, err := oneDocument([]byte(value), "")
	if err != nil || len(doc.Content) == 0 {
		return fmt.Errorf("cannot use %q: want %s", value, kindName(f))
	}
	return decodeLeaf(doc.Content[0], f)
}

// decodeLeaf decodes a scalar into a field. An empty value (null) is an
// error, not the default; a whole-number key takes only a whole number in
// its type's range.
func decodeLeaf(n *yaml.Node, f reflect.Value) error {
	switch {
	case n.Kind != yaml.ScalarNode:
		return fmt.Errorf("want %s, not a mapping or a list", kindName(f))
	case n.Tag == "!!null":
		return fmt.Errorf("empty value %q: want %s", n.Value, kindName(f))
	case isWhole(f) && n.Tag != "!!int":
		return fmt.Errorf("cannot use %q: want %s in range", n.Value, kindName(f))
	}
	if err := n.Decode(f.Addr().Interface()); err != nil {
		return fmt.Errorf("cannot use %q: want %s", n.Value, kindName(f))
	}
	return nil
}

func isWhole(v reflect.Value) bool {
	switch kindOf(v) {
	case reflect.Int, reflect.Int64, reflect.Uint64:
		return true
	}
	return false
}

// kindOf is the kind of a field's value, through a pointer (a device
// file's optional keys): a *int took 1.9 as 1, and a *float64 asked for
// a string.
func kindOf(v reflect.Value) reflect.Kind {
	t := v.Type()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind()
}

// Keys returns every settable dotted key of the schema, sorted.
func Keys() []string {
	var out []string
	var rec func(t reflect.Type, prefix string)
	rec = func(t reflect.Type, prefix string) {
		for i := range t.NumField() {
			f := t.Field(i)
			name := prefix + yamlName(f)
			if f.Type.Kind() == reflect.Struct {
				rec(f.Type, name+".")
			} else {
				out = append(out, name)
			}
		}
	}
	rec(reflect.TypeOf(Scenario{}), "")
	sort.Strings(out)
	return out
}

// yamlName is a field's key: its yaml tag without options.
func yamlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	return name
}

func fieldByTag(v reflect.Value, tag string) (reflect.Value, bool) {
	t := v.Type()
	for i := range t.NumField() {
		if yamlName(t.Field(i)) == tag {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

func tags(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		out = append(out, yamlName(t.Field(i)))
	}
	sort.Strings(out)
	return out
}

func kindName(v reflect.Value) string {
	switch kindOf(v) {
	case reflect.Int, reflect.Int64, reflect.Uint64:
		return "a whole number"
	case reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	}
	return "a string"
}

// YAML renders the resolved scenario, as written next to the results:
// every key as the run used it (the design's own hashing, chunk and layout
// included, resolveFPGA), so that a run of it repeats the run. With
// storage.tiers, storage.device and storage.capacity, which only the
// one-tier form reads and which may not stand beside the tiers, are left
// out.
func (l *Loaded) YAML() []byte {
	record := l.Scenario
	if len(record.Storage.Tiers) > 0 {
		record.Storage.Device, record.Storage.Capacity = "", ""
	}
	out, err := yaml.Marshal(&record)
	if err != nil {
		panic(err) // the schema is plain data
	}
	return out
}

// KVRoom is what the study's break-even map needs of the scenario's model
// on its accelerator: the KV bytes of a token, and the tokens that all of
// the device memory the weights leave holds (accelerator.kv_capacity: auto).
func (l *Loaded) KVRoom() (bytesPerToken, tokens int64) {
	rs := l.resolved
	if rs == nil || rs.node == nil || rs.host.KVBytesPerToken <= 0 {
		return 0, 0
	}
	return rs.host.KVBytesPerToken, rs.node.KVCapacityBytes() / rs.host.KVBytesPerToken
}

// Describe says in a line what the scenario runs: the workload, the model
// on its accelerators, the nodes and the store.
func (l *Loaded) Describe() string {
	w := l.Workload
	load := fmt.Sprintf("%d chat sessions at %g/s", w.Sessions, w.SessionRatePerS)
	if w.Arrival != "" && w.Arrival != workloads.ArrivalPoisson.String() {
		load += fmt.Sprintf(" (%s arrivals)", w.Arrival)
	}
	if len(w.Tenants) > 0 {
		load += fmt.Sprintf(" of %d tenants", len(w.Tenants))
	}
	if !w.Synthetic() {
		load = fmt.Sprintf("the %s trace %s", w.Kind, w.Path)
	}
	model := fmt.Sprintf("%s on %d x %s", l.Model, l.Accelerator.TP, l.Accelerator.Device)
	if l.Accelerator.KVCapacity != "auto" {
		model += fmt.Sprintf(", %s of KV", l.Accelerator.KVCapacity)
	}
	if l.Mode == "functional" {
		model = "tinylm (functional mode)"
	}
	nodes := "1 node"
	if l.System.Nodes > 1 {
		nodes = fmt.Sprintf("%d nodes", l.System.Nodes)
	}
	storage := fmt.Sprintf("%s storage (%s)", l.Storage.Capacity, l.Storage.Device)
	switch {
	case len(l.Storage.Tiers) > 0:
		var tiers []string
		for _, t := range l.Storage.Tiers {
			tiers = append(tiers, fmt.Sprintf("%s %s", t.Capacity, t.Device))
		}
		storage = "storage tiers " + strings.Join(tiers, ", ")
	case l.resolved != nil && l.resolved.drives > 1:
		storage = fmt.Sprintf("%s storage (%d x %s)", l.Storage.Capacity, l.resolved.drives, l.Storage.Device)
	}
	return fmt.Sprintf("%s; %s; %s; %s, %s hashing", load, model, nodes, storage, l.FPGA.Hashing)
}
