// Command apicount counts the exported surface of the main module: the
// exported top-level names (types, functions, constants, variables) plus
// the exported methods of exported types, in the non-test files of every
// public package. Left out: internal/, testdata/, examples/, bench/, mocks/,
// scripts/, hidden folders, nested modules and main packages, none of
// which a user imports. A name declared once per GOOS (in _js.go and
// _other.go files) counts once.
//
//	go run -C scripts/apicount . [-budget N] [-list] [DIR]
//
// It prints the total, then one line per package: its folder and count
// (and, with -list, its names). With -budget it fails when the total is
// above N, so that CI keeps the surface from growing back.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the exit, for the test: 0 within the budget, 1 above
// it, 2 for a usage or read error.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("apicount", flag.ContinueOnError)
	fs.SetOutput(stderr)
	budget := fs.Int("budget", -1, "fail when the total is above `N` (-1: no budget)")
	list := fs.Bool("list", false, "print every counted name under its package")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	root := "."
	switch fs.NArg() {
	case 0:
	case 1:
		root = fs.Arg(0)
	default:
		fmt.Fprintln(stderr, "apicount: at most one folder")
		return 2
	}
	pkgs, err := count(root)
	if err != nil {
		fmt.Fprintln(stderr, "apicount:", err)
		return 2
	}
	total := 0
	for _, p := range pkgs {
		total += len(p.Names)
	}
	fmt.Fprintf(stdout, "total %d\n", total)
	for _, p := range pkgs {
		fmt.Fprintf(stdout, "%-28s %3d\n", p.Dir, len(p.Names))
		if *list {
			for _, n := range p.Names {
				fmt.Fprintf(stdout, "    %s\n", n)
			}
		}
	}
	if *budget >= 0 && total > *budget {
		fmt.Fprintf(stderr, "apicount: %d exported names, above the budget of %d: unexport what only tests or bindings use\n", total, *budget)
		return 1
	}
	return 0
}
