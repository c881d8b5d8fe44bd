// Package empty exports nothing: it is not listed.
package empty

func quiet() {}
