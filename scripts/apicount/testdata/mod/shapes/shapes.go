// Package shapes is a fixture of apicount's test: 11 exported names.
package shapes

// Exported top-level names: Shape, Area, Unit, Max, Min (5).
type Shape interface{ Area() float64 }

func Area(s Shape) float64 { return s.Area() }

const Unit, hidden = 1, 2

var (
	Max = 10
	Min = 0
	low = -1
)

// Square and its exported methods: Square, Square.Area, Square.Scale (3).
type Square struct{ Side float64 }

func (s Square) Area() float64 { return s.Side * s.Side }

func (s *Square) Scale(f float64) { s.Side *= f }

func (s Square) grow() {}

// Methods of an unexported type do not count.
type circle struct{}

func (circle) Area() float64 { return 3 }

func newCircle() circle { return circle{} }
