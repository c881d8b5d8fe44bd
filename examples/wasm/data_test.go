//go:build !js && !wasip1

package main

import "github.com/geecache/geecache/examples/internal/wasmdata"

// numKeys is how many generated keys the data set has besides the tutorial's
// scores.
const numKeys = wasmdata.NumKeys

// genKey is the i-th generated key.
func genKey(i int) string { return wasmdata.Key(i) }
