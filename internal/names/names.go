// Package names gives an enum of small integers its names, in one table
// that parsing, validation messages and listings all read, so that no
// layer keeps its own copy of the list or casts a position into a value.
package names

import (
	"fmt"
	"slices"
	"strings"
)

// Table holds an enum's names in the order of its values.
type Table[E ~int] struct {
	what  string
	names []string
}

// New makes the table of an enum from a name for each of its values,
// keyed by the constants themselves, so that reordering or inserting
// constants cannot pair a value with another's name; what says what its
// values are ("design", "hashing scheme") in messages. The values must be
// 0 to n-1 and the names distinct and not empty: anything else is a
// mistake in the table, and New panics (at package initialisation).
func New[E ~int](what string, byValue map[E]string) Table[E] {
	t := Table[E]{what: what, names: make([]string, len(byValue))}
	for e, name := range byValue {
		if int(e) < 0 || int(e) >= len(byValue) {
			panic(fmt.Sprintf("names: %s %q has value %d, outside 0 to %d", what, name, int(e), len(byValue)-1))
		}
		t.names[e] = name
	}
	for i, name := range t.names {
		if name == "" || slices.Index(t.names, name) != i {
			panic(fmt.Sprintf("names: %s %d is named %q, empty or another value's name", what, i, name))
		}
	}
	return t
}

// Names lists the valid names in the order of their values.
func (t Table[E]) Names() []string { return append([]string(nil), t.names...) }

// Name is the name of value e.
func (t Table[E]) Name(e E) string {
	if int(e) < 0 || int(e) >= len(t.names) {
		return fmt.Sprintf("%s(%d)", t.what, int(e))
	}
	return t.names[e]
}

// Parse reads a name; an unknown one is an error that lists the valid
// names.
func (t Table[E]) Parse(s string) (E, error) {
	for i, n := range t.names {
		if n == s {
			return E(i), nil
		}
	}
	return 0, &UnknownError{What: t.what, Name: s, Valid: t.Names()}
}

// UnknownError is a name that is not in its table.
type UnknownError struct {
	What, Name string
	Valid      []string
}

func (e *UnknownError) Error() string {
	return fmt.Sprintf("%q is not allowed (allowed: %s)", e.Name, strings.Join(e.Valid, ", "))
}

// Of lists the names of a table of rows that carry their own (designs,
// engines), in table order.
func Of[T any](rows []T, name func(T) string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = name(r)
	}
	return out
}

// Find returns the row of a table named s, or an *UnknownError that lists
// the rows' names; what says what the rows are.
func Find[T any](what string, rows []T, name func(T) string, s string) (T, error) {
	for _, r := range rows {
		if name(r) == s {
			return r, nil
		}
	}
	var zero T
	return zero, &UnknownError{What: what, Name: s, Valid: Of(rows, name)}
}
