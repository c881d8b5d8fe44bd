// Package nested is a module of its own: it counts apart.
package nested

func Apart() {}
