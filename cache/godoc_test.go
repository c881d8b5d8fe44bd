package cache_test

import (
	"context"
	"errors"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// go doc shows PanicError's fields: it is a type of this package, not an
// alias of an internal one, whose fields go doc leaves out.
func TestGoDocShowsPanicErrorFields(t *testing.T) {
	if runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("no processes under", runtime.GOOS)
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	out, err := exec.Command(goCmd, "doc", ".", "PanicError").CombinedOutput()
	if err != nil {
		t.Fatalf("go doc PanicError: %v\n%s", err, out)
	}
	for _, f := range []string{"type PanicError struct", "Value any", "Stack []byte"} {
		if !strings.Contains(string(out), f) {
			t.Errorf("go doc PanicError does not show %q:\n%s", f, out)
		}
	}
}

// A Getter's panic reaches the callers of Get and of GetMany as this
// package's *PanicError, with the panic's value.
func TestPanicErrorIsThePackagesOwn(t *testing.T) {
	grp := newGroup(t, 1<<10, getter.Func(func(_ context.Context, key string) ([]byte, error) {
		panic("boom " + key)
	}))
	check := func(how, key string, err error) {
		t.Helper()
		var pe *cache.PanicError
		if !errors.As(err, &pe) || pe.Value != "boom "+key || len(pe.Stack) == 0 || !errors.Is(err, cache.ErrGetterPanic) {
			t.Errorf("%s(%s) = %v; want a *cache.PanicError with the value and a stack", how, key, err)
		}
	}
	_, err := grp.Get(t.Context(), "a")
	check("Get", "a", err)
	keys := []string{"b", "c"}
	grp.GetMany(t.Context(), keys, func(i int, _ cache.ByteView, err error) { check("GetMany", keys[i], err) })
}
