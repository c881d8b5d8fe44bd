package getter

import (
	"context"
	"maps"
)

// Map returns a Getter that serves the values of m, and ErrNotFound for any
// other key. It copies m, so later changes to m are not seen. It is meant
// for tests, examples and small static data sets.
func Map(m map[string]string) Getter {
	data := maps.Clone(m)
	return Func(func(ctx context.Context, key string) ([]byte, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		v, ok := data[key]
		if !ok {
			return nil, ErrNotFound
		}
		return []byte(v), nil
	})
}
