package kernels

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// publicVectors are the project's copies of conformance/*.public.json.
var publicVectors = []string{"ascend_topktopp_sample_v2.public.json", "ascend_topktopp_sample_v1.public.json", "hf_beam_v4_38_2.public.json"}

func TestPublicVectors(t *testing.T) {
	for _, name := range publicVectors {
		f, err := ReadVectors(filepath.Join("testdata", "vectors", name))
		require.NoError(t, err)
		for _, r := range f.Run() {
			assert.Empty(t, r.Err, "%s: %s", name, r.Name)
		}
	}
}
