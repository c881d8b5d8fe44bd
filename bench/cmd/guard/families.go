package main

import (
	"fmt"
	"regexp"
	"slices"
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

// narrow restricts f to the top-level benchmarks both sides have, given
// the names each side's binary lists for the pattern's first element. It
// returns the notes to print about names one side lacks, and ok false if
// the sides have none in common.
func narrow(f family, oldNames, newNames []string) (family, []string, bool) {
	var both, notes []string
	for _, n := range newNames {
		if slices.Contains(oldNames, n) {
			both = append(both, n)
		} else {
			notes = append(notes, fmt.Sprintf("%s: %s exists only in the new tree: skipped", f.name, n))
		}
	}
	for _, n := range oldNames {
		if !slices.Contains(newNames, n) {
			notes = append(notes, fmt.Sprintf("%s: %s exists only in the old tree: skipped", f.name, n))
		}
	}
	if len(both) == 0 {
		return f, append(notes, fmt.Sprintf("%s: no benchmark on both sides: family skipped", f.name)), false
	}
	if len(both) < len(oldNames) || len(both) < len(newNames) {
		quoted := make([]string, len(both))
		for i, n := range both {
			quoted[i] = regexp.QuoteMeta(n)
		}
		rest := splitBench(f.pattern)[1:]
		f.pattern = strings.Join(append([]string{"^(" + strings.Join(quoted, "|") + ")$"}, rest...), "/")
	}
	return f, notes, true
}
