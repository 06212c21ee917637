package scenario

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Sweep is a study over a grid: a base scenario, overrides for every
// point, and the keys whose values' cartesian product makes the points.
type Sweep struct {
	// Base is the base scenario's path ("" for the embedded default).
	Base string
	// Set are the overrides every point gets, as key=value, in file order.
	Set []string
	// Keys and Values are the grid, in file order: the first key varies
	// slowest.
	Keys   []string
	Values [][]string
	// When are overrides for the points with one grid value: a setting
	// that must pair with it (a model's tensor parallelism), in file
	// order. They win over set's; a grid key cannot be overridden.
	When []SweepWhen
	// Lines says where each set and grid key is written (file:line), so
	// that a point's error can name the sweep file's line of its key.
	Lines map[string]string
}

// SweepWhen overrides settings of the points whose grid key Key has the
// value Value.
type SweepWhen struct {
	Key, Value string
	Set        []string
	// Lines says where each of Set's keys is written.
	Lines map[string]string
	grid  int // Key's place in the grid
}

// applies reports whether the override is for a point with these grid
// values.
func (w SweepWhen) applies(values []string) bool { return values[w.grid] == w.Value }

// SweepPoint is one point of a sweep: its index, the grid's values for it
// and all its overrides.
type SweepPoint struct {
	Index  int
	Values []string
	Sets   []string
}

// LoadSweep reads a sweep file; errors name the file, line and key.
func LoadSweep(path string) (*Sweep, error) {
	data, err := readBounded(path, MaxSweepBytes, "a sweep file")
	if err != nil {
		return nil, &Error{Where: path, Msg: fmt.Sprintf("cannot read the sweep: %v", err)}
	}
	doc, err := oneDocument(data, path)
	if err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, &Error{Where: path, Msg: "expected a mapping with base, set and grid"}
	}
	s := &Sweep{Lines: map[string]string{}}
	at := func(n *yaml.Node) string { return fmt.Sprintf("%s:%d", path, n.Line) }
	root := doc.Content[0]
	sections := map[string]string{}
	var whens *yaml.Node // read once the grid is known
	for i := 0; i < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if first, dup := sections[k.Value]; dup {
			return nil, &Error{Where: at(k), Key: k.Value, Msg: "written twice (first at " + first + ")"}
		}
		sections[k.Value] = at(k)
		switch k.Value {
		case "base":
			if v.Kind != yaml.ScalarNode {
				return nil, &Error{Where: at(v), Key: "base", Msg: "expected the base scenario's path"}
			}
			if v.Value != "" {
				s.Base = v.Value // an absolute path as it is, a relative one from the sweep's folder
				if !filepath.IsAbs(s.Base) {
					s.Base = filepath.Join(filepath.Dir(path), s.Base)
				}
				if info, err := os.Stat(s.Base); err != nil || info.IsDir() {
					return nil, &Error{Where: at(v), Key: "base", Msg: fmt.Sprintf("%s: not a scenario file", s.Base)}
				}
			}
		case "set":
			pairs, err := sweepPairs(v, at, false, s.Lines)
			if err != nil {
				return nil, err
			}
			for _, p := range pairs {
				s.Set = append(s.Set, p.key+"="+p.values[0])
			}
		case "grid":
			pairs, err := sweepPairs(v, at, true, s.Lines)
			if err != nil {
				return nil, err
			}
			for _, p := range pairs {
				s.Keys, s.Values = append(s.Keys, p.key), append(s.Values, p.values)
			}
		case "when":
			whens = v
		default:
			return nil, &Error{Where: at(k), Key: k.Value, Msg: "unknown key (valid keys here: base, set, grid, when)"}
		}
	}
	if whens != nil {
		if err := s.readWhen(whens, at); err != nil {
			return nil, err
		}
	}
	if len(s.Keys) == 0 { // at the grid's line if it has one
		return nil, &Error{Where: cmp.Or(sections["grid"], path), Key: "grid", Msg: "the grid is empty: give at least one key and its values"}
	}
	n := 1
	for _, v := range s.Values {
		if n *= len(v); n > MaxSweepPoints {
			return nil, &Error{Where: sections["grid"], Key: "grid", Msg: fmt.Sprintf("more than %d points: split the sweep", MaxSweepPoints)}
		}
	}
	return s, nil
}

// readWhen reads the when section: a mapping from "grid key=value" to
// the overrides of the points with that value, which win over set's. A
// grid key cannot be overridden, nor a key written twice for one value.
func (s *Sweep) readWhen(n *yaml.Node, at func(*yaml.Node) string) error {
	if n.Kind != yaml.MappingNode {
		return &Error{Where: at(n), Key: "when", Msg: "expected a mapping of grid key=value to overrides"}
	}
	seen := map[string]string{}
	for i := 0; i < len(n.Content); i += 2 {
		c, v := n.Content[i], n.Content[i+1]
		key, value, _ := strings.Cut(c.Value, "=")
		k := slices.Index(s.Keys, key)
		if k < 0 || !slices.Contains(s.Values[k], value) {
			return &Error{Where: at(c), Key: "when", Msg: fmt.Sprintf("%q is not a grid key=value (the grid: %s)", c.Value, strings.Join(s.Keys, ", "))}
		}
		if first, dup := seen[c.Value]; dup {
			return &Error{Where: at(c), Key: "when", Msg: fmt.Sprintf("%q written twice (first at %s)", c.Value, first)}
		}
		seen[c.Value] = at(c)
		lines := map[string]string{}
		for _, g := range s.Keys {
			lines[g] = s.Lines[g]
		}
		pairs, err := sweepPairs(v, at, false, lines)
		if err != nil {
			return err
		}
		w := SweepWhen{Key: key, Value: value, Lines: map[string]string{}, grid: k}
		for _, p := range pairs {
			w.Set = append(w.Set, p.key+"="+p.values[0])
			w.Lines[p.key] = lines[p.key]
		}
		s.When = append(s.When, w)
	}
	return nil
}

// MaxSweepBytes bounds a sweep file, as MaxScenarioBytes a scenario's: a
// device such as /dev/zero never ends.
const MaxSweepBytes = 16 << 20

// MaxSweepPoints bounds a sweep's grid: each point is a run and a folder,
// and a grid past this is more likely a typo than a plan.
const MaxSweepPoints = 100_000

type sweepPair struct {
	key    string
	values []string
}

// sweepPairs reads a mapping of scenario keys to a value (set) or a list
// of values (grid), checking each key against the scenario's schema. lines
// holds where each key was written so far: a key written twice, in one
// section or in set and grid, is an error naming both lines.
func sweepPairs(n *yaml.Node, at func(*yaml.Node) string, lists bool, lines map[string]string) ([]sweepPair, error) {
	if n.Kind != yaml.MappingNode {
		return nil, &Error{Where: at(n), Msg: "expected a mapping of scenario keys"}
	}
	keys := Keys()
	var out []sweepPair
	for i := 0; i < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !slices.Contains(keys, k.Value) {
			return nil, &Error{Where: at(k), Key: k.Value, Msg: "not a scenario key (see docs/scenario.md)"}
		}
		if first, dup := lines[k.Value]; dup {
			return nil, &Error{Where: at(k), Key: k.Value, Msg: "written twice (first at " + first + ")"}
		}
		lines[k.Value] = at(k)
		switch {
		case !lists && v.Kind == yaml.ScalarNode:
			out = append(out, sweepPair{k.Value, []string{v.Value}})
		case lists && v.Kind == yaml.SequenceNode && len(v.Content) > 0:
			p := sweepPair{key: k.Value}
			for _, e := range v.Content {
				if e.Kind != yaml.ScalarNode {
					return nil, &Error{Where: at(e), Key: k.Value, Msg: "expected plain values"}
				}
				if slices.Contains(p.values, e.Value) {
					return nil, &Error{Where: at(e), Key: k.Value, Msg: fmt.Sprintf("value %q listed twice", e.Value)}
				}
				p.values = append(p.values, e.Value)
			}
			out = append(out, p)
		case lists:
			return nil, &Error{Where: at(v), Key: k.Value, Msg: "expected a non-empty list of values"}
		default:
			return nil, &Error{Where: at(v), Key: k.Value, Msg: "expected one value"}
		}
	}
	return out, nil
}

// Points returns the grid's points in order: the cartesian product, the
// first key varying slowest.
func (s *Sweep) Points() []SweepPoint {
	out := make([]SweepPoint, GridPoints(s.Values))
	for i := range out {
		p := SweepPoint{Index: i, Sets: slices.Clone(s.Set)}
		values := GridValues(s.Values, i)
		for k, key := range s.Keys {
			p.Sets = append(p.Sets, key+"="+values[k])
		}
		for _, w := range s.When {
			if w.applies(values) {
				p.Sets = append(p.Sets, w.Set...)
			}
		}
		p.Values = values
		out[i] = p
	}
	return out
}

// GridPoints is how many points a grid whose k-th key takes values[k]
// has.
func GridPoints(values [][]string) int {
	n := 1
	for _, v := range values {
		n *= len(v)
	}
	return n
}

// GridValues are point i's values in a grid whose k-th key takes
// values[k]; the last key varies fastest.
func GridValues(values [][]string, i int) []string {
	out := make([]string, len(values))
	for k := len(values) - 1; k >= 0; k-- {
		out[k] = values[k][i%len(values[k])]
		i /= len(values[k])
	}
	return out
}

// Line is where the sweep file sets key for point p (file:line), or "":
// a when override of the point's grid value first, then set and grid.
func (s *Sweep) Line(p SweepPoint, key string) string {
	for _, w := range s.When {
		if line := w.Lines[key]; line != "" && w.applies(p.Values) {
			return line
		}
	}
	return s.Lines[key]
}

// Name is a point's folder name: its index and its values, cut to
// maxPointName bytes (the index keeps it unique): a grid of storage.tiers
// lists made names past the file system's 255 bytes, and the sweep failed
// after running every point.
func (p SweepPoint) Name() string {
	clean := strings.NewReplacer("/", "_", " ", "_", ":", "_")
	parts := []string{fmt.Sprintf("%04d", p.Index)}
	for _, v := range p.Values {
		parts = append(parts, clean.Replace(v))
	}
	name := strings.Join(parts, "-")
	if len(name) <= maxPointName {
		return name
	}
	cut := maxPointName
	for !utf8.RuneStart(name[cut]) {
		cut--
	}
	return name[:cut]
}

// maxPointName bounds a point's folder name, well within the 255 bytes a
// file name may have.
const maxPointName = 128
