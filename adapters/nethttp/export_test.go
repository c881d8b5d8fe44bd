package nethttp

// WaitFor is waitFor, for the tests of package nethttp_test.
var WaitFor = waitFor
