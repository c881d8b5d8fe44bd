package main

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// family is a group of benchmarks of one package, run as one block (one
// run of the package's test binary) per side and round.
type family struct {
	name    string
	pkg     string // relative to the repository's root, as "./cache"
	pattern string // the -test.bench pattern
}

// knownFamilies are the families -families can name: the measured paths.
func knownFamilies() []family {
	return []family{
		{"hit", "./cache", "^BenchmarkGetHit$"},
		{"miss", "./cache", "^BenchmarkGetMiss$"},
		{"remote", "./adapters/nethttp", "^BenchmarkRemoteGet$"},
		{"ring", "./picker", "^(BenchmarkLookup|BenchmarkPickPeer|BenchmarkNew|BenchmarkRebuild)$"},
	}
}

// parseFamilies reads -families: a comma-separated list of known family
// names and of PKG:PATTERN entries (a package and a -test.bench pattern,
// as ./cache:^BenchmarkFetchFromPeer$; such an entry cannot contain a comma).
func parseFamilies(spec string) ([]family, error) {
	known := knownFamilies()
	var out []family
	for item := range strings.SplitSeq(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if pkg, pat, ok := strings.Cut(item, ":"); ok {
			if !strings.HasPrefix(pkg, "./") || pat == "" {
				return nil, fmt.Errorf("family %q: want ./PKG:PATTERN", item)
			}
			for _, p := range splitBench(pat) {
				if _, err := regexp.Compile(p); err != nil {
					return nil, fmt.Errorf("family %q: %w", item, err)
				}
			}
			out = append(out, family{item, pkg, pat})
			continue
		}
		i := slices.IndexFunc(known, func(f family) bool { return f.name == item })
		if i < 0 {
			return nil, fmt.Errorf("unknown family %q (known: hit, miss, remote, ring, or ./PKG:PATTERN)", item)
		}
		out = append(out, known[i])
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no family in %q", spec)
	}
	return out, nil
}

// leaves splits family f into one unit per benchmark (a leaf of the
// benchmark tree) that both sides have, given the names each side's
// binary reported in a discovery run, in the new side's order. A
// benchmark runs as a unit of its own so that its old and new blocks run
// one right after the other. The notes name benchmarks one side lacks.
func leaves(f family, oldNames, newNames []string, procs int) (units []family, notes []string) {
	for _, n := range newNames {
		if slices.Contains(oldNames, n) {
			units = append(units, family{f.name, f.pkg, leafPattern(n, procs)})
		} else {
			notes = append(notes, fmt.Sprintf("%s: %s exists only in the new tree: skipped", f.name, n))
		}
	}
	for _, n := range oldNames {
		if !slices.Contains(newNames, n) {
			notes = append(notes, fmt.Sprintf("%s: %s exists only in the old tree: skipped", f.name, n))
		}
	}
	if len(units) == 0 {
		notes = append(notes, fmt.Sprintf("%s: no benchmark on both sides: family skipped", f.name))
	}
	return units, notes
}

// leafPattern is the -test.bench pattern that selects exactly the
// benchmark the testing package printed as name: its "-procs" suffix
// (GOMAXPROCS, printed when above 1) removed, each level anchored.
func leafPattern(name string, procs int) string {
	if procs > 1 {
		name = strings.TrimSuffix(name, "-"+strconv.Itoa(procs))
	}
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}
