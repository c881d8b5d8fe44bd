package readme

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// root is the repository's root, relative to this package.
const root = "../../.."

// docs are the files whose Go snippets are checked, relative to root:
// each must hold at least one, so that a snippet moved to another page
// is not silently left unchecked.
var docs = []string{
	"README.md",
	"docs/operations.md",
	"docs/deploy-kubernetes.md",
	"examples/lambda/README.md",
}

// nested are the library's modules of their own that a snippet may
// import (as a user would, each required beside the main module),
// relative to root.
var nested = []string{"adapters/otel"}

// snippet is one ```go block of a document.
type snippet struct {
	doc  string // file, relative to root
	line int    // line of the snippet's first line of code in doc
	src  string
	// output is what the document shows the program printing, from a
	// ```console block right after the snippet that starts with
	// "$ go run ."; "" if it shows none.
	output    string
	hasOutput bool
}

func (s snippet) String() string { return fmt.Sprintf("%s:%d", s.doc, s.line) }

// snippets returns the ```go blocks of doc, each with the output the
// document shows for it.
func snippets(t *testing.T, doc string) []snippet {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, doc))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	var out []snippet
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```go" {
			continue
		}
		s := snippet{doc: doc, line: i + 2}
		body, end := block(lines, i+1)
		if end == len(lines) {
			t.Fatalf("%s: the ```go block never ends", s)
		}
		s.src = body
		// The output the document shows: the next block, if it is a
		// console block of "$ go run .".
		j := end + 1
		for j < len(lines) && strings.TrimSpace(lines[j]) == "" {
			j++
		}
		if j+1 < len(lines) && strings.TrimSpace(lines[j]) == "```console" && lines[j+1] == "$ go run ." {
			s.output, _ = block(lines, j+2)
			s.hasOutput = true
		}
		out = append(out, s)
		i = end
	}
	return out
}

// block returns the text from lines[from] up to the closing fence, and
// the index of that fence (len(lines) if there is none).
func block(lines []string, from int) (string, int) {
	for k := from; k < len(lines); k++ {
		if strings.TrimSpace(lines[k]) == "```" {
			return strings.Join(lines[from:k], "\n") + "\n", k
		}
	}
	return "", len(lines)
}

// goMod returns the module path and go version of the repository.
func goMod(t *testing.T) (module, version string) {
	t.Helper()
	return goModIn(t, root)
}

// goModIn returns the module path and go version of the go.mod in dir.
func goModIn(t *testing.T, dir string) (module, version string) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m, ok := strings.CutPrefix(sc.Text(), "module "); ok {
			module = strings.TrimSpace(m)
		}
		if v, ok := strings.CutPrefix(sc.Text(), "go "); ok {
			version = strings.TrimSpace(v)
		}
	}
	if module == "" || version == "" {
		t.Fatalf("go.mod: module %q, go %q", module, version)
	}
	return module, version
}

// Every Go snippet of the READMEs is a whole, gofmt-formatted file that
// compiles and passes go vet in a module of its own (a user's, which
// requires this one: internal packages are out of reach there, as they are
// for a user), and each snippet whose output a README shows prints exactly
// that when run.
func TestSnippetsCompileAndRun(t *testing.T) {
	module, goVersion := goMod(t)
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	var all []snippet
	for _, doc := range docs {
		ss := snippets(t, doc)
		if len(ss) == 0 {
			t.Errorf("%s has no ```go block; the test would check nothing there", doc)
		}
		all = append(all, ss...)
	}
	ran := 0
	for _, s := range all {
		if s.hasOutput {
			ran++
		}
	}
	if ran == 0 {
		t.Error("no snippet shows its output (a ```console block starting with \"$ go run .\" right after it): none is run")
	}

	// A module of the user's own, with each snippet as a package. It
	// requires the main module and the nested ones, each replaced by its
	// directory here; its go.sum is theirs.
	dir := t.TempDir()
	gomod := fmt.Sprintf("module example.com/readme\n\ngo %s\n\nrequire %s v0.0.0\n\nreplace %s => %s\n", goVersion, module, module, abs)
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nested {
		path, _ := goModIn(t, filepath.Join(root, n))
		gomod += fmt.Sprintf("\nrequire %s v0.0.0\n\nreplace %s => %s\n", path, path, filepath.Join(abs, n))
		b, err := os.ReadFile(filepath.Join(root, n, "go.sum"))
		if err != nil {
			t.Fatal(err)
		}
		sum = append(sum, b...)
	}
	write(t, filepath.Join(dir, "go.mod"), []byte(gomod))
	write(t, filepath.Join(dir, "go.sum"), sum)
	pkgs := make([]string, len(all))
	for i, s := range all {
		if formatted, err := format.Source([]byte(s.src)); err != nil {
			t.Errorf("%s: %v", s, err)
		} else if !bytes.Equal(formatted, []byte(s.src)) {
			t.Errorf("%s: not gofmt-formatted; gofmt prints:\n%s", s, formatted)
		}
		// The //line directive makes the parser, the compiler and vet
		// report positions in the README itself.
		src := fmt.Sprintf("//line %s:%d\n%s", filepath.Join(abs, s.doc), s.line, s.src)
		f, err := parser.ParseFile(token.NewFileSet(), "snippet.go", src, parser.ImportsOnly)
		if err != nil {
			t.Errorf("%s: a ```go block must be a whole file (package clause and imports), as a user pastes it: %v", s, err)
			continue
		}
		for _, imp := range f.Imports {
			if p := strings.Trim(imp.Path.Value, `"`); strings.HasPrefix(p, module) && strings.Contains(p, "/internal") {
				t.Errorf("%s imports %s, which a user cannot import", s, p)
			}
		}
		pkgs[i] = fmt.Sprintf("s%02d", i)
		write(t, filepath.Join(dir, pkgs[i], "snippet.go"), []byte(src))
	}
	if t.Failed() {
		return
	}

	goCmd(t, dir, "build", "./...")
	goCmd(t, dir, "vet", "./...")
	if t.Failed() {
		return
	}
	for i, s := range all {
		if !s.hasOutput {
			continue
		}
		if got := goCmd(t, dir, "run", "./"+pkgs[i]); got != s.output {
			t.Errorf("%s prints\n%s\nthe README shows\n%s", s, got, s.output)
		}
	}
}

// The README says how to get the module, by its real path.
func TestGoGetLine(t *testing.T) {
	module, _ := goMod(t)
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "go get " + module + "@latest"; !bytes.Contains(b, []byte(want)) {
		t.Errorf("README.md has no %q line", want)
	}
}

// The README and the pages of docs/ are a user's guide: the history of the
// work (which issue or round changed what) belongs in CHANGELOG.md.
func TestNoHistoryInREADME(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	history := regexp.MustCompile(`(?i)\bissues? #?\d+|\bseed article\b|\bthe issue's\b|\bthe\s+seed\b|\bround by round\b`)
	for _, page := range append([]string{filepath.Join(root, "README.md")}, pages...) {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(root, page)
		for i, line := range strings.Split(string(b), "\n") {
			if m := history.FindString(line); m != "" {
				t.Errorf("%s:%d speaks of %q; history goes in CHANGELOG.md", name, i+1, m)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(root, "CHANGELOG.md")); err != nil {
		t.Error(err)
	}
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// goCmd runs the go command in dir and returns its combined output, as a
// terminal would show it; a failure fails the test with that output. The
// module may add the requirements it needs (-mod=mod); its go.sum is the
// repository's.
func goCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -mod=mod"), "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// The Go the module needs is stated once, in README.md's install
// section, as the go line of go.mod says it (every module of the
// repository has the same go line). Any other Go version a document
// gives as a requirement is a tool's own (the Lambda runtime emulator's,
// to install it), and says so on the same line.
func TestGoVersionStatedOnce(t *testing.T) {
	_, version := goMod(t)
	mods, err := exec.Command("git", "-C", root, "ls-files", "*go.mod").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for mod := range strings.FieldsSeq(string(mods)) {
		if strings.Contains(mod, "testdata/") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, mod))
		if err != nil {
			t.Fatal(err)
		}
		if m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(b); m == nil || string(m[1]) != version {
			t.Errorf("%s: go line %q; go.mod has %q", mod, m, version)
		}
	}

	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	start := strings.Index(text, "\n## Install\n")
	end := strings.Index(text[start+1:], "\n## ")
	if start < 0 || end < 0 {
		t.Fatal("README.md has no Install section")
	}
	if want := "It needs Go " + version + " or later"; !strings.Contains(text[start:start+1+end], want) {
		t.Errorf("README.md's Install section does not say %q", want)
	}

	// A requirement: "Go 1.26 or later", "Go 1.26.6 or later", "go >= 1.26.6",
	// "Prerequisites: Go 1.26".
	req := regexp.MustCompile(`(?i)\bgo (\d+\.\d+(\.\d+)?) or later|\bgo ?>= ?\d+\.\d+|prerequisites: go \d+\.\d+`)
	docs, err := exec.Command("git", "-C", root, "ls-files", "*.md").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	stated := 0
	for doc := range strings.FieldsSeq(string(docs)) {
		if doc == "CHANGELOG.md" {
			continue // history
		}
		b, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			m := req.FindString(line)
			switch {
			case m == "":
			case doc == "README.md" && m == "Go "+version+" or later":
				stated++
			case strings.Contains(line, "emulator"):
				// the Lambda runtime emulator's own requirement, said to be its
			default:
				t.Errorf("%s:%d states a Go requirement (%q) other than README.md's Install section", doc, i+1, m)
			}
		}
	}
	if stated != 1 {
		t.Errorf("README.md states Go %s %d times; want once, in Install", version, stated)
	}
}

// Every relative link of the repository's Markdown files names a file or
// directory that exists and, with a #fragment into a Markdown file, a
// heading of that file (as GitHub spells its anchor), so that moving a
// section between pages cannot leave a reader at a dead link.
func TestRelativeLinksResolve(t *testing.T) {
	out, err := exec.Command("git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard", "*.md").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	checked := 0
	for doc := range strings.FieldsSeq(string(out)) {
		if strings.Contains(doc, "node_modules/") || strings.HasPrefix(doc, ".tools/") {
			continue
		}
		for i, line := range proseLines(t, filepath.Join(root, doc)) {
			for _, m := range link.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, ":") { // https:, mailto:
					continue
				}
				checked++
				file, frag, _ := strings.Cut(target, "#")
				path := filepath.Join(root, filepath.Dir(doc), file)
				if file == "" {
					path = filepath.Join(root, doc)
				}
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s:%d links to %s, which does not exist", doc, i+1, target)
					continue
				}
				if frag != "" && strings.HasSuffix(path, ".md") && !anchors(t, path)[frag] {
					t.Errorf("%s:%d links to %s, which has no heading #%s", doc, i+1, file, frag)
				}
			}
		}
	}
	if checked == 0 {
		t.Error("no relative link found: the test would check nothing")
	}
}

// proseLines returns the lines of a Markdown file, with those inside
// fenced code blocks blanked (a link there is code, not a link).
func proseLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	fenced := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			lines[i] = ""
		} else if fenced {
			lines[i] = ""
		}
	}
	return lines
}

// anchors returns the anchors GitHub gives the headings of a Markdown
// file: lower case, punctuation dropped, spaces as hyphens, and "-1",
// "-2", ... after repeats.
func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	drop := regexp.MustCompile(`[^\p{L}\p{N} _-]`)
	seen := map[string]int{}
	out := map[string]bool{}
	for _, l := range proseLines(t, path) {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(l, "#"))
		a := strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(h), ""), " ", "-")
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}
