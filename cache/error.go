package cache

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/geecache/geecache/cache/internal/singleflight"
)

// ErrGetterPanic is wrapped by the error every waiter gets when the load of
// a key panicked or called runtime.Goexit in the Getter. The panic is
// recovered and logged with its stack, and the next Get of the key loads it
// anew. A Peer that panics is a failed peer instead: the panic is
// logged with its stack and the key is loaded locally.
var ErrGetterPanic = singleflight.ErrPanic

// A PanicError is what a load that panicked returns to every caller waiting
// for it, inside an *Error: errors.As(err, &pe) with a *PanicError pe gives
// the panic's value and the stack of the goroutine that panicked.
// errors.Is(err, ErrGetterPanic) is true for it.
type PanicError struct {
	// Value is the value the load passed to panic.
	Value any
	// Stack is the stack of the goroutine that panicked, as
	// runtime/debug.Stack formats it.
	Stack []byte
}

// Error returns "load panicked: " and the panic's value.
func (e *PanicError) Error() string { return fmt.Sprintf("%v: %v", ErrGetterPanic, e.Value) }

// Unwrap returns ErrGetterPanic, so that errors.Is(err, ErrGetterPanic)
// holds.
func (e *PanicError) Unwrap() error { return ErrGetterPanic }

// newPanicError is the flights' NewPanic: every panic a group's flights
// recover is a *PanicError of this package.
func newPanicError(value any, stack []byte) error { return &PanicError{Value: value, Stack: stack} }

// An Error is the error Get and GetMany return: the group and key, and the
// cause (the Getter's error, a peer's answer, ctx's error, or a
// *PanicError). Use errors.Is on it for the sentinels (getter.ErrNotFound,
// ErrGetterPanic, context.Canceled) and errors.As for the details.
type Error struct {
	Group string
	Key   string
	Err   error
}

// Error returns "geecache: group G, key K: " and the cause (without a
// "geecache: " of its own).
func (e *Error) Error() string {
	return "geecache: group " + strconv.Quote(e.Group) + ", key " + strconv.Quote(e.Key) + ": " + unprefixed(e.Err)
}

// unprefixed returns err's text without its "geecache: " prefix, if it has
// one (a transport's error does), so that an error that wraps it says
// "geecache: " once.
func unprefixed(err error) string { return strings.TrimPrefix(err.Error(), "geecache: ") }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }
