package memory

// The blank import registers -update, so that `go test ./... -update` is
// accepted in this package too.
import _ "github.com/kvcosim/kvcosim/internal/golden"
