package kvstore_test

import (
	"errors"
	"fmt"

	"github.com/kvcosim/kvcosim/kvstore"
	"github.com/kvcosim/kvcosim/memory"
)

// Functional mode's store: an export writes a session's real KV bytes in
// the claim-9 layout where the directory put them, an import reads them
// back after checking each region's XXH64, and a flipped byte is caught.
func ExampleContents() {
	shape := kvstore.KVShape{Layers: 2, KWidth: 4, VWidth: 4, ElemBytes: 4}
	dir, _ := kvstore.NewDirectory(kvstore.DirectoryConfig{BucketsLog2: 4, RegionBytes: 4096, StorageBytes: 64 * 4096,
		Layout: kvstore.LayoutClaim9, Shape: shape})
	store, _ := memory.NewByteStore("ssd", 64*4096, 512, true)
	contents, _ := kvstore.NewContents(dir, store)

	kv := kvstore.NewKVData(shape, 3)
	copy(kv.IDs, []uint32{101, 102, 103})
	kv.K[1][5] = 0.25 // layer 1, token 1, element 1
	key := kvstore.PatentKey(0, kv.IDs)
	res, _ := dir.Export(0, key, nil)
	contents.Write(res.Written[0], kv)

	back := kvstore.NewKVData(shape, 3)
	fmt.Println(contents.Read(key, 0, back), back.IDs, back.K[1][5])
	contents.Corrupt(key, 0)
	err := contents.Read(key, 0, back)
	fmt.Println(errors.Is(err, kvstore.ErrCorrupt))
	// Output:
	// <nil> [101 102 103] 0.25
	// true
}
