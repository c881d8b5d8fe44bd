package shapes

// Pair and its method of a generic receiver: Pair, Pair.Swap (2).
type Pair[K comparable, V any] struct {
	K K
	V V
}

func (p Pair[K, V]) Swap() Pair[K, V] { return p }
