// Package readme holds no code: its test checks that every Go snippet of
// the repository's READMEs is a whole file that compiles, passes go vet
// and is gofmt-formatted, as a user who pastes it into a module of their
// own would find it, and that the snippets whose output a README shows
// print exactly that.
package readme
