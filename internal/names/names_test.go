package names

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type colour int

var colours = New[colour]("colour", "red", "green")

func TestTableParsesEveryNameToItsValue(t *testing.T) {
	for i, n := range colours.Names() {
		c, err := colours.Parse(n)
		require.NoError(t, err)
		assert.Equal(t, colour(i), c)
		assert.Equal(t, n, colours.Name(c))
	}
	_, err := colours.Parse("blue")
	assert.EqualError(t, err, `"blue" is not allowed (allowed: red, green)`)
	assert.Equal(t, "colour(7)", colours.Name(7))
}

func ExampleTable() {
	type scheme int
	schemes := New[scheme]("hashing scheme", "patent", "block")
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
