// Command tool is a main package: it does not count.
package main

func Exported() {}

func main() {}
