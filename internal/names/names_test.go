package names

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type colour int

// The constants are declared in another order than the table lists them,
// as after a reordering: the table is keyed by the constants, so each
// keeps its own name.
const (
	green colour = iota
	blue
	red
)

var colours = New("colour", map[colour]string{red: "red", green: "green", blue: "blue"})

func TestTableNamesEveryConstantWhateverTheirOrder(t *testing.T) {
	for c, want := range map[colour]string{red: "red", green: "green", blue: "blue"} {
		assert.Equal(t, want, colours.Name(c))
		parsed, err := colours.Parse(colours.Name(c))
		require.NoError(t, err)
		assert.Equal(t, c, parsed)
	}
	assert.Equal(t, []string{"green", "blue", "red"}, colours.Names(), "names in the order of their values")
	_, err := colours.Parse("cyan")
	assert.EqualError(t, err, `"cyan" is not allowed (allowed: green, blue, red)`)
	assert.Equal(t, "colour(7)", colours.Name(7))
}

func TestNewRefusesATableThatDoesNotNameEachValueOnce(t *testing.T) {
	for name, byValue := range map[string]map[colour]string{
		"a gap":        {green: "green", red: "red"},
		"a negative":   {-1: "none", green: "green"},
		"an empty":     {green: "", blue: "blue"},
		"a name twice": {green: "green", blue: "green"},
	} {
		assert.Panics(t, func() { New("colour", byValue) }, name)
	}
}

func ExampleTable() {
	type scheme int
	const (
		patent scheme = iota
		block
	)
	schemes := New("hashing scheme", map[scheme]string{patent: "patent", block: "block"})
	s, err := schemes.Parse("block")
	fmt.Println(s, err, schemes.Names())
	// Output: 1 <nil> [patent block]
}

func TestFindReadsATableOfRowsByTheirOwnNames(t *testing.T) {
	type row struct{ name string }
	rows := []row{{"a"}, {"b"}}
	name := func(r row) string { return r.name }
	assert.Equal(t, []string{"a", "b"}, Of(rows, name))
	r, err := Find("row", rows, name, "b")
	require.NoError(t, err)
	assert.Equal(t, row{"b"}, r)
	_, err = Find("row", rows, name, "c")
	assert.EqualError(t, err, `"c" is not allowed (allowed: a, b)`)
}
