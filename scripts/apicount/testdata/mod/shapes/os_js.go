//go:build js

package shapes

// Platform is declared once per GOOS, and counts once.
func Platform() string { return "js" }
