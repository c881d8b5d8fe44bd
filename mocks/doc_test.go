package mocks_test

import (
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/golang/mock/gomock"

	"github.com/geecache/geecache/mocks"
)

// The mocks take the Controller of github.com/golang/mock's gomock, not
// go.uber.org/mock's (a type of its own).
var _ func(*gomock.Controller) *mocks.MockPeer = mocks.NewMockPeer

// packageDoc returns the package comment of doc.go.
func packageDoc(t *testing.T) string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	if f.Doc == nil {
		t.Fatal("doc.go has no package comment")
	}
	return f.Doc.Text()
}

// The package comment names every method of MockPeer (the peer
// interface, whose methods a test has to expect), as it is generated.
func TestDocNamesEveryPeerMethod(t *testing.T) {
	doc := packageDoc(t)
	typ := reflect.TypeFor[*mocks.MockPeer]()
	for i := range typ.NumMethod() {
		name := typ.Method(i).Name
		if name == "EXPECT" {
			continue
		}
		if !regexp.MustCompile(`\b` + name + `\b`).MatchString(doc) {
			t.Errorf("the package comment does not name MockPeer's method %s", name)
		}
	}
}

// The package comment names the gomock module the mocks need, at the
// version go.mod requires, and says that go.uber.org/mock's Controller is
// another type.
func TestDocNamesTheGomockModule(t *testing.T) {
	doc := strings.Join(strings.Fields(packageDoc(t)), " ")
	gomod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*github\.com/golang/mock (v\S+)`).FindSubmatch(gomod)
	if m == nil {
		t.Fatal("go.mod does not require github.com/golang/mock")
	}
	for _, want := range []string{"github.com/golang/mock", string(m[1]), "github.com/golang/mock/gomock", "go.uber.org/mock"} {
		if !strings.Contains(doc, want) {
			t.Errorf("the package comment does not name %s", want)
		}
	}
	if !regexp.MustCompile(`go\.uber\.org/mock[^.]*gomock\.Controller[^.]* different type`).MatchString(doc) {
		t.Errorf("the package comment does not say that go.uber.org/mock's gomock.Controller is a different type:\n%s", doc)
	}
}
