// Package mod is the module's root package: 1 exported name.
package mod

func Root() {}
