// Package mux is the multiplexed carriage of package nethttp
// (PoolOptions.Multiplex; frame.go describes the frames): the transport of
// the asking node (NewTransport) and the server of the serving one
// (NewServer), which a Pool's ServeHTTP hands the upgrades to.
//
// Under GOOS=js and GOOS=wasip1 there are no sockets: there the carriage
// is left out (nosocket.go).
package mux
