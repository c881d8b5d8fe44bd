// Command guard is the regression guard: it runs the benchmarks of the
// measured paths (hit, miss, remote fetch, ring) of today's tree and of
// another commit in one run, in alternating blocks, and reports per
// benchmark the median of each side and the min and median over rounds of
// the ratio new ÷ old (above 1: today's tree is slower).
//
// From bench/:
//
//	go run ./cmd/guard -ref 67b3712         # full form, ~8 minutes
//	go run ./cmd/guard -short               # before a commit, under 2 minutes
//
// It checks the commit out with `git worktree` into a temporary directory
// (removed afterwards), builds each package's test binary in both trees
// (`go test -c`), and runs each binary for -rounds rounds, the order of the
// two sides swapped every round. Then, unless -outside=false, it runs each
// family's comparison with its outside reference once on the working tree
// (a slowdown that creeps in a step at a time shows only there). See
// bench/README.md, "Regression guard".
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// config is what the flags ask for.
type config struct {
	ref, families, benchtime, raw string
	rounds                        int
	threshold                     float64
	fail, outside                 bool
	timeout                       time.Duration
}

// parseFlags reads the command line. -short sets 3 rounds of 100ms blocks
// unless -rounds or -benchtime are given as well.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("guard", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.ref, "ref", "", "the commit to compare with (default: the merge-base of HEAD and main)")
	fs.StringVar(&c.families, "families", "hit,miss,remote,ring", "families to run: hit, miss, remote, ring, or ./PKG:PATTERN")
	fs.IntVar(&c.rounds, "rounds", 5, "rounds (each runs every family once on each side)")
	fs.StringVar(&c.benchtime, "benchtime", "1s", "-test.benchtime of each block")
	fs.Float64Var(&c.threshold, "threshold", 1.05, "a median ratio new/old above this is a regression")
	fs.BoolVar(&c.fail, "fail", false, "exit with status 1 if a benchmark regressed or a block failed")
	fs.StringVar(&c.raw, "raw", "", "write the raw benchmark output to PREFIX-old.txt and PREFIX-new.txt (benchstat's input)")
	fs.BoolVar(&c.outside, "outside", true, "also run each family's comparison with its outside reference once, on the working tree only")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Minute, "-test.timeout of each block")
	short := fs.Bool("short", false, "the short form: 3 rounds of 100ms blocks")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *short {
		if !set["rounds"] {
			c.rounds = 3
		}
		if !set["benchtime"] {
			c.benchtime = "100ms"
		}
	}
	if c.rounds < 1 {
		return c, fmt.Errorf("-rounds %d: want at least 1", c.rounds)
	}
	return c, nil
}

// run is the command; it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "guard:", err)
		return 2
	}
	fams, err := parseFamilies(cfg.families)
	if err != nil {
		fmt.Fprintln(stderr, "guard:", err)
		return 2
	}
	status, err := guard(ctx, cfg, fams, stdout)
	if err != nil {
		fmt.Fprintln(stderr, "guard:", err)
		return 1
	}
	return status
}

// guard sets up both trees, runs the rounds and prints the report.
func guard(ctx context.Context, cfg config, fams []family, w io.Writer) (int, error) {
	root, err := git(ctx, ".", "rev-parse", "--show-toplevel")
	if err != nil {
		return 0, err
	}
	commit, err := resolveRef(ctx, root, cfg.ref)
	if err != nil {
		return 0, err
	}
	subject, _ := git(ctx, root, "log", "-1", "--format=%h %s", commit)
	head, _ := git(ctx, root, "log", "-1", "--format=%h %s", "HEAD")
	dirty, _ := git(ctx, root, "status", "--porcelain", "--untracked-files=no")
	tmp, err := os.MkdirTemp("", "geecache-guard-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	oldTree := filepath.Join(tmp, "tree")
	remove, err := addWorktree(ctx, root, oldTree, commit)
	if err != nil {
		return 0, err
	}
	defer func() {
		if err := remove(); err != nil {
			fmt.Fprintln(w, "guard: removing the worktree:", err)
		}
	}()
	fmt.Fprintf(w, "old: %s\nnew: working tree of %s at %s", short(subject, 90), root, short(head, 70))
	if dirty != "" {
		fmt.Fprint(w, " (with uncommitted changes)")
	}
	fmt.Fprintf(w, "\n%s, %d CPUs, %d rounds of -test.benchtime=%s, load at start %s\n",
		runtime.Version(), runtime.NumCPU(), cfg.rounds, cfg.benchtime, loadAvg())

	trees := [2]string{oldTree, root}
	bins, err := buildAll(ctx, w, root, commit, tmp, trees, fams)
	if err != nil {
		return 0, err
	}
	units := discover(ctx, w, cfg, trees, bins, fams)
	if len(units) == 0 {
		return 0, fmt.Errorf("no benchmark to compare")
	}

	raw := [2]io.Writer{io.Discard, io.Discard}
	if cfg.raw != "" {
		for s := range raw {
			f, err := os.Create(fmt.Sprintf("%s-%s.txt", cfg.raw, side(s)))
			if err != nil {
				return 0, err
			}
			defer f.Close()
			raw[s] = f
		}
	}
	block := func(ctx context.Context, s side, f family, r int) ([]result, error) {
		out, err := runBinary(ctx, bins[s][f.pkg], filepath.Join(trees[s], f.pkg),
			"-test.run=^$", "-test.bench="+f.pattern, "-test.benchtime="+cfg.benchtime,
			"-test.count=1", "-test.benchmem", "-test.timeout="+cfg.timeout.String())
		fmt.Fprint(raw[s], out)
		res, _ := parseOutput(out)
		return res, err
	}
	start := time.Now()
	c, failed := runRounds(ctx, cfg.rounds, units, block, w, loadAvg)
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	names := make([]string, len(fams))
	for i, f := range fams {
		names[i] = f.name
	}
	rows := c.rows(names, cfg.threshold)
	fmt.Fprintf(w, "done in %s, load at end %s\n\n", time.Since(start).Round(time.Second), loadAvg())
	printRows(w, rows)
	regressed := 0
	for _, r := range rows {
		if r.regressed {
			regressed++
		}
	}
	fmt.Fprintf(w, "\n%d of %d benchmarks regressed (median new/old > %.2f, or allocs/op up by 0.5 and 2%% or more); %d blocks failed\n",
		regressed, len(rows), cfg.threshold, failed)
	if cfg.outside {
		outside(ctx, w, cfg, root, tmp, outsideFor(fams))
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
	}
	if cfg.fail && (regressed > 0 || failed > 0) {
		return 1, nil
	}
	return 0, nil
}

// buildAll builds the test binary of every family's package in both trees
// into dir and returns their paths by side and package. A package that
// does not build in the old tree is left out with a note; one that does not
// build in the new tree is an error.
func buildAll(ctx context.Context, w io.Writer, root, commit, dir string, trees [2]string, fams []family) ([2]map[string]string, error) {
	bins := [2]map[string]string{{}, {}}
	name := strings.NewReplacer("/", "_", ".", "_")
	for _, f := range fams {
		if _, done := bins[newSide][f.pkg]; done {
			continue
		}
		if files, err := testCodeDiff(ctx, root, commit, f.pkg); err == nil && len(files) > 0 {
			fmt.Fprintf(w, "note: test files of %s that differ between the trees (each side runs its own): %s\n",
				f.pkg, strings.Join(files, " "))
		}
		for s, tree := range trees {
			bin := filepath.Join(dir, fmt.Sprintf("%s-%s.test", side(s), name.Replace(f.pkg)))
			if err := buildTest(ctx, tree, f.pkg, bin); err != nil {
				if side(s) == newSide {
					return bins, err
				}
				fmt.Fprintf(w, "note: %s does not build in the old tree: skipped\n", f.pkg)
				continue
			}
			bins[s][f.pkg] = bin
		}
	}
	return bins, nil
}

// discover runs every benchmark of each family once on each side
// (-test.benchtime=1x) and returns one unit per benchmark both sides have,
// with a note for each that only one side has.
func discover(ctx context.Context, w io.Writer, cfg config, trees [2]string, bins [2]map[string]string, fams []family) []family {
	var units []family
	for _, f := range fams {
		if bins[oldSide][f.pkg] == "" {
			continue
		}
		var names [2][]string
		for s := range trees {
			out, err := runBinary(ctx, bins[s][f.pkg], filepath.Join(trees[s], f.pkg),
				"-test.run=^$", "-test.bench="+f.pattern, "-test.benchtime=1x", "-test.timeout="+cfg.timeout.String())
			if err != nil {
				fmt.Fprintf(w, "note: %s: the %s tree's discovery run failed: %v\n", f.name, side(s), err)
			}
			res, _ := parseOutput(out)
			for _, r := range res {
				names[s] = append(names[s], r.name)
			}
		}
		u, notes := leaves(f, names[oldSide], names[newSide], runtime.GOMAXPROCS(0))
		for _, n := range notes {
			fmt.Fprintln(w, "note:", n)
		}
		units = append(units, u...)
	}
	return units
}

// short cuts s to n bytes.
func short(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
