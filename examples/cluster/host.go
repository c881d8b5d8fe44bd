package main

import "errors"

// checkHost returns why this program cannot run on goos, if it cannot:
// its nodes serve their peers with net/http, which under GOOS=js cannot
// listen (its listeners are an in-process fake no peer reaches: such a
// node would log that it runs, then die with "all goroutines are asleep"),
// and under GOOS=wasip1 has no sockets at all. run calls it first, so such
// a build says what is wrong before it starts anything.
func checkHost(goos string) error {
	switch goos {
	case "js":
		return errors.New("built for GOOS=js, where net/http cannot listen (its listeners are an in-process fake no peer can reach): " +
			"in a JavaScript host the host listens and the node answers through adapters/wasmjs; run examples/wasm instead (see examples/wasm/README.md)")
	case "wasip1":
		return errors.New("built for GOOS=wasip1, which has no sockets: a node can neither serve nor reach peers over the network; " +
			"see examples/wasip1 (peers through functions the host provides) and examples/inprocess")
	}
	return nil
}
