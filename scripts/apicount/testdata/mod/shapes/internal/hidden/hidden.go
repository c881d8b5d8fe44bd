// Package hidden is internal: it does not count.
package hidden

func Secret() {}
