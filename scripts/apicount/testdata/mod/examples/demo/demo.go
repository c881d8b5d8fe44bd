// Package demo is an example: it does not count.
package demo

func Show() {}
